import { z } from 'zod';
import type { TurnFilters } from '../episodic/contract';
import type { AccessCount } from '../infra/access-count';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

/**
 * Semantic memory: entities (with aliases), facts (with confidence, provenance and a
 * validity window) and typed relationships between entities, all owned by one user.
 *
 * History is never overwritten: a correction or a retraction closes the old fact
 * (`valid_to`) and keeps it; a replaced relationship is closed the same way. Reads return
 * only what is valid now unless they say otherwise (timelines show everything).
 *
 * The `AgentMemory` facade validates inputs with the schemas below (bad input ->
 * ValidationError, nothing written), computes embeddings and writes the audit log; the
 * store receives validated, embedded inputs and scopes every query to `userId`. An id that
 * belongs to another user behaves exactly like an id that does not exist.
 */

// ---------------------------------------------------------------------------------------
// Shared field schemas

/** Turn ids are `<conversationId>:<index>` (see episodic `turnId`). */
export const TurnIdSchema = z
  .string()
  .max(150)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]*:\d+$/, 'must be a turn id "<conversationId>:<index>"');

const Iso = z.iso.datetime({ offset: true });
const Confidence = z.number().min(0).max(1);
const PropertyValue = z.union([z.string().max(2_000), z.number(), z.boolean()]);
/** Small scalar maps stored as JSON on nodes and relationships. */
export const PropertiesSchema = z
  .record(z.string().min(1).max(100), PropertyValue)
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 properties');
const EmbeddingSchema = z.array(z.number()).min(1).max(8192);

/**
 * Entity types. Lower-case words; the listed ones are what the extractors produce, others
 * are accepted. `other` means "type unknown": it matches any type during resolution.
 */
export const KNOWN_ENTITY_TYPES = ['person', 'place', 'organization', 'project', 'product', 'tool', 'concept', 'event', 'other'] as const;
export const EntityTypeSchema = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z][a-z0-9_]*$/, 'must be a lower-case word such as person, place, organization, project, concept, other')
  .default('other');

/** When a fact holds relative to when it was said. */
export const TemporalTagSchema = z.enum(['current', 'past', 'future']);
export type TemporalTag = z.output<typeof TemporalTagSchema>;

/** Calibrated certainty labels (explicit 0.95, implied 0.85, inferred 0.70, uncertain 0.50). */
export const CertaintySchema = z.enum(['explicit', 'implied', 'inferred', 'uncertain']);
export type Certainty = z.output<typeof CertaintySchema>;
export const CERTAINTY_CONFIDENCE: Readonly<Record<Certainty, number>> = { explicit: 0.95, implied: 0.85, inferred: 0.7, uncertain: 0.5 };

/** Fact predicates ("works_at", "lives_in", "likes"): lower snake case. */
export const PredicateSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z][a-z0-9_]*$/, 'must be lower_snake_case, e.g. works_at');

/** The seven typed relationships of the spec. Custom ones are any other UPPER_SNAKE name. */
export const STANDARD_RELATIONSHIP_TYPES = ['RELATED_TO', 'PART_OF', 'LOCATED_IN', 'WORKS_FOR', 'KNOWS', 'CREATED_BY', 'REFERENCES'] as const;
/** Structural relationship names that entity-to-entity relationships may not use. */
export const RESERVED_RELATIONSHIP_TYPES = [
  'ABOUT', 'DERIVED_FROM', 'SUPERSEDES', 'PROMOTED_FROM', 'CONTRADICTS', 'HAS_ENTITY', 'HAS_FACT', 'HAS_GOAL', 'HAS_CONVERSATION',
  'HAS_TURN', 'FOLLOWED_BY', 'MENTIONS', 'SUBGOAL_OF', 'BLOCKED_BY', 'USES_TOOL', 'SUCCEEDED_IN', 'FAILED_IN', 'USED_TOOL', 'INVOKED',
] as const;
/**
 * A relationship type: UPPER_SNAKE_CASE, 2-50 characters, not a reserved structural name.
 * Only a name that passed this schema ever reaches Cypher (as a dynamic type parameter).
 */
export const RelationshipTypeSchema = z
  .string()
  .regex(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, 'must be UPPER_SNAKE_CASE, e.g. WORKS_FOR')
  .min(2)
  .max(50)
  .refine((t) => !(RESERVED_RELATIONSHIP_TYPES as readonly string[]).includes(t), 'is a reserved structural relationship name');

// ---------------------------------------------------------------------------------------
// Facade input schemas (validated by AgentMemory)

export const EntityInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    /** Canonical display name ("Vitaly Petrov"). */
    name: z.string().trim().min(1).max(200),
    type: EntityTypeSchema,
    /** Other names for the same thing ("Vitya", "my boss"); merged into the stored list. */
    aliases: z.array(z.string().trim().min(1).max(200)).max(50).default([]),
    description: z.string().max(5_000).optional(),
    properties: PropertiesSchema.optional(),
    salience: Confidence.optional(),
    /** Update exactly this entity (must be the caller's) instead of resolving by name. */
    entityId: IdSchema.optional(),
    /** Precomputed embedding (skips the embedder); must have the embedder's dimension. */
    embedding: EmbeddingSchema.optional(),
    /** The turn that mentioned it; `(:Conversation)-[:MENTIONS]->(:Entity)` is added for its conversation. */
    sourceTurnId: TurnIdSchema.optional(),
  })
  .strict();
export type EntityInput = z.input<typeof EntityInputSchema>;

export const FactInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    /** Caller-chosen id makes the write idempotent (a repeat returns the stored fact, `created: false`). */
    id: IdSchema.optional(),
    claim: z.string().trim().min(1).max(5_000),
    /** Defaults from `certainty` when given, else 0.95 (stated explicitly). */
    confidence: Confidence.optional(),
    certainty: CertaintySchema.optional(),
    /** Who asserted it: "user", "agent", "extraction:rules", "extraction:openai", ... */
    source: z.string().min(1).max(100).default('user'),
    /** Provenance; each turn must be the caller's. The first is `source_turn_id`. */
    sourceTurnId: TurnIdSchema.optional(),
    sourceTurnIds: z.array(TurnIdSchema).max(100).optional(),
    temporal: TemporalTagSchema.default('current'),
    validFrom: Iso.optional(),
    validTo: Iso.optional(),
    /** Entities the fact is about (`ABOUT`); each must be the caller's. */
    aboutEntityIds: z.array(IdSchema).max(20).default([]),
    /** What the claim says about its entity ("works_at"); only facts with the same entity and predicate can retire each other. */
    predicate: PredicateSchema.optional(),
    /** Facts this one replaces (closed and linked with SUPERSEDES, in the same transaction). */
    supersedes: z.array(IdSchema).max(20).default([]),
    /** Facts this one conflicts with but does not retire (`CONTRADICTS`, for review). */
    contradicts: z.array(IdSchema).max(20).default([]),
    needsReview: z.boolean().default(false),
    salience: Confidence.optional(),
    properties: PropertiesSchema.optional(),
    embedding: EmbeddingSchema.optional(),
  })
  .strict()
  .refine((f) => !f.validFrom || !f.validTo || f.validFrom <= f.validTo, 'validFrom must not be after validTo');
export type FactInput = z.input<typeof FactInputSchema>;

export const RelationshipInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    sourceId: IdSchema,
    targetId: IdSchema,
    type: RelationshipTypeSchema,
    confidence: Confidence.default(0.9),
    properties: PropertiesSchema.optional(),
    validFrom: Iso.optional(),
    validTo: Iso.optional(),
    sourceTurnId: TurnIdSchema.optional(),
    /**
     * Close every other open relationship of this type from the source first (for
     * single-valued relations: a new employer ends the old WORKS_FOR, keeping history).
     */
    replaceExisting: z.boolean().default(false),
  })
  .strict();
export type RelationshipInput = z.input<typeof RelationshipInputSchema>;

export const CorrectFactInputSchema = z
  .object({
    userId: UserIdSchema,
    factId: IdSchema,
    claim: z.string().trim().min(1).max(5_000),
    confidence: Confidence.optional(),
    source: z.string().min(1).max(100).default('correction'),
    sourceTurnId: TurnIdSchema.optional(),
    reason: z.string().max(1_000).optional(),
    embedding: EmbeddingSchema.optional(),
  })
  .strict();
export type CorrectFactInput = z.input<typeof CorrectFactInputSchema>;

/** Promotion thresholds (seed 003): a fact moves to `_global` only past every one. */
export interface PromotionThresholds {
  minConfidence: number;
  minAccessCount: number;
  minConversations: number;
}
export const DEFAULT_PROMOTION_THRESHOLDS: Readonly<PromotionThresholds> = { minConfidence: 0.85, minAccessCount: 5, minConversations: 2 };

export const PromoteInputSchema = z
  .object({
    userId: UserIdSchema,
    factId: IdSchema,
    reason: z.string().min(1).max(1_000),
    /** Overrides the configured thresholds for this call (recorded in the audit row). */
    thresholds: z.object({ minConfidence: Confidence, minAccessCount: z.number().int().min(0), minConversations: z.number().int().min(0) }).strict().optional(),
    /** Promote even below the thresholds (an explicit user/agent decision); still audited with them. */
    force: z.boolean().default(false),
  })
  .strict();
export type PromoteInput = z.input<typeof PromoteInputSchema>;

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

export interface NewEntity {
  userId: string;
  channel: string;
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

export interface NewFact {
  userId: string;
  channel: string;
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
  embedding?: number[];
}

export interface NewRelationship {
  userId: string;
  channel: string;
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

export interface SemanticQuery {
  userId: string;
  /** Channels to cover (the facade adds `_global`). */
  channels: string[];
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
   * Creates or merges an entity. Resolution, in order, among the user's live entities of
   * `channel` and `_global`: (1) `entityId`; (2) an entity one of whose normalized names
   * (canonical or alias) equals a normalized name of the input, with a compatible type
   * (equal, or either is `other`), canonical-name matches first; (3) an entity of the
   * same type whose embedding has cosine similarity >= `embeddingThreshold`. A match gets
   * the new aliases (the input name too, when it differs), a longer description, merged
   * properties, mention_count + 1. Otherwise a new entity is created. Runs under a per-user
   * write lock so two concurrent upserts of one new name create one entity.
   * Throws NotFoundError when `entityId` is not the caller's.
   */
  upsertEntity(entity: NewEntity, opts: ResolutionOptions): Promise<UpsertEntityResult>;
  /** The live entity, or null (missing, soft-deleted, or another user's). */
  getEntity(userId: string, entityId: string): Promise<Entity | null>;
  /** Entities whose canonical name or an alias normalizes to `name` (no embedding). */
  findEntitiesByName(userId: string, name: string, channels: string[]): Promise<Entity[]>;
  /** Soft delete: sets valid_to; facts and relationships stay for the timeline. NotFoundError if not the caller's. */
  deleteEntity(userId: string, entityId: string): Promise<Entity>;

  /**
   * Stores a fact with ABOUT, DERIVED_FROM (turns of other users are refused), SUPERSEDES
   * (each superseded fact is closed: valid_to = this fact's valid_from, status superseded)
   * and CONTRADICTS links, in one transaction. Idempotent on `id`. Throws NotFoundError
   * for an entity, turn or fact id that is not the caller's, before writing anything.
   */
  storeFact(fact: NewFact): Promise<StoreFactResult>;
  /**
   * Like storeFact, but an active fact of the same user and channel with the same
   * normalized claim (and predicate) is reinforced instead of duplicated: confidence
   * becomes the max, access_count + 1, new provenance and ABOUT links are added.
   */
  learnFact(fact: NewFact): Promise<StoreFactResult>;
  getFact(userId: string, factId: string): Promise<Fact | null>;
  findFacts(q: FactQuery): Promise<Fact[]>;
  /**
   * Replaces a fact: a new fact (same channel, predicate, ABOUT links, temporal tag) that
   * SUPERSEDES the old one; the old one is closed, never deleted. Throws NotFoundError
   * for another user's fact and ValidationError when the fact is no longer active.
   */
  correctFact(userId: string, factId: string, replacement: Omit<NewFact, 'userId' | 'channel' | 'aboutEntityIds' | 'supersedes' | 'contradicts' | 'temporal' | 'validFrom'> & { reason?: string }): Promise<{ oldFact: Fact; newFact: Fact }>;
  /** Marks a fact protected (exempt from decay and cleanup). Idempotent. NotFoundError if not the caller's. */
  confirmFact(userId: string, factId: string): Promise<Fact>;
  /** Soft delete: valid_to = now, status retracted. NotFoundError if not the caller's. */
  retractFact(userId: string, factId: string, reason?: string): Promise<Fact>;

  /**
   * Creates a typed relationship between two of the user's live entities with a validity
   * window. An identical open relationship (same ends, type) is returned unchanged.
   * NotFoundError when an end is not the caller's.
   */
  createRelationship(rel: NewRelationship): Promise<CreateRelationshipResult>;
  /**
   * Closes the open relationships of `type` from `sourceId` to `targetId` (valid_to =
   * now; kept for the timeline). Returns what it closed (empty when none was open).
   * NotFoundError when an end is not the caller's.
   */
  endRelationship(userId: string, sourceId: string, type: string, targetId: string): Promise<Relationship[]>;

  /**
   * Entities reachable from `entityIds` within `depth` (1-3) hops over currently valid
   * typed relationships, in `channels`; at most `limit` entities.
   */
  getEntityGraph(userId: string, entityIds: string[], depth: number, channels: string[], limit: number): Promise<EntityGraph>;
  /**
   * For recall: the entities up to `depth` hops from the user's `rootIds` (which it does not
   * return) and the relationships that reach them; at most `limit` entities, one round trip per hop.
   */
  expandEntities(userId: string, rootIds: string[], depth: number, channels: string[], limit: number): Promise<Omit<EntityGraph, 'facts'>>;
  /** Every fact about the entity and every relationship touching it, closed ones too, oldest first. */
  getEntityTimeline(userId: string, entityId: string, limit: number): Promise<TimelineEntry[]>;

  /** Nearest active facts by embedding; over-fetches to survive the user/channel post-filter. */
  vectorSearchFacts(embedding: number[], q: FactQuery): Promise<ScoredFact[]>;
  /** Nearest live entities by embedding; over-fetches like vectorSearchFacts. */
  vectorSearchEntities(embedding: number[], q: EntityQuery): Promise<ScoredEntity[]>;
  /** BM25 over fact claims (`fact_text_scoped`); active facts only. */
  fullTextSearchFacts(text: string, q: FactQuery): Promise<ScoredFact[]>;
  /** BM25 over entity names, aliases, descriptions (`entity_text_scoped`). */
  fullTextSearchEntities(text: string, q: EntityQuery): Promise<ScoredEntity[]>;

  /** Reinforcement: access_count + 1 and last_accessed = now on the caller's facts/entities. Returns how many were touched. */
  recordAccess(userId: string, ids: { factIds?: string[]; entityIds?: string[] }): Promise<number>;

  /**
   * Promotes a project fact to `_global`: a new `_global` fact with the same claim,
   * ABOUT links and provenance, `(global)-[:PROMOTED_FROM]->(original)`. Only past every
   * threshold unless `force`. Idempotent: a fact already promoted returns the existing
   * global fact with `promoted: false`. NotFoundError if not the caller's.
   */
  promoteToGlobal(userId: string, factId: string, thresholds: PromotionThresholds, force: boolean): Promise<PromotionResult>;
  /**
   * Active, unpromoted project-channel facts of any user that pass every threshold
   * (for the worker's `promote` job), at most `limit`, most confident first.
   */
  findPromotionCandidates(thresholds: PromotionThresholds, limit: number): Promise<Array<{ userId: string; factId: string; channel: string }>>;

  /** Items whose embedding is pending (embedder failed at write time), for a retry. */
  pendingEmbeddings(limit: number): Promise<Array<{ label: 'Entity' | 'Fact'; id: string; text: string }>>;
  setEmbeddings(rows: Array<{ label: 'Entity' | 'Fact'; id: string; embedding: number[] }>): Promise<number>;

  // Recall support (called by src/retrieval).

  /** Whether the user holds any fact, and any entity, in `channels` (index seeks; no scan of the items). */
  holdsKnowledge(userId: string, channels: string[]): Promise<{ fact: boolean; entity: boolean }>;
  /**
   * The ids among `ids` (the user's facts) with a DERIVED_FROM turn matching every given
   * metadata filter; one query, in no particular order.
   */
  factsWithMatchingSource(userId: string, ids: string[], filters: TurnFilters): Promise<string[]>;
  /**
   * The ids among `ids` (the user's entities) that a conversation MENTIONS with a turn
   * matching every given metadata filter; one query, in no particular order.
   */
  entitiesWithMatchingSource(userId: string, ids: string[], filters: TurnFilters): Promise<string[]>;
  /** Adds recall access counts to facts or entities (see AccessCount); a node not owned by the row's user is skipped. Returns the nodes touched. */
  addAccessCounts(kind: 'fact' | 'entity', rows: AccessCount[]): Promise<number>;
}
