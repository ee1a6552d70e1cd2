import type { Certainty, TemporalTag } from './schema';

export * from './schema';
import type { AccessScope } from '../access';
import type { AccessCount } from '../infra/access-count';
import type { TurnFilters } from '../episodic/contract';

/**
 * Semantic memory: entities (with aliases), facts (with confidence, provenance and a
 * validity window) and typed relationships between entities, all owned by one user.
 *
 * History is never overwritten: a correction or a retraction closes the old fact
 * (`valid_to`) and keeps it; a replaced relationship is closed the same way. Reads return
 * only what is valid now unless they say otherwise (timelines show everything).
 *
 * The `AgentMemory` facade validates inputs with the schemas of `schema.ts` (bad input ->
 * ValidationError, nothing written), computes embeddings and writes the audit log; the
 * store receives validated, embedded inputs and the caller's `AccessScope` (built once by the
 * facade) and scopes every query to it: reads cover `scope.channels`, writes go to
 * `scope.channel`. An id that belongs to another user behaves exactly like an id that does not exist.
 */

/** Promotion thresholds (seed 003): a fact moves to `_global` only past every one. */
export interface PromotionThresholds {
  minConfidence: number;
  minAccessCount: number;
  minConversations: number;
}
export const DEFAULT_PROMOTION_THRESHOLDS: Readonly<PromotionThresholds> = { minConfidence: 0.85, minAccessCount: 5, minConversations: 2 };

// ---------------------------------------------------------------------------------------
// Stored shapes (what reads return; never the embedding)

export interface Entity {
  id: string;
  userId: string;
  channel: string;
  name: string;
  type: string;
  aliases: string[];
  /** Normalized name and aliases, the keys resolution matches on. */
  normalizedNames: string[];
  description: string | null;
  properties: Record<string, string | number | boolean>;
  salience: number;
  accessCount: number;
  lastAccessed: string | null;
  /** How many upserts resolved to it. */
  mentionCount: number;
  protected: boolean;
  createdAt: string;
  updatedAt: string;
  validFrom: string;
  /** Set when the entity was soft-deleted. */
  validTo: string | null;
}

/** `active`: valid now; `superseded`: replaced by a correction; `retracted`: soft-deleted. */
export type FactStatus = 'active' | 'superseded' | 'retracted';

export interface Fact {
  id: string;
  userId: string;
  channel: string;
  claim: string;
  predicate: string | null;
  confidence: number;
  certainty: Certainty | null;
  source: string;
  sourceTurnId: string | null;
  temporal: TemporalTag;
  validFrom: string;
  validTo: string | null;
  status: FactStatus;
  /** Confirmed by the user: exempt from decay and cleanup. */
  protected: boolean;
  needsReview: boolean;
  salience: number;
  accessCount: number;
  lastAccessed: string | null;
  createdAt: string;
  aboutEntityIds: string[];
  supersededBy: string | null;
  /** For a `_global` fact made by promotion: the project fact it came from. */
  promotedFrom: string | null;
  properties: Record<string, string | number | boolean>;
  /** The tool connection the fact is scoped to (seed 000 §3.D); null: a user-level fact. */
  connectionId: string | null;
  /** False while the embedding is pending (the embedder failed at write time). */
  embedded: boolean;
}

export interface Relationship {
  id: string;
  type: string;
  sourceId: string;
  targetId: string;
  userId: string;
  channel: string;
  confidence: number;
  properties: Record<string, string | number | boolean>;
  sourceTurnId: string | null;
  validFrom: string;
  validTo: string | null;
  createdAt: string;
}

export interface UpsertEntityResult {
  entity: Entity;
  created: boolean;
  /** How an existing entity was found: by id, canonical name, alias, or embedding similarity. */
  matchedBy: 'id' | 'name' | 'alias' | 'embedding' | null;
}

export interface StoreFactResult {
  fact: Fact;
  created: boolean;
  /** learnFact only: an identical active claim existed and was reinforced instead. */
  reinforced: boolean;
  /** Ids of facts this write closed (SUPERSEDES). */
  superseded: string[];
}

export interface CreateRelationshipResult {
  relationship: Relationship;
  /** False when an identical open relationship existed (then it is returned unchanged). */
  created: boolean;
  /** Ids of relationships closed by `replaceExisting`. */
  closed: string[];
}

export interface EntityGraph {
  entities: Entity[];
  /** Relationships valid now between the returned entities. */
  relationships: Relationship[];
  /** Active facts about the requested (root) entities, most confident first. */
  facts: Fact[];
}

export interface TimelineEntry {
  kind: 'fact' | 'relationship';
  validFrom: string;
  validTo: string | null;
  fact?: Fact;
  relationship?: Relationship;
}

export interface ScoredFact {
  fact: Fact;
  score: number;
}
export interface ScoredEntity {
  entity: Entity;
  score: number;
}

/**
 * A fact as recall's searches return it (`factCandidates`): what fusion, the superseded-fact
 * rule and time narrowing read; the kept ones are then read whole (`recalledFacts`).
 */
export type FactCandidate = Pick<Fact, 'id' | 'status' | 'supersededBy' | 'validFrom' | 'properties'>;
/** An entity as recall's searches return it (`entityCandidates`); the kept ones are read whole by `recalledEntities`. */
export type EntityCandidate = Pick<Entity, 'id' | 'updatedAt'>;
/** One kind's full-text and vector candidates for recall, each list best first. */
export interface Candidates<T> {
  fulltext: Array<{ item: T; score: number }>;
  vector: Array<{ item: T; score: number }>;
}

export interface PromotionResult {
  promoted: boolean;
  /** The `_global` fact (new, or the one made by an earlier promotion). */
  globalFact: Fact | null;
  /** The channel of the fact that was (or would have been) promoted. */
  sourceChannel: string;
  /** The measures compared with the thresholds. */
  confidence: number;
  accessCount: number;
  conversationCount: number;
  thresholds: PromotionThresholds;
  /** Why it was not promoted (below which thresholds, or already global). */
  skippedBecause: string[];
}

// ---------------------------------------------------------------------------------------
// Store inputs (validated and embedded by the facade)

/** An entity to write; its user and channel are the scope's. */
export interface NewEntity {
  name: string;
  type: string;
  aliases: string[];
  description?: string;
  properties?: Record<string, string | number | boolean>;
  salience?: number;
  entityId?: string;
  sourceTurnId?: string;
  embedding?: number[];
}

/** A fact to write; its user and channel are the scope's. */
export interface NewFact {
  id?: string;
  claim: string;
  confidence: number;
  certainty?: Certainty;
  source: string;
  sourceTurnIds: string[];
  temporal: TemporalTag;
  validFrom: string;
  validTo?: string;
  aboutEntityIds: string[];
  predicate?: string;
  supersedes: string[];
  contradicts: string[];
  needsReview: boolean;
  salience?: number;
  properties?: Record<string, string | number | boolean>;
  /** Scopes the fact to one tool connection (recall returns it only while that connection is active). */
  connectionId?: string;
  embedding?: number[];
}

/** A relationship to write; its user and channel are the scope's. */
export interface NewRelationship {
  sourceId: string;
  targetId: string;
  type: string;
  confidence: number;
  properties?: Record<string, string | number | boolean>;
  validFrom: string;
  validTo?: string;
  sourceTurnId?: string;
  replaceExisting: boolean;
}

/** A read's options; whose items and which channels come from the scope. */
export interface SemanticQuery {
  limit: number;
}

export interface FactQuery extends SemanticQuery {
  minConfidence?: number;
  /** Also return superseded / retracted facts. */
  includeInactive?: boolean;
  entityId?: string;
  predicate?: string;
}

export interface EntityQuery extends SemanticQuery {
  types?: string[];
}

/** Entity resolution settings. */
export interface ResolutionOptions {
  /** Cosine similarity above which a same-type entity with no name match is the same entity. */
  embeddingThreshold: number;
}

/**
 * The semantic store (Neo4j). Nodes: `(:Entity)`, `(:Fact)`; relationships
 * `(:User)-[:HAS_ENTITY]->(:Entity)`, `(:User)-[:HAS_FACT]->(:Fact)`, `(:Fact)-[:ABOUT]->(:Entity)`,
 * `(:Fact)-[:DERIVED_FROM]->(:Turn)`, `(:Fact)-[:SUPERSEDES]->(:Fact)`,
 * `(:Fact)-[:PROMOTED_FROM]->(:Fact)`, `(:Fact)-[:CONTRADICTS]->(:Fact)`,
 * `(:Conversation)-[:MENTIONS]->(:Entity)`, and typed entity relationships.
 */
export interface SemanticStore {
  /**
   * Creates or merges an entity in `scope.channel`. Resolution, in order, among the user's
   * live entities of `scope.channels` (the write channel and `_global`): (1) `entityId`; (2) an entity one of whose normalized names
   * (canonical or alias) equals a normalized name of the input, with a compatible type
   * (equal, or either is `other`), canonical-name matches first; (3) an entity of the
   * same type whose embedding has cosine similarity >= `embeddingThreshold`. A match gets
   * the new aliases (the input name too, when it differs), a longer description, merged
   * properties, mention_count + 1. Otherwise a new entity is created. Runs under a per-user
   * write lock so two concurrent upserts of one new name create one entity.
   * Throws NotFoundError when `entityId` is not the caller's.
   */
  upsertEntity(scope: AccessScope, entity: NewEntity, opts: ResolutionOptions): Promise<UpsertEntityResult>;
  /** The live entity, or null (missing, soft-deleted, or another user's). */
  getEntity(scope: AccessScope, entityId: string): Promise<Entity | null>;
  /** Live entities of `scope.channels` whose canonical name or an alias normalizes to `name` (no embedding), most mentioned first. */
  findEntitiesByName(scope: AccessScope, name: string): Promise<Entity[]>;
  /** Soft delete: sets valid_to; facts and relationships stay for the timeline. NotFoundError if not the caller's. */
  deleteEntity(scope: AccessScope, entityId: string): Promise<Entity>;

  /**
   * Stores a fact in `scope.channel` with ABOUT, DERIVED_FROM (turns of other users are refused), SUPERSEDES
   * (each superseded fact is closed: valid_to = this fact's valid_from, status superseded)
   * and CONTRADICTS links, in one transaction. Idempotent on `id`. Throws NotFoundError
   * for an entity, turn or fact id that is not the caller's, before writing anything.
   */
  storeFact(scope: AccessScope, fact: NewFact): Promise<StoreFactResult>;
  /**
   * Like storeFact, but an active fact of the same user and channel with the same
   * normalized claim (and predicate) is reinforced instead of duplicated: confidence
   * becomes the max, access_count + 1, new provenance and ABOUT links are added.
   */
  learnFact(scope: AccessScope, fact: NewFact): Promise<StoreFactResult>;
  /** The fact (any status), or null when it is missing or another user's. */
  getFact(scope: AccessScope, factId: string): Promise<Fact | null>;
  /** Facts of `scope.channels` matching `q`, newest valid_from first, at most `q.limit`. */
  findFacts(scope: AccessScope, q: FactQuery): Promise<Fact[]>;
  /**
   * Replaces a fact: a new fact (same channel, predicate, ABOUT links, temporal tag) that
   * SUPERSEDES the old one; the old one is closed, never deleted. Throws NotFoundError
   * for another user's fact and ValidationError when the fact is no longer active.
   */
  correctFact(
    scope: AccessScope,
    factId: string,
    replacement: Omit<NewFact, 'aboutEntityIds' | 'supersedes' | 'contradicts' | 'temporal' | 'validFrom'> & { reason?: string },
  ): Promise<{ oldFact: Fact; newFact: Fact }>;
  /** Marks a fact protected (exempt from decay and cleanup). Idempotent. NotFoundError if not the caller's. */
  confirmFact(scope: AccessScope, factId: string): Promise<Fact>;
  /** Soft delete: valid_to = now, status retracted (its `_global` copy too). NotFoundError if not the caller's. */
  retractFact(scope: AccessScope, factId: string, reason?: string): Promise<Fact>;
  /** Deletes the user's facts by id, with their `_global` copies (what they were learned from was deleted); returns how many. */
  deleteFacts(scope: AccessScope, factIds: readonly string[]): Promise<number>;

  /**
   * Creates a typed relationship in `scope.channel` between two of the user's live entities with a validity
   * window. An identical open relationship (same ends, type) is returned unchanged.
   * NotFoundError when an end is not the caller's.
   */
  createRelationship(scope: AccessScope, rel: NewRelationship): Promise<CreateRelationshipResult>;
  /**
   * Closes the open relationships of `type` from `sourceId` to `targetId` (valid_to =
   * now; kept for the timeline). Returns what it closed (empty when none was open).
   * NotFoundError when an end is not the caller's.
   */
  endRelationship(scope: AccessScope, sourceId: string, type: string, targetId: string): Promise<Relationship[]>;

  /**
   * Entities reachable from `entityIds` within `depth` (1-3) hops over currently valid
   * typed relationships, in `scope.channels`; at most `limit` entities.
   */
  getEntityGraph(scope: AccessScope, entityIds: string[], depth: number, limit: number): Promise<EntityGraph>;
  /**
   * For recall: the entities of `scope.channels` up to `depth` hops from the user's `rootIds`
   * (which it does not return) and the relationships that reach them; at most `limit`
   * entities, one round trip per hop.
   */
  expandEntities(scope: AccessScope, rootIds: string[], depth: number, limit: number): Promise<Omit<EntityGraph, 'facts'>>;
  /** Every fact about the entity and every relationship touching it, closed ones too, oldest first. */
  getEntityTimeline(scope: AccessScope, entityId: string, limit: number): Promise<TimelineEntry[]>;

  /** Nearest active facts of `scope.channels` by embedding, best first; over-fetches to survive the user/channel post-filter. */
  vectorSearchFacts(scope: AccessScope, embedding: number[], q: FactQuery): Promise<ScoredFact[]>;
  /** Nearest live entities of `scope.channels` by embedding, best first; over-fetches like vectorSearchFacts. */
  vectorSearchEntities(scope: AccessScope, embedding: number[], q: EntityQuery): Promise<ScoredEntity[]>;
  /** BM25 over fact claims (`fact_text_scoped`, requiring the scope's read keys); active facts only, best first. */
  fullTextSearchFacts(scope: AccessScope, text: string, q: FactQuery): Promise<ScoredFact[]>;
  /** BM25 over entity names, aliases, descriptions (`entity_text_scoped`, requiring the scope's read keys), best first. */
  fullTextSearchEntities(scope: AccessScope, text: string, q: EntityQuery): Promise<ScoredEntity[]>;

  /** Reinforcement: access_count + 1 and last_accessed = now on the caller's facts/entities. Returns how many were touched. */
  recordAccess(scope: AccessScope, ids: { factIds?: string[]; entityIds?: string[] }): Promise<number>;

  /**
   * Promotes a project fact to `_global`: a new `_global` fact with the same claim,
   * ABOUT links and provenance, `(global)-[:PROMOTED_FROM]->(original)`. Only past every
   * threshold unless `force`. Idempotent: a fact already promoted returns the existing
   * global fact with `promoted: false`. NotFoundError if not the caller's.
   */
  promoteToGlobal(scope: AccessScope, factId: string, thresholds: PromotionThresholds, force: boolean): Promise<PromotionResult>;
  /**
   * Active, unpromoted project-channel facts of any user that pass every threshold
   * (for the worker's `promote` job), at most `limit`, most confident first.
   */
  findPromotionCandidates(thresholds: PromotionThresholds, limit: number): Promise<Array<{ userId: string; factId: string; channel: string }>>;

  /** Items whose embedding is pending (embedder failed at write time), for a retry. */
  pendingEmbeddings(limit: number): Promise<Array<{ label: 'Entity' | 'Fact'; id: string; text: string }>>;
  setEmbeddings(rows: Array<{ label: 'Entity' | 'Fact'; id: string; embedding: number[] }>): Promise<number>;

  // Recall support (called by src/retrieval).

  /**
   * The ids among `ids` (the user's facts) with a DERIVED_FROM turn matching every given
   * metadata filter; one query, in no particular order.
   */
  factsWithMatchingSource(scope: AccessScope, ids: string[], filters: TurnFilters): Promise<string[]>;
  /**
   * The ids among `ids` (the user's entities) that a conversation MENTIONS with a turn
   * matching every given metadata filter; one query, in no particular order.
   */
  entitiesWithMatchingSource(scope: AccessScope, ids: string[], filters: TurnFilters): Promise<string[]>;
  /**
   * Recall's searches of facts, as `fullTextSearchFacts` over `text` and (with an embedding)
   * `vectorSearchFacts` find them, both at once, returning candidates rather than whole facts:
   * recall ranks and narrows them, then reads the ones it keeps with `recalledFacts`.
   */
  factCandidates(scope: AccessScope, text: string, embedding: number[] | undefined, q: FactQuery): Promise<Candidates<FactCandidate>>;
  /** The facts among `ids` the scope may read (any status), whole, in the order of `ids`; one query. A fact gone since is left out. */
  recalledFacts(scope: AccessScope, ids: string[]): Promise<Fact[]>;
  /** Recall's searches of live entities, as `factCandidates` for facts. */
  entityCandidates(scope: AccessScope, text: string, embedding: number[] | undefined, q: EntityQuery): Promise<Candidates<EntityCandidate>>;
  /** The live entities among `ids` the scope may read, whole, in the order of `ids`; one query. */
  recalledEntities(scope: AccessScope, ids: string[]): Promise<Entity[]>;
  /** Adds recall access counts to facts or entities (see AccessCount); a node not owned by the row's user is skipped. Returns the nodes touched. */
  addAccessCounts(kind: 'fact' | 'entity', rows: AccessCount[]): Promise<number>;
}

// ------------------------------------------------------------------ upkeep (worker jobs)

/** Which users a maintenance batch covers: the given ones, or everyone when null. */
export type UserFilter = readonly string[] | null;

/** Two active facts of one user, channel, predicate and entity that may say the same thing. */
export interface DuplicateFactPair {
  aId: string;
  bId: string;
  aProps: string | null;
  bProps: string | null;
  aProtected: boolean;
  bProtected: boolean;
  aConfidence: number;
  bConfidence: number;
  aCreated: string;
  bCreated: string;
}

/**
 * The cross-user upkeep of entities and facts that the worker's decay and cleanup jobs
 * run, and the one writer of their access counts. Every batch is its own transaction and
 * idempotent at a given `now`, so an interrupted job resumes cleanly.
 */
export interface SemanticUpkeep {
  /**
   * Decays up to `limit` live, unprotected entities not accessed for a day: salience x
   * rate^days since max(last access, last decay); stamps `decayed_at`. Returns how many
   * it touched (fewer than `limit`: nothing is left to decay at `now`).
   */
  decayEntities(p: { now: string; rate: number; limit: number; userIds: UserFilter }): Promise<number>;
  /** Like decayEntities for active facts; inferred facts also lose confidence at `weeklyRate` per week. */
  decayFacts(p: { now: string; rate: number; weeklyRate: number; limit: number; userIds: UserFilter }): Promise<number>;
  /** Up to `limit` pairs of active facts about one entity with the same claim key or embeddings at least `threshold` similar. */
  duplicateFactPairs(p: { threshold: number; limit: number; userIds: UserFilter }): Promise<DuplicateFactPair[]>;
  /**
   * Folds fact `dupId` into `keepId` (access and mention counts, the higher confidence,
   * DERIVED_FROM and ABOUT links) and closes it as superseded by it. 1 when merged, 0
   * when either is no longer active or they belong to different users.
   */
  mergeDuplicateFacts(keepId: string, dupId: string, now: string): Promise<number>;
}

// ------------------------------------------------------------------ curation (the studio)

/** A listing's filters (every channel of the user unless `channel` is given). */
export interface EntityPage {
  channel?: string;
  type?: string;
  /** A part of the name or an alias, case-insensitive. */
  q?: string;
  includeDeleted: boolean;
  sort: 'name' | 'recent' | 'mentions';
  offset: number;
  limit: number;
}

export interface FactPage {
  channel?: string;
  /** current: active; past: superseded or retracted. */
  status: 'current' | 'past' | 'all';
  entityId?: string;
  predicate?: string;
  sort: 'recent' | 'confidence';
  offset: number;
  limit: number;
}

/** What a merge moved onto the kept entity. */
export interface MergeEntitiesResult {
  entity: Entity;
  merged: Entity;
  moved: { facts: number; relationships: number; mentions: number };
}

/**
 * What a person does to one user's knowledge from the studio: list entities and facts page by
 * page, restore a retracted fact, merge two entities, and count what a deletion of turns
 * leaves behind. Scoped to `scope.userId`; another user's ids behave as missing.
 */
export interface KnowledgeCuration {
  /** One page of entities (at most `limit`, from `offset`), in the requested order. */
  listEntities(scope: AccessScope, q: EntityPage): Promise<Entity[]>;
  /** One page of facts (at most `limit`, from `offset`), newest or most confident first. */
  listFacts(scope: AccessScope, q: FactPage): Promise<Fact[]>;
  /**
   * Makes a retracted fact active again (valid_to cleared, the retraction reason kept as
   * `restore_of`). Throws NotFoundError when it is not the user's, ValidationError when it is
   * not retracted (a superseded fact is corrected, not restored).
   */
  restoreFact(scope: AccessScope, factId: string): Promise<Fact>;
  /**
   * Folds `mergeId` into `keepId` in one transaction: its name and aliases become aliases of
   * the kept entity, the facts about it, its typed relationships and the conversations that
   * mention it move over, then it is soft-deleted (`merged_into`). NotFoundError when either
   * is not a live entity of the user.
   */
  mergeEntities(scope: AccessScope, keepId: string, mergeId: string): Promise<MergeEntitiesResult>;
}
