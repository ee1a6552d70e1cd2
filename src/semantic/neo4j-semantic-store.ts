import { randomUUID } from 'node:crypto';
import type { ManagedTransaction, RecordShape } from 'neo4j-driver';
import { NotFoundError, UserBeingErasedError, ValidationError } from '../errors';
import { rows, type CypherRunner } from '../infra/neo4j';
import { indexOrFallback, SmallOwners } from '../infra/vector-scan';
import { ANY_TIME, heldSearchCypher, OwnerVectors, type HeldFilter, type HeldLabel, type HeldRanking, type HeldVectorsOptions, type HoldMode } from '../infra/owner-vectors';
import type { TurnFilters } from '../episodic/contract';
import { TURN_MATCHES_FILTERS, turnFilterParams } from '../episodic/neo4j-episodic-store';
import { addAccessCountsCypher, type AccessCount } from '../infra/access-count';
import { GLOBAL_CHANNEL } from '../schemas';
import type {
  CreateRelationshipResult,
  Candidates,
  Entity,
  EntityCandidate,
  EntityGraph,
  EntityQuery,
  Fact,
  FactCandidate,
  FactQuery,
  NewEntity,
  NewFact,
  NewRelationship,
  PromotionResult,
  PromotionThresholds,
  Relationship,
  ResolutionOptions,
  ScoredEntity,
  ScoredFact,
  SemanticStore,
  StoreFactResult,
  TimelineEntry,
  UpsertEntityResult,
} from './contract';
import { aliasesText, mergeAliases, mergedType, nameKeys, normalizeClaim, normalizeName, pickNameMatch, type ResolutionCandidate } from './names';
import { luceneQuery, scopedFulltextK, scopedLuceneQuery } from '../infra/fulltext-scope';
import { withChannels, writeKey, type AccessScope } from '../access';

const TAG = (op: string) => ({ subsystem: 'semantic', op });

/**
 * Cypher expressions over $userId, $channels: whether the user holds any fact / entity in those
 * channels (index seeks on (user_id, channel)). Recall's knowledge presence asks them with the
 * other stores' in one query.
 */
export const FACT_PRESENCE = 'EXISTS { MATCH (n:Fact) WHERE n.user_id = $userId AND n.channel IN $channels }';
export const ENTITY_PRESENCE = 'EXISTS { MATCH (n:Entity) WHERE n.user_id = $userId AND n.channel IN $channels }';

// Projection of an Entity node into the row every read returns (no embedding).
export const ENTITY = `{ id: e.id, userId: e.user_id, channel: e.channel, name: e.name, type: e.type, aliases: coalesce(e.aliases, []),
  normalizedNames: coalesce(e.normalized_names, []), description: e.description, propertiesJson: e.properties_json,
  salience: e.salience, accessCount: e.access_count, lastAccessed: toString(e.last_accessed), mentionCount: e.mention_count,
  protected: coalesce(e.protected, false), createdAt: toString(e.created_at), updatedAt: toString(e.updated_at),
  validFrom: toString(e.valid_from), validTo: toString(e.valid_to) }`;

// Projection of a Fact node `f`; needs `about` (list of entity ids) in scope.
export const FACT = `{ id: f.id, userId: f.user_id, channel: f.channel, claim: f.claim, predicate: f.predicate, confidence: f.confidence,
  certainty: f.certainty, source: f.source, sourceTurnId: f.source_turn_id, temporal: f.temporal, validFrom: toString(f.valid_from),
  validTo: toString(f.valid_to), status: f.status, protected: coalesce(f.protected, false), needsReview: coalesce(f.needs_review, false),
  salience: f.salience, accessCount: f.access_count, lastAccessed: toString(f.last_accessed), createdAt: toString(f.created_at),
  aboutEntityIds: about, supersededBy: f.superseded_by, promotedFrom: f.promoted_from, propertiesJson: f.properties_json,
  connectionId: f.connection_id, embedded: f.embedding IS NOT NULL }`;
// Fact `f` is visible to the active connections $connections (seed 000 §3.D): null = no
// connection scoping; else facts without a connection plus those of the listed ones.
const FACT_CONNECTIONS = `($connections IS NULL OR f.connection_id IS NULL OR f.connection_id IN $connections)`;
export const WITH_ABOUT = `OPTIONAL MATCH (f)-[:ABOUT]->(ae:Entity) WITH f, collect(ae.id) AS about`;

// Projection of a typed relationship `r` from `a` to `b`.
/** Projection of a relationship `r` from `source` to `target` (Cypher expressions). */
const relOf = (source: string, target: string) => `{ id: r.id, type: type(r), sourceId: ${source}.id, targetId: ${target}.id, userId: r.user_id,
  channel: r.channel, confidence: r.confidence, propertiesJson: r.properties_json, sourceTurnId: r.source_turn_id,
  validFrom: toString(r.valid_from), validTo: toString(r.valid_to), createdAt: toString(r.created_at) }`;
const REL = relOf('a', 'b');

// $userId -> {} ; takes the user's write lock (a real property change) so entity resolution
// and creation of one user run one at a time and never create the same new name twice.
const LOCK_USER = `MERGE (u:User {id: $userId}) SET u.semantic_seq = coalesce(u.semantic_seq, 0) + 1`;

// $userId, $entityId -> {entity, normalizedName}: a live entity of the user
const GET_ENTITY = `
MATCH (e:Entity {id: $entityId}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId AND e.valid_to IS NULL
RETURN ${ENTITY} AS entity, e.normalized_name AS normalizedName`;

// $userId, $channels, $keys -> {entity, normalizedName}: live entities sharing a normalized name key
const NAME_CANDIDATES = `
MATCH (e:Entity) WHERE e.user_id = $userId AND e.channel IN $channels AND e.valid_to IS NULL
  AND any(k IN e.normalized_names WHERE k IN $keys)
RETURN ${ENTITY} AS entity, e.normalized_name AS normalizedName LIMIT 100`;

// $k, $embedding, $userId, $channels, $type, $threshold -> {id, score}: the closest same-type entity above the threshold
const EMBEDDING_CANDIDATE = `
CALL db.index.vector.queryNodes('entity_embeddings', toInteger($k), $embedding) YIELD node AS e, score
WHERE e.user_id = $userId AND e.channel IN $channels AND e.valid_to IS NULL AND e.type = $type AND score >= $threshold
RETURN e.id AS id, score ORDER BY score DESC LIMIT 1`;

// $row -> {entity}: creates an entity owned by the user
const CREATE_ENTITY = `
MATCH (u:User {id: $row.userId})
CREATE (e:Entity {id: $row.id, user_id: $row.userId, channel: $row.channel, scope_key: $row.scopeKey, name: $row.name, normalized_name: $row.normalizedName,
  type: $row.type, aliases: $row.aliases, normalized_names: $row.normalizedNames, aliases_text: $row.aliasesText,
  description: $row.description, properties_json: $row.propertiesJson, salience: $row.salience, access_count: 0, mention_count: 1,
  protected: false, created_at: datetime(), updated_at: datetime(), first_seen: datetime(), valid_from: datetime(),
  embedding_pending: CASE WHEN $row.embedding IS NULL THEN true ELSE null END})
CREATE (u)-[:HAS_ENTITY]->(e)
WITH e CALL (e) { WITH e WHERE $row.embedding IS NOT NULL CALL db.create.setNodeVectorProperty(e, 'embedding', $row.embedding) SET e.embedded_at = timestamp() }
RETURN ${ENTITY} AS entity`;

// $row -> {entity}: merges resolved input into an existing entity
const UPDATE_ENTITY = `
MATCH (e:Entity {id: $row.id}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $row.userId
SET e.aliases = $row.aliases, e.normalized_names = $row.normalizedNames, e.aliases_text = $row.aliasesText, e.type = $row.type,
    e.description = $row.description, e.properties_json = $row.propertiesJson, e.salience = $row.salience,
    e.mention_count = coalesce(e.mention_count, 0) + 1, e.updated_at = datetime()
WITH e CALL (e) {
  WITH e WHERE $row.embedding IS NOT NULL AND e.embedding IS NULL
  CALL db.create.setNodeVectorProperty(e, 'embedding', $row.embedding)
  SET e.embedded_at = timestamp()
  REMOVE e.embedding_pending
}
RETURN ${ENTITY} AS entity`;

// $userId, $entityId, $turnId -> {n}: links the turn's conversation to the entity (MENTIONS)
const LINK_MENTION = `
MATCH (t:Turn {id: $turnId}) USING INDEX SEEK t:Turn(id) WHERE t.user_id = $userId
MATCH (c:Conversation {id: t.conversation_id})
MATCH (e:Entity {id: $entityId})
MERGE (c)-[:MENTIONS]->(e)
RETURN count(*) AS n`;

// $userId, $turnIds -> {id}: the turns among $turnIds that belong to the user
const OWNED_TURNS = `UNWIND $turnIds AS tid MATCH (t:Turn {id: tid}) USING INDEX SEEK t:Turn(id) WHERE t.user_id = $userId RETURN t.id AS id`;
// $userId, $ids -> {id}: live entities among $ids owned by the user
const OWNED_ENTITIES = `UNWIND $ids AS eid MATCH (e:Entity {id: eid}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId AND e.valid_to IS NULL RETURN e.id AS id`;
// $userId, $ids -> {id, status}: facts among $ids owned by the user
const OWNED_FACTS = `UNWIND $ids AS fid MATCH (f:Fact {id: fid}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId RETURN f.id AS id, f.status AS status`;

// $userId, $names -> {entity}: live entities whose names include one of the keys
const FIND_BY_NAME = `
MATCH (e:Entity) WHERE e.user_id = $userId AND e.channel IN $channels AND e.valid_to IS NULL AND $key IN e.normalized_names
RETURN ${ENTITY} AS entity ORDER BY e.mention_count DESC, e.id LIMIT 50`;

// $userId, $entityId -> {entity}: soft-deletes an entity
const DELETE_ENTITY = `
MATCH (e:Entity {id: $entityId}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId AND e.valid_to IS NULL
SET e.valid_to = datetime(), e.updated_at = datetime()
RETURN ${ENTITY} AS entity`;

// $userId, $factId -> {fact}
const GET_FACT = `
MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $id -> {userId}: who owns a fact id (for idempotent creates)
const FACT_OWNER = `MATCH (f:Fact {id: $id}) RETURN f.user_id AS userId`;

// $userId, $channel, $key, $predicate, $connectionId -> {id}: an active fact with the same normalized claim (and connection)
const SAME_CLAIM = `
MATCH (f:Fact) WHERE f.user_id = $userId AND f.channel = $channel AND f.claim_key = $key AND f.status = 'active'
  AND coalesce(f.predicate, '') = coalesce($predicate, '') AND coalesce(f.connection_id, '') = coalesce($connectionId, '')
RETURN f.id AS id ORDER BY f.created_at LIMIT 1`;

// $row -> {fact}: creates a fact with its links; superseded facts are closed
const CREATE_FACT = `
MATCH (u:User {id: $row.userId})
CREATE (f:Fact {id: $row.id, user_id: $row.userId, channel: $row.channel, scope_key: $row.scopeKey, claim: $row.claim, claim_key: $row.claimKey,
  predicate: $row.predicate, confidence: $row.confidence, certainty: $row.certainty, source: $row.source,
  source_turn_id: $row.sourceTurnId, temporal: $row.temporal, valid_from: datetime($row.validFrom),
  valid_to: CASE WHEN $row.validTo IS NULL THEN null ELSE datetime($row.validTo) END, status: 'active', protected: false,
  decay_rate: 0.05, needs_review: $row.needsReview, salience: $row.salience, access_count: 0, mention_count: 1,
  properties_json: $row.propertiesJson, connection_id: $row.connectionId, created_at: datetime(), updated_at: datetime(),
  embedding_pending: CASE WHEN $row.embedding IS NULL THEN true ELSE null END})
CREATE (u)-[:HAS_FACT]->(f)
WITH f
CALL (f) { UNWIND $row.aboutEntityIds AS eid MATCH (e:Entity {id: eid}) MERGE (f)-[:ABOUT]->(e) }
CALL (f) { UNWIND $row.sourceTurnIds AS tid MATCH (t:Turn {id: tid}) MERGE (f)-[:DERIVED_FROM]->(t) }
CALL (f) { UNWIND $row.contradicts AS cid MATCH (c:Fact {id: cid}) MERGE (f)-[:CONTRADICTS]->(c) }
CALL (f) {
  UNWIND $row.supersedes AS sid MATCH (old:Fact {id: sid})
  MERGE (f)-[:SUPERSEDES]->(old)
  SET old.status = 'superseded', old.superseded_by = f.id, old.updated_at = datetime(),
      old.valid_to = CASE WHEN f.valid_from > old.valid_from THEN f.valid_from ELSE datetime() END
}
CALL (f) { WITH f WHERE $row.embedding IS NOT NULL CALL db.create.setNodeVectorProperty(f, 'embedding', $row.embedding) SET f.embedded_at = timestamp() }
${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $userId, $factId, $aboutEntityIds, $sourceTurnIds, $confidence -> {fact}: reinforces a fact said again
const REINFORCE_FACT = `
MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
SET f.confidence = CASE WHEN $confidence > f.confidence THEN $confidence ELSE f.confidence END,
    f.mention_count = coalesce(f.mention_count, 1) + 1, f.updated_at = datetime()
WITH f
CALL (f) { UNWIND $aboutEntityIds AS eid MATCH (e:Entity {id: eid}) MERGE (f)-[:ABOUT]->(e) }
CALL (f) { UNWIND $sourceTurnIds AS tid MATCH (t:Turn {id: tid}) MERGE (f)-[:DERIVED_FROM]->(t) }
${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $userId, $factId -> {fact}: marks a fact protected (no decay)
const CONFIRM_FACT = `
MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
SET f.protected = true, f.decay_rate = 0.0, f.confirmed_at = coalesce(f.confirmed_at, datetime()), f.updated_at = datetime()
WITH f ${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $userId, $factId, $reason -> {fact}: soft-deletes an active fact
const RETRACT_FACT = `
MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId AND f.status = 'active'
SET f.status = 'retracted', f.valid_to = datetime(), f.retract_reason = $reason, f.updated_at = datetime()
WITH f
// Its _global copy said the same: retracted with it.
CALL (f) { MATCH (g:Fact)-[:PROMOTED_FROM]->(f) WHERE g.status = 'active' SET g.status = 'retracted', g.valid_to = datetime(), g.retract_reason = $reason, g.updated_at = datetime() }
WITH f ${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $userId, $ids -> {n}: deletes the user's facts (their only source went) with their _global copies
const DELETE_FACTS_BY_ID = `
UNWIND $ids AS id
MATCH (f:Fact {id: id}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
CALL (f) { MATCH (g:Fact)-[:PROMOTED_FROM]->(f) DETACH DELETE g }
DETACH DELETE f
RETURN count(*) AS n`;

// $userId, $channels, $connections, $includeInactive, $minConfidence, $entityId, $predicate, $limit -> {fact} newest first
const FIND_FACTS = `
MATCH (f:Fact) WHERE f.user_id = $userId AND f.channel IN $channels AND ($includeInactive OR f.status = 'active') AND ${FACT_CONNECTIONS}
  AND f.confidence >= $minConfidence AND ($predicate IS NULL OR f.predicate = $predicate)
  AND ($entityId IS NULL OR EXISTS { (f)-[:ABOUT]->(:Entity {id: $entityId}) })
${WITH_ABOUT}
RETURN ${FACT} AS fact ORDER BY f.valid_from DESC, f.created_at DESC LIMIT toInteger($limit)`;

// $userId, $sourceId, $targetId -> {a, b}: both live entities of the user (missing ones absent)
const REL_ENDS = `
OPTIONAL MATCH (a:Entity {id: $sourceId}) USING INDEX SEEK a:Entity(id) WHERE a.user_id = $userId AND a.valid_to IS NULL
OPTIONAL MATCH (b:Entity {id: $targetId}) USING INDEX SEEK b:Entity(id) WHERE b.user_id = $userId AND b.valid_to IS NULL
RETURN a IS NOT NULL AS hasA, b IS NOT NULL AS hasB`;

// $sourceId, $targetId, $type -> {rel}: the open relationship of this type between the two
const OPEN_REL = `
MATCH (a:Entity {id: $sourceId})-[r:$($type)]->(b:Entity {id: $targetId}) WHERE r.valid_to IS NULL
RETURN ${REL} AS rel LIMIT 1`;

// $sourceId, $targetId, $type, $at -> {rel}: closes open relationships of this type from the source to others
const CLOSE_OTHER_RELS = `
MATCH (a:Entity {id: $sourceId})-[r:$($type)]->(b:Entity) WHERE r.valid_to IS NULL AND b.id <> $targetId
SET r.valid_to = datetime($at)
RETURN ${REL} AS rel`;

// $row -> {rel}: creates a typed relationship with a validity window ($row.type passed RelationshipTypeSchema)
const CREATE_REL = `
MATCH (a:Entity {id: $row.sourceId}), (b:Entity {id: $row.targetId})
CREATE (a)-[r:$($row.type) {id: $row.id, user_id: $row.userId, channel: $row.channel, confidence: $row.confidence,
  properties_json: $row.propertiesJson, source_turn_id: $row.sourceTurnId, valid_from: datetime($row.validFrom),
  valid_to: CASE WHEN $row.validTo IS NULL THEN null ELSE datetime($row.validTo) END, created_at: datetime()}]->(b)
RETURN ${REL} AS rel`;

// $sourceId, $targetId, $type -> {rel}: closes the open relationships of this type between the two
const END_REL = `
MATCH (a:Entity {id: $sourceId})-[r:$($type)]->(b:Entity {id: $targetId}) WHERE r.valid_to IS NULL
SET r.valid_to = datetime()
RETURN ${REL} AS rel`;

// $userId, $ids -> {id}: the user's live entities among $ids (graph roots)
const GRAPH_ROOTS = OWNED_ENTITIES;
// $userId, $frontier, $channels, $limit -> {rel, entity}: the live neighbours of the user's
// entities over currently valid relationships, each with the relationship that reaches it
const NEIGHBOURS = `
UNWIND $frontier AS fid
MATCH (a:Entity {id: fid})-[r]-(e:Entity) USING INDEX SEEK a:Entity(id)
WHERE a.user_id = $userId AND r.valid_to IS NULL AND r.user_id = $userId AND e.user_id = $userId AND e.valid_to IS NULL AND e.channel IN $channels
WITH r, e LIMIT toInteger($limit)
RETURN ${relOf('startNode(r)', 'endNode(r)')} AS rel, ${ENTITY} AS entity`;
// $ids -> {entity}
const ENTITIES_BY_ID = `UNWIND $ids AS eid MATCH (e:Entity {id: eid}) RETURN ${ENTITY} AS entity`;
// $userId, $ids -> {rel}: currently valid relationships among the entities
const RELS_AMONG = `
MATCH (a:Entity)-[r]->(b:Entity) WHERE a.id IN $ids AND b.id IN $ids AND r.user_id = $userId AND r.valid_to IS NULL
RETURN ${REL} AS rel ORDER BY r.created_at`;
// $userId, $ids, $connections, $limit -> {fact}: active facts about the entities (visible to the connections), most confident first
const FACTS_ABOUT = `
MATCH (f:Fact)-[:ABOUT]->(x:Entity) WHERE x.id IN $ids AND f.user_id = $userId AND f.status = 'active' AND ${FACT_CONNECTIONS}
WITH DISTINCT f
${WITH_ABOUT}
RETURN ${FACT} AS fact ORDER BY f.confidence DESC, f.created_at DESC LIMIT toInteger($limit)`;

// $userId, $entityId, $limit -> {fact}: every fact about the entity, any status
const TIMELINE_FACTS = `
MATCH (f:Fact)-[:ABOUT]->(:Entity {id: $entityId}) WHERE f.user_id = $userId
${WITH_ABOUT}
RETURN ${FACT} AS fact ORDER BY f.valid_from, f.created_at LIMIT toInteger($limit)`;
// $userId, $entityId, $limit -> {rel}: every relationship touching the entity, closed ones too
const TIMELINE_RELS = `
MATCH (x:Entity {id: $entityId})-[r]-(:Entity) WHERE r.user_id = $userId
WITH DISTINCT r MATCH (a)-[r]->(b)
RETURN ${REL} AS rel ORDER BY r.valid_from, r.created_at LIMIT toInteger($limit)`;
// $userId, $entityId -> {n}: whether the entity (live or deleted) is the user's
const ENTITY_EXISTS = `MATCH (e:Entity {id: $entityId}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId RETURN count(e) AS n`;

// $userId -> {n}: the user's facts, and their entities (user_id index seeks)
const COUNT_USER_FACTS = `MATCH (f:Fact) WHERE f.user_id = $userId RETURN count(f) AS n`;
const COUNT_USER_ENTITIES = `MATCH (e:Entity) WHERE e.user_id = $userId RETURN count(e) AS n`;
// A vector search's filter on fact f: $userId, $channels, $connections, $includeInactive, $minConfidence
const FACT_SEARCH_FILTER = `f.user_id = $userId AND f.channel IN $channels AND ($includeInactive OR f.status = 'active') AND f.confidence >= $minConfidence AND ${FACT_CONNECTIONS}`;
// ... and on entity e: $userId, $channels, $types
const ENTITY_SEARCH_FILTER = `e.user_id = $userId AND e.channel IN $channels AND e.valid_to IS NULL AND ($types IS NULL OR e.type IN $types)`;
// A small user's facts and entities held in memory (OwnerVectors): their exact scan ranked
// there, and the two reads of them (migration 011 indexes (user_id, embedded_at)).
const HELD_FACTS = { label: 'Fact', v: 'f', filter: FACT_SEARCH_FILTER, timestamp: '0', connectionId: 'f.connection_id' };
const HELD_ENTITIES = { label: 'Entity', v: 'e', filter: ENTITY_SEARCH_FILTER, timestamp: '0', connectionId: 'null' };

/**
 * How a search returns what it found: `whole` facts and entities (the search routes), or
 * recall's `candidate`s, the few properties it ranks and narrows by before it reads the kept
 * ones whole (`recalledFacts`, `recalledEntities`): it keeps at most its `limit` of the
 * ~3 × limit each search finds.
 */
type Rows = 'whole' | 'candidate';
// Projection of a fact `f` as a recall candidate: what the superseded-fact rule (status, successor, properties) and time narrowing read.
const FACT_CANDIDATE = `{ id: f.id, status: f.status, supersededBy: f.superseded_by, validFrom: toString(f.valid_from), propertiesJson: f.properties_json }`;
// ... and an entity `e` (time narrowing reads its last update).
const ENTITY_CANDIDATE = `{ id: e.id, updatedAt: toString(e.updated_at) }`;
/** The end of every fact search (over `f`, `score`): its rows, best first. */
const FACT_ROWS: Record<Rows, string> = {
  whole: `${WITH_ABOUT.replace('WITH f,', 'WITH f, score,')}
RETURN ${FACT} AS fact, score ORDER BY score DESC`,
  candidate: `RETURN ${FACT_CANDIDATE} AS fact, score ORDER BY score DESC`,
};
const ENTITY_ROWS: Record<Rows, string> = {
  whole: `RETURN ${ENTITY} AS entity, score ORDER BY score DESC`,
  candidate: `RETURN ${ENTITY_CANDIDATE} AS entity, score ORDER BY score DESC`,
};

/**
 * The searches of one label (over `v`, with its search filter), each ending in `rows`: the
 * shared vector index (`$k`, `$embedding`), the exact cosine over the user's nodes (index
 * seek on user_id, channel) when the index's neighbourhood holds too few of theirs
 * (vector.similarity.cosine is normalised like the index score, (1 + cos) / 2), the same
 * ranked from memory (`$ranked`, `$seen`: heldSearchCypher), and full text (`$k`, `$query`).
 * Facts take $userId, $channels, $connections, $includeInactive, $minConfidence, $limit;
 * entities $userId, $channels, $types, $limit. Each -> {fact|entity, score}.
 */
const searches = (l: HeldLabel & { vectorIndex: string; textIndex: string }, rows: string, ops: { vector: string; fulltext: string }) => {
  const { v, label, filter } = l;
  const best = `WITH ${v}, score ORDER BY score DESC LIMIT toInteger($limit)`;
  return {
    /** Transaction tags: the vector search's (its exact and held forms add `Exact`, `Held`) and the full text's. */
    ops,
    index: `
CALL db.index.vector.queryNodes('${l.vectorIndex}', toInteger($k), $embedding) YIELD node AS ${v}, score WHERE ${filter}
${best}
${rows}`,
    exact: `
MATCH (${v}:${label}) WHERE ${filter} AND ${v}.embedding IS NOT NULL
WITH ${v}, vector.similarity.cosine(${v}.embedding, $embedding) AS score ORDER BY score DESC LIMIT toInteger($limit)
${rows}`,
    held: `${heldSearchCypher(l)}
${rows}`,
    fulltext: `
CALL db.index.fulltext.queryNodes('${l.textIndex}', $query, {limit: toInteger($k)}) YIELD node AS ${v}, score WHERE ${filter}
${best}
${rows}`,
  };
};
const FACT_INDEXES = { ...HELD_FACTS, vectorIndex: 'fact_embeddings', textIndex: 'fact_text_scoped' };
const ENTITY_INDEXES = { ...HELD_ENTITIES, vectorIndex: 'entity_embeddings', textIndex: 'entity_text_scoped' };
type Searches = ReturnType<typeof searches>;
const FACT_SEARCH: Record<Rows, Searches> = {
  whole: searches(FACT_INDEXES, FACT_ROWS.whole, { vector: 'vectorSearchFacts', fulltext: 'fullTextSearchFacts' }),
  candidate: searches(FACT_INDEXES, FACT_ROWS.candidate, { vector: 'vectorFactCandidates', fulltext: 'fullTextFactCandidates' }),
};
const ENTITY_SEARCH: Record<Rows, Searches> = {
  whole: searches(ENTITY_INDEXES, ENTITY_ROWS.whole, { vector: 'vectorSearchEntities', fulltext: 'fullTextSearchEntities' }),
  candidate: searches(ENTITY_INDEXES, ENTITY_ROWS.candidate, { vector: 'vectorEntityCandidates', fulltext: 'fullTextEntityCandidates' }),
};

// $ids, $userId, $channels, $connections -> {fact}: recall's kept candidates read whole (any status), in no particular order
const RECALLED_FACTS = `
UNWIND $ids AS fid MATCH (f:Fact {id: fid}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId AND f.channel IN $channels AND ${FACT_CONNECTIONS}
${WITH_ABOUT}
RETURN ${FACT} AS fact`;
// $ids, $userId, $channels -> {entity}: the same for live entities
const RECALLED_ENTITIES = `
UNWIND $ids AS eid MATCH (e:Entity {id: eid}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId AND e.channel IN $channels AND e.valid_to IS NULL
RETURN ${ENTITY} AS entity`;

// $userId, $factId -> {status, channel, confidence, accessCount, conversations, globalId}: promotion measures
const PROMOTION_MEASURES = `
MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
OPTIONAL MATCH (f)-[:DERIVED_FROM]->(t:Turn)
WITH f, count(DISTINCT t.conversation_id) AS conversations
OPTIONAL MATCH (g:Fact)-[:PROMOTED_FROM]->(f)
RETURN f.status AS status, f.channel AS channel, f.confidence AS confidence, coalesce(f.access_count, 0) AS accessCount,
       conversations, g.id AS globalId LIMIT 1`;

// $userId, $factId, $newId, $scopeKey (the user's _global one) -> {fact}: the _global copy of a fact, linked PROMOTED_FROM
const PROMOTE = `
MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
CREATE (g:Fact {id: $newId, user_id: f.user_id, channel: '${GLOBAL_CHANNEL}', scope_key: $scopeKey, claim: f.claim, claim_key: f.claim_key,
  predicate: f.predicate, confidence: f.confidence, certainty: f.certainty, source: 'promotion', source_turn_id: f.source_turn_id,
  temporal: f.temporal, valid_from: f.valid_from, valid_to: f.valid_to, status: 'active', protected: coalesce(f.protected, false),
  decay_rate: coalesce(f.decay_rate, 0.05), needs_review: false, salience: f.salience, access_count: 0, mention_count: 1,
  properties_json: f.properties_json, promoted_from: f.id, created_at: datetime(), updated_at: datetime(),
  embedding_pending: CASE WHEN f.embedding IS NULL THEN true ELSE null END})
SET f.promoted_to = g.id, f.updated_at = datetime()
CREATE (g)-[:PROMOTED_FROM]->(f)
WITH f, g
MATCH (u:User {id: $userId}) CREATE (u)-[:HAS_FACT]->(g)
WITH f, g
CALL (f, g) { MATCH (f)-[:ABOUT]->(e:Entity) MERGE (g)-[:ABOUT]->(e) }
CALL (f, g) { MATCH (f)-[:DERIVED_FROM]->(t:Turn) MERGE (g)-[:DERIVED_FROM]->(t) }
CALL (f, g) { WITH f, g WHERE f.embedding IS NOT NULL SET g.embedding = f.embedding, g.embedded_at = timestamp() }
WITH g AS f
${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $minConfidence, $minAccessCount, $minConversations, $limit -> {userId, factId, channel}
const PROMOTION_CANDIDATES = `
MATCH (f:Fact) WHERE f.channel <> '${GLOBAL_CHANNEL}' AND f.status = 'active' AND f.promoted_to IS NULL
  AND f.confidence >= $minConfidence AND coalesce(f.access_count, 0) >= toInteger($minAccessCount)
OPTIONAL MATCH (f)-[:DERIVED_FROM]->(t:Turn)
WITH f, count(DISTINCT t.conversation_id) AS conversations WHERE conversations >= toInteger($minConversations)
RETURN f.user_id AS userId, f.id AS factId, f.channel AS channel ORDER BY f.confidence DESC, f.id LIMIT toInteger($limit)`;

// $limit -> {label, id, text}: nodes whose embedding is still pending
const PENDING = `
CALL () {
  MATCH (e:Entity) WHERE e.embedding_pending = true
  RETURN 'Entity' AS label, e.id AS id, e.name + ' ' + coalesce(e.aliases_text, '') + ' ' + coalesce(e.description, '') AS text LIMIT toInteger($limit)
  UNION ALL
  MATCH (f:Fact) WHERE f.embedding_pending = true
  RETURN 'Fact' AS label, f.id AS id, f.claim AS text LIMIT toInteger($limit)
}
RETURN label, id, text LIMIT toInteger($limit)`;
// $rows: [{id, embedding}] -> {n}
const SET_ENTITY_EMBEDDINGS = `
UNWIND $rows AS row MATCH (e:Entity {id: row.id})
CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding) SET e.embedded_at = timestamp() REMOVE e.embedding_pending RETURN count(e) AS n`;
const SET_FACT_EMBEDDINGS = `
UNWIND $rows AS row MATCH (f:Fact {id: row.id})
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding) SET f.embedded_at = timestamp() REMOVE f.embedding_pending RETURN count(f) AS n`;

type Props = Record<string, string | number | boolean>;
export interface EntityRow extends Omit<Entity, 'properties'> {
  propertiesJson: string | null;
}
export interface FactRow extends Omit<Fact, 'properties'> {
  propertiesJson: string | null;
}
interface RelRow extends Omit<Relationship, 'properties'> {
  propertiesJson: string | null;
}

/** A node's `properties_json` (written by the stores with JSON.stringify) as an object. */
export function parseProps(json: string | null): Props {
  return json ? (JSON.parse(json) as Props) : {};
}
export function toEntity({ propertiesJson, ...row }: EntityRow): Entity {
  return { ...row, properties: parseProps(propertiesJson) };
}
export function toFact({ propertiesJson, ...row }: FactRow): Fact {
  return { ...row, properties: parseProps(propertiesJson) };
}
export function toRelationship({ propertiesJson, ...row }: RelRow): Relationship {
  return { ...row, properties: parseProps(propertiesJson) };
}

/** `found` in the order of `ids` (the ones found; each once). */
function inOrder<T extends { id: string }>(ids: readonly string[], found: T[]): T[] {
  const byId = new Map(found.map((x) => [x.id, x]));
  return [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
}

function missing(wanted: readonly string[], found: readonly string[]): string[] {
  const have = new Set(found);
  return [...new Set(wanted)].filter((id) => !have.has(id));
}

export class Neo4jSemanticStore implements SemanticStore {
  /** Per user, for a while: whether their facts, and their entities, are few enough for the exact vector scan. */
  private readonly smallFacts: SmallOwners;
  private readonly smallEntities: SmallOwners;
  /** Small users' fact and entity embeddings in memory, so their exact scans rank here (undefined: off). */
  private readonly heldFacts: OwnerVectors | undefined;
  private readonly heldEntities: OwnerVectors | undefined;

  constructor(
    private readonly db: CypherRunner,
    opts: HeldVectorsOptions = {},
  ) {
    this.smallFacts = SmallOwners.counted(db, COUNT_USER_FACTS, TAG('countUserFacts'));
    this.smallEntities = SmallOwners.counted(db, COUNT_USER_ENTITIES, TAG('countUserEntities'));
    const held = (l: HeldLabel) => OwnerVectors.forLabel(db, l, (op) => TAG(`${op}${l.label}`), opts);
    this.heldFacts = held(HELD_FACTS);
    this.heldEntities = held(HELD_ENTITIES);
  }

  // ------------------------------------------------------------------- entities

  upsertEntity(scope: AccessScope, input: NewEntity, opts: ResolutionOptions): Promise<UpsertEntityResult> {
    const { userId, channel, channels } = scope;
    return this.db.writeTx(async (tx) => {
      await tx.run(LOCK_USER, { userId });
      const keys = nameKeys(input.name, input.aliases);
      let existing: Entity | null = null;
      let matchedBy: UpsertEntityResult['matchedBy'] = null;

      if (input.entityId) {
        const [row] = await rows<{ entity: EntityRow }>(tx, GET_ENTITY, { userId, entityId: input.entityId });
        if (!row) throw new NotFoundError('entity', input.entityId);
        existing = toEntity(row.entity);
        matchedBy = 'id';
      } else {
        const found = await rows<{ entity: EntityRow; normalizedName: string }>(tx, NAME_CANDIDATES, { userId, channels, keys });
        const candidates: ResolutionCandidate[] = found.map(({ entity: e, normalizedName }) => ({
          id: e.id,
          type: e.type,
          normalizedName,
          normalizedNames: e.normalizedNames,
          salience: e.salience,
          mentionCount: e.mentionCount,
          sameChannel: e.channel === channel,
        }));
        const match = pickNameMatch(keys, input.type, candidates);
        if (match) {
          existing = toEntity(found.find((f) => f.entity.id === match.id)!.entity);
          matchedBy = match.matchedBy;
        } else if (input.embedding && input.type !== 'other') {
          // Similarity alone merges only a same-type entity above a high threshold: two
          // people with similar descriptions must stay apart.
          const [hit] = await rows<{ id: string }>(tx, EMBEDDING_CANDIDATE, {
            k: 50,
            embedding: input.embedding,
            userId,
            channels,
            type: input.type,
            threshold: opts.embeddingThreshold,
          });
          if (hit) {
            const [row] = await rows<{ entity: EntityRow }>(tx, GET_ENTITY, { userId, entityId: hit.id });
            existing = toEntity(row!.entity);
            matchedBy = 'embedding';
          }
        }
      }

      let entity: Entity;
      if (existing) {
        const aliases = mergeAliases(existing.name, existing.aliases, [input.name, ...input.aliases]);
        const description = input.description && (!existing.description || input.description.length > existing.description.length) ? input.description : existing.description;
        const [row] = await rows<{ entity: EntityRow }>(tx, UPDATE_ENTITY, {
          row: {
            id: existing.id,
            userId,
            aliases,
            normalizedNames: nameKeys(existing.name, aliases),
            aliasesText: aliasesText(aliases),
            type: mergedType(existing.type, input.type),
            description,
            propertiesJson: JSON.stringify({ ...existing.properties, ...(input.properties ?? {}) }),
            salience: Math.max(existing.salience, input.salience ?? 0),
            embedding: input.embedding ?? null,
          },
        });
        entity = toEntity(row!.entity);
      } else {
        const aliases = mergeAliases(input.name, [], input.aliases);
        const [row] = await rows<{ entity: EntityRow }>(tx, CREATE_ENTITY, {
          row: {
            id: randomUUID(),
            userId,
            channel,
            scopeKey: writeKey(scope),
            name: input.name,
            normalizedName: normalizeName(input.name),
            type: input.type,
            aliases,
            normalizedNames: nameKeys(input.name, aliases),
            aliasesText: aliasesText(aliases),
            description: input.description ?? null,
            propertiesJson: JSON.stringify(input.properties ?? {}),
            salience: input.salience ?? 0.5,
            embedding: input.embedding ?? null,
          },
        });
        entity = toEntity(created(row, userId).entity);
      }
      if (input.sourceTurnId) {
        const [linked] = await rows<{ n: number }>(tx, LINK_MENTION, { userId, entityId: entity.id, turnId: input.sourceTurnId });
        if (!linked || linked.n === 0) throw new NotFoundError('turn', input.sourceTurnId);
      }
      return { entity, created: existing === null, matchedBy };
    }, TAG('upsertEntity'));
  }

  async getEntity(scope: AccessScope, entityId: string): Promise<Entity | null> {
    const [row] = await this.db.read<{ entity: EntityRow }>(GET_ENTITY, { userId: scope.userId, entityId }, TAG('getEntity'));
    return row ? toEntity(row.entity) : null;
  }

  async findEntitiesByName(scope: AccessScope, name: string): Promise<Entity[]> {
    const key = normalizeName(name);
    if (!key) return [];
    const found = await this.db.read<{ entity: EntityRow }>(FIND_BY_NAME, { userId: scope.userId, channels: scope.channels, key }, TAG('findEntitiesByName'));
    return found.map((r) => toEntity(r.entity));
  }

  async deleteEntity(scope: AccessScope, entityId: string): Promise<Entity> {
    const [row] = await this.db.write<{ entity: EntityRow }>(DELETE_ENTITY, { userId: scope.userId, entityId }, TAG('deleteEntity'));
    if (!row) throw new NotFoundError('entity', entityId);
    return toEntity(row.entity);
  }

  // ---------------------------------------------------------------------- facts

  storeFact(scope: AccessScope, fact: NewFact): Promise<StoreFactResult> {
    return this.db.writeTx((tx) => this.writeFact(tx, scope, fact, false), TAG('storeFact'));
  }

  learnFact(scope: AccessScope, fact: NewFact): Promise<StoreFactResult> {
    return this.db.writeTx((tx) => this.writeFact(tx, scope, fact, true), TAG('learnFact'));
  }

  /** Checks every referenced id before writing, so a bad reference writes nothing. */
  private async writeFact(tx: ManagedTransaction, scope: AccessScope, fact: NewFact, reinforce: boolean): Promise<StoreFactResult> {
    const { userId, channel } = scope;
    await tx.run(LOCK_USER, { userId });
    if (fact.id) {
      const [owner] = await rows<{ userId: string }>(tx, FACT_OWNER, { id: fact.id });
      if (owner) {
        if (owner.userId !== userId) throw new ValidationError(`fact id ${fact.id} is already in use; choose another id`, { id: fact.id });
        const [row] = await rows<{ fact: FactRow }>(tx, GET_FACT, { userId, factId: fact.id });
        return { fact: toFact(row!.fact), created: false, reinforced: false, superseded: [] };
      }
    }
    await this.checkReferences(tx, userId, {
      entityIds: fact.aboutEntityIds,
      turnIds: fact.sourceTurnIds,
      supersedes: fact.supersedes,
      contradicts: fact.contradicts,
    });
    const claimKey = normalizeClaim(fact.claim);
    if (reinforce) {
      const [same] = await rows<{ id: string }>(tx, SAME_CLAIM, { userId, channel, key: claimKey, predicate: fact.predicate ?? null, connectionId: fact.connectionId ?? null });
      if (same) {
        const [row] = await rows<{ fact: FactRow }>(tx, REINFORCE_FACT, {
          userId,
          factId: same.id,
          aboutEntityIds: fact.aboutEntityIds,
          sourceTurnIds: fact.sourceTurnIds,
          confidence: fact.confidence,
        });
        return { fact: toFact(row!.fact), created: false, reinforced: true, superseded: [] };
      }
    }
    const [row] = await rows<{ fact: FactRow }>(tx, CREATE_FACT, {
      row: {
        id: fact.id ?? randomUUID(),
        userId,
        channel,
        scopeKey: writeKey(scope),
        claim: fact.claim,
        claimKey,
        predicate: fact.predicate ?? null,
        confidence: fact.confidence,
        certainty: fact.certainty ?? null,
        source: fact.source,
        sourceTurnId: fact.sourceTurnIds[0] ?? null,
        sourceTurnIds: fact.sourceTurnIds,
        temporal: fact.temporal,
        validFrom: fact.validFrom,
        validTo: fact.validTo ?? null,
        aboutEntityIds: fact.aboutEntityIds,
        supersedes: fact.supersedes,
        contradicts: fact.contradicts,
        needsReview: fact.needsReview,
        salience: fact.salience ?? 0.5,
        propertiesJson: JSON.stringify(fact.properties ?? {}),
        connectionId: fact.connectionId ?? null,
        embedding: fact.embedding ?? null,
      },
    });
    return { fact: toFact(created(row, userId).fact), created: true, reinforced: false, superseded: [...new Set(fact.supersedes)] };
  }

  private async checkReferences(tx: ManagedTransaction, userId: string, refs: { entityIds: string[]; turnIds: string[]; supersedes: string[]; contradicts: string[] }): Promise<void> {
    if (refs.entityIds.length > 0) {
      const found = await rows<{ id: string }>(tx, OWNED_ENTITIES, { userId, ids: refs.entityIds });
      const [first] = missing(
        refs.entityIds,
        found.map((r) => r.id),
      );
      if (first) throw new NotFoundError('entity', first);
    }
    if (refs.turnIds.length > 0) {
      const found = await rows<{ id: string }>(tx, OWNED_TURNS, { userId, turnIds: refs.turnIds });
      const [first] = missing(
        refs.turnIds,
        found.map((r) => r.id),
      );
      if (first) throw new NotFoundError('turn', first);
    }
    const factIds = [...refs.supersedes, ...refs.contradicts];
    if (factIds.length > 0) {
      const found = await rows<{ id: string; status: string }>(tx, OWNED_FACTS, { userId, ids: factIds });
      const [first] = missing(
        factIds,
        found.map((r) => r.id),
      );
      if (first) throw new NotFoundError('fact', first);
      const inactive = found.find((f) => refs.supersedes.includes(f.id) && f.status !== 'active');
      if (inactive) throw new ValidationError(`fact ${inactive.id} is ${inactive.status} and cannot be superseded again; correct the fact that replaced it`, { id: inactive.id });
    }
  }

  async getFact(scope: AccessScope, factId: string): Promise<Fact | null> {
    const [row] = await this.db.read<{ fact: FactRow }>(GET_FACT, { userId: scope.userId, factId }, TAG('getFact'));
    return row ? toFact(row.fact) : null;
  }

  async findFacts(scope: AccessScope, q: FactQuery): Promise<Fact[]> {
    const found = await this.db.read<{ fact: FactRow }>(FIND_FACTS, factParams(scope, q), TAG('findFacts'));
    return found.map((r) => toFact(r.fact));
  }

  async correctFact(scope: AccessScope, factId: string, replacement: Parameters<SemanticStore['correctFact']>[2]): Promise<{ oldFact: Fact; newFact: Fact }> {
    const { userId } = scope;
    return this.db.writeTx(async (tx) => {
      const [oldRow] = await rows<{ fact: FactRow }>(tx, GET_FACT, { userId, factId });
      if (!oldRow) throw new NotFoundError('fact', factId);
      const old = toFact(oldRow.fact);
      if (old.status !== 'active') {
        throw new ValidationError(`fact ${factId} is ${old.status}; correct the current fact${old.supersededBy ? ` (${old.supersededBy})` : ''} instead`, { id: factId });
      }
      const { reason, ...rest } = replacement;
      // The replacement stays in the old fact's channel.
      const result = await this.writeFact(
        tx,
        withChannels(scope, [old.channel]),
        {
          ...rest,
          predicate: rest.predicate ?? old.predicate ?? undefined,
          temporal: old.temporal,
          validFrom: new Date().toISOString(),
          aboutEntityIds: old.aboutEntityIds,
          supersedes: [factId],
          contradicts: [],
          // A correction: the old value was a mistake, not a past state (recall does not show it as history).
          properties: { ...old.properties, ...(rest.properties ?? {}), is_correction: true, ...(reason ? { correction_reason: reason } : {}) },
        },
        false,
      );
      const [closed] = await rows<{ fact: FactRow }>(tx, GET_FACT, { userId, factId });
      return { oldFact: toFact(closed!.fact), newFact: result.fact };
    }, TAG('correctFact'));
  }

  async confirmFact(scope: AccessScope, factId: string): Promise<Fact> {
    const [row] = await this.db.write<{ fact: FactRow }>(CONFIRM_FACT, { userId: scope.userId, factId }, TAG('confirmFact'));
    if (!row) throw new NotFoundError('fact', factId);
    return toFact(row.fact);
  }

  async retractFact(scope: AccessScope, factId: string, reason?: string): Promise<Fact> {
    const { userId } = scope;
    return this.db.writeTx(async (tx) => {
      const [row] = await rows<{ fact: FactRow }>(tx, RETRACT_FACT, { userId, factId, reason: reason ?? null });
      if (row) return toFact(row.fact);
      const [current] = await rows<{ fact: FactRow }>(tx, GET_FACT, { userId, factId });
      if (!current) throw new NotFoundError('fact', factId);
      return toFact(current.fact); // already closed: retracting again changes nothing
    }, TAG('retractFact'));
  }

  async deleteFacts(scope: AccessScope, factIds: readonly string[]): Promise<number> {
    if (factIds.length === 0) return 0;
    return (await this.db.write<{ n: number }>(DELETE_FACTS_BY_ID, { userId: scope.userId, ids: factIds }, TAG('deleteFacts')))[0]?.n ?? 0;
  }

  // -------------------------------------------------------------- relationships

  createRelationship(scope: AccessScope, rel: NewRelationship): Promise<CreateRelationshipResult> {
    return this.db.writeTx(async (tx) => {
      await this.checkEnds(tx, scope.userId, rel.sourceId, rel.targetId);
      const ends = { sourceId: rel.sourceId, targetId: rel.targetId, type: rel.type };
      const closed = rel.replaceExisting ? (await rows<{ rel: RelRow }>(tx, CLOSE_OTHER_RELS, { ...ends, at: rel.validFrom })).map((r) => r.rel.id) : [];
      const [open] = await rows<{ rel: RelRow }>(tx, OPEN_REL, ends);
      if (open) return { relationship: toRelationship(open.rel), created: false, closed };
      const [row] = await rows<{ rel: RelRow }>(tx, CREATE_REL, {
        row: {
          ...ends,
          id: randomUUID(),
          userId: scope.userId,
          channel: scope.channel,
          confidence: rel.confidence,
          propertiesJson: JSON.stringify(rel.properties ?? {}),
          sourceTurnId: rel.sourceTurnId ?? null,
          validFrom: rel.validFrom,
          validTo: rel.validTo ?? null,
        },
      });
      return { relationship: toRelationship(row!.rel), created: true, closed };
    }, TAG('createRelationship'));
  }

  endRelationship(scope: AccessScope, sourceId: string, type: string, targetId: string): Promise<Relationship[]> {
    return this.db.writeTx(async (tx) => {
      await this.checkEnds(tx, scope.userId, sourceId, targetId);
      return (await rows<{ rel: RelRow }>(tx, END_REL, { sourceId, targetId, type })).map((r) => toRelationship(r.rel));
    }, TAG('endRelationship'));
  }

  private async checkEnds(tx: ManagedTransaction, userId: string, sourceId: string, targetId: string): Promise<void> {
    const [ends] = await rows<{ hasA: boolean; hasB: boolean }>(tx, REL_ENDS, { userId, sourceId, targetId });
    if (!ends?.hasA) throw new NotFoundError('entity', sourceId);
    if (!ends.hasB) throw new NotFoundError('entity', targetId);
  }

  // ------------------------------------------------------------ graph, timeline

  async getEntityGraph(scope: AccessScope, entityIds: string[], depth: number, limit: number): Promise<EntityGraph> {
    const { userId } = scope;
    const tag = TAG('getEntityGraph');
    const roots = (await this.db.read<{ id: string }>(GRAPH_ROOTS, { userId, ids: entityIds }, tag)).map((r) => r.id);
    if (roots.length === 0) return { entities: [], relationships: [], facts: [] };
    const reached = await this.expandEntities(scope, roots, depth, limit - roots.length);
    const ids = [...roots, ...reached.entities.map((e) => e.id)];
    const [rootRows, relationships, facts] = await Promise.all([
      this.db.read<{ entity: EntityRow }>(ENTITIES_BY_ID, { ids: roots }, tag),
      this.db.read<{ rel: RelRow }>(RELS_AMONG, { userId, ids }, tag),
      this.db.read<{ fact: FactRow }>(FACTS_ABOUT, { userId, ids: roots, connections: scope.connections, limit: 100 }, tag),
    ]);
    return {
      entities: [...rootRows.map((r) => toEntity(r.entity)), ...reached.entities],
      relationships: relationships.map((r) => toRelationship(r.rel)),
      facts: facts.map((r) => toFact(r.fact)),
    };
  }

  async expandEntities(scope: AccessScope, rootIds: string[], depth: number, limit: number): Promise<Omit<EntityGraph, 'facts'>> {
    const { userId, channels } = scope;
    const entities = new Map<string, Entity>();
    const relationships = new Map<string, Relationship>();
    const seen = new Set(rootIds);
    let frontier = rootIds;
    // Breadth-first, one bounded query per hop: cheaper and more predictable than a
    // variable-length path, whose number of paths explodes on dense neighbourhoods.
    for (let hop = 0; hop < depth && frontier.length > 0 && entities.size < limit; hop++) {
      const rows = await this.db.read<{ rel: RelRow; entity: EntityRow }>(NEIGHBOURS, { userId, frontier, channels, limit: (limit + seen.size) * 4 }, TAG('expandEntities'));
      frontier = [];
      for (const row of rows) {
        const rel = toRelationship(row.rel);
        relationships.set(`${rel.sourceId} ${rel.type} ${rel.targetId}`, rel);
        if (seen.has(row.entity.id) || entities.size >= limit) continue;
        seen.add(row.entity.id);
        entities.set(row.entity.id, toEntity(row.entity));
        frontier.push(row.entity.id);
      }
    }
    return { entities: [...entities.values()], relationships: [...relationships.values()] };
  }

  async getEntityTimeline(scope: AccessScope, entityId: string, limit: number): Promise<TimelineEntry[]> {
    const { userId } = scope;
    const tag = TAG('getEntityTimeline');
    const [exists] = await this.db.read<{ n: number }>(ENTITY_EXISTS, { userId, entityId }, tag);
    if (!exists || exists.n === 0) throw new NotFoundError('entity', entityId);
    const [facts, rels] = await Promise.all([
      this.db.read<{ fact: FactRow }>(TIMELINE_FACTS, { userId, entityId, limit }, tag),
      this.db.read<{ rel: RelRow }>(TIMELINE_RELS, { userId, entityId, limit }, tag),
    ]);
    const entries: Array<TimelineEntry & { createdAt: string }> = [
      ...facts.map((r) => toFact(r.fact)).map((fact) => ({ kind: 'fact' as const, validFrom: fact.validFrom, validTo: fact.validTo, createdAt: fact.createdAt, fact })),
      ...rels
        .map((r) => toRelationship(r.rel))
        .map((relationship) => ({
          kind: 'relationship' as const,
          validFrom: relationship.validFrom,
          validTo: relationship.validTo,
          createdAt: relationship.createdAt,
          relationship,
        })),
    ];
    entries.sort((a, b) => Date.parse(a.validFrom) - Date.parse(b.validFrom) || Date.parse(a.createdAt) - Date.parse(b.createdAt));
    return entries.slice(0, limit).map(({ createdAt: _createdAt, ...e }) => e);
  }

  // --------------------------------------------------------------------- search

  async vectorSearchFacts(scope: AccessScope, embedding: number[], q: FactQuery): Promise<ScoredFact[]> {
    return (await this.vectorFacts<FactRow>(scope, embedding, q, 'whole')).map((r) => ({ fact: toFact(r.fact), score: r.score }));
  }

  async vectorSearchEntities(scope: AccessScope, embedding: number[], q: EntityQuery): Promise<ScoredEntity[]> {
    return (await this.vectorEntities<EntityRow>(scope, embedding, q, 'whole')).map((r) => ({ entity: toEntity(r.entity), score: r.score }));
  }

  async fullTextSearchFacts(scope: AccessScope, text: string, q: FactQuery): Promise<ScoredFact[]> {
    const found = await this.fullText<{ fact: FactRow; score: number }>(scope, text, q.limit, FACT_SEARCH.whole, factParams(scope, q));
    return found.map((r) => ({ fact: toFact(r.fact), score: r.score }));
  }

  async fullTextSearchEntities(scope: AccessScope, text: string, q: EntityQuery): Promise<ScoredEntity[]> {
    const found = await this.fullText<{ entity: EntityRow; score: number }>(scope, text, q.limit, ENTITY_SEARCH.whole, entityParams(scope, q));
    return found.map((r) => ({ entity: toEntity(r.entity), score: r.score }));
  }

  async factCandidates(scope: AccessScope, text: string, embedding: number[] | undefined, q: FactQuery): Promise<Candidates<FactCandidate>> {
    type Row = Omit<FactCandidate, 'properties'> & { propertiesJson: string | null };
    const [ft, vec] = await Promise.all([
      this.fullText<{ fact: Row; score: number }>(scope, text, q.limit, FACT_SEARCH.candidate, factParams(scope, q)),
      embedding ? this.vectorFacts<Row>(scope, embedding, q, 'candidate') : Promise.resolve([]),
    ]);
    const candidate = ({ fact: { propertiesJson, ...f }, score }: { fact: Row; score: number }) => ({ item: { ...f, properties: parseProps(propertiesJson) }, score });
    return { fulltext: ft.map(candidate), vector: vec.map(candidate) };
  }

  async entityCandidates(scope: AccessScope, text: string, embedding: number[] | undefined, q: EntityQuery): Promise<Candidates<EntityCandidate>> {
    const [ft, vec] = await Promise.all([
      this.fullText<{ entity: EntityCandidate; score: number }>(scope, text, q.limit, ENTITY_SEARCH.candidate, entityParams(scope, q)),
      embedding ? this.vectorEntities<EntityCandidate>(scope, embedding, q, 'candidate') : Promise.resolve([]),
    ]);
    const candidate = ({ entity, score }: { entity: EntityCandidate; score: number }) => ({ item: entity, score });
    return { fulltext: ft.map(candidate), vector: vec.map(candidate) };
  }

  async recalledFacts(scope: AccessScope, ids: string[]): Promise<Fact[]> {
    if (ids.length === 0) return [];
    const found = await this.db.read<{ fact: FactRow }>(RECALLED_FACTS, { ids, userId: scope.userId, channels: scope.channels, connections: scope.connections }, TAG('recalledFacts'));
    return inOrder(
      ids,
      found.map((r) => toFact(r.fact)),
    );
  }

  async recalledEntities(scope: AccessScope, ids: string[]): Promise<Entity[]> {
    if (ids.length === 0) return [];
    const found = await this.db.read<{ entity: EntityRow }>(RECALLED_ENTITIES, { ids, userId: scope.userId, channels: scope.channels }, TAG('recalledEntities'));
    return inOrder(
      ids,
      found.map((r) => toEntity(r.entity)),
    );
  }

  private vectorFacts<R>(scope: AccessScope, embedding: number[], q: FactQuery, rows: Rows): Promise<Array<{ fact: R; score: number }>> {
    return this.vectorSearch(scope, embedding, q.limit, {
      sizes: this.smallFacts,
      held: this.heldFacts,
      filter: { channels: scope.channels, connections: scope.connections, ...ANY_TIME },
      searches: FACT_SEARCH[rows],
      params: { ...factParams(scope, q), embedding },
    });
  }

  private vectorEntities<R>(scope: AccessScope, embedding: number[], q: EntityQuery, rows: Rows): Promise<Array<{ entity: R; score: number }>> {
    return this.vectorSearch(scope, embedding, q.limit, {
      sizes: this.smallEntities,
      held: this.heldEntities,
      // Memory holds no entity types: a search by type scans.
      filter: !q.types?.length ? { channels: scope.channels, connections: null, ...ANY_TIME } : undefined,
      searches: ENTITY_SEARCH[rows],
      params: { ...entityParams(scope, q), embedding },
    });
  }

  /** A full-text search of one label (`searches.fulltext`); none when the text leaves no Lucene terms. */
  private async fullText<T extends RecordShape>(scope: AccessScope, text: string, limit: number, searches: Searches, params: Record<string, unknown>): Promise<T[]> {
    const query = scopedLuceneQuery(scope, luceneQuery(text));
    if (!query) return [];
    return this.db.read<T>(searches.fulltext, { ...params, k: scopedFulltextK(limit), query }, TAG(searches.ops.fulltext));
  }

  /**
   * A vector search of one label: the shared index, or for a small user (or when the index
   * found too few) the exact scan of their nodes, ranked from memory when they are held.
   */
  private vectorSearch<T extends RecordShape>(
    scope: AccessScope,
    embedding: number[],
    limit: number,
    s: { sizes: SmallOwners; held: OwnerVectors | undefined; filter: HeldFilter | undefined; searches: Searches; params: Record<string, unknown> },
  ): Promise<T[]> {
    const { userId } = scope;
    const { searches: cypher, params } = s;
    const op = cypher.ops.vector;
    const index = (k: number) => this.db.read<T>(cypher.index, { ...params, k }, TAG(op));
    const scan = () => this.db.read<T>(cypher.exact, params, TAG(`${op}Exact`));
    const ranked = (r: HeldRanking) => this.db.read<T>(cypher.held, { ...params, ranked: r.ranked, seen: r.seen }, TAG(`${op}Held`));
    // Held for small users only, as turns are (a large user's vectors would crowd out many small ones).
    const exact = () => (s.held !== undefined && s.sizes.known(userId) === true ? s.held.search(userId, embedding, s.filter, limit, ranked, scan) : scan());
    return indexOrFallback(limit, index, exact, { sizes: s.sizes, userId });
  }

  /** How the user's fact and entity embeddings are held in this process (as the episodic store's `holdVectors`). */
  async holdVectors(userId: string, mode: HoldMode): Promise<void> {
    for (const held of [this.heldFacts, this.heldEntities]) await held?.holdMode(userId, mode);
  }

  /** Resolves once the embeddings being read into memory are held (tests). */
  async heldVectorsSettled(): Promise<void> {
    await Promise.all([this.heldFacts?.settled(), this.heldEntities?.settled()]);
  }

  async recordAccess(scope: AccessScope, ids: { factIds?: string[]; entityIds?: string[] }): Promise<number> {
    const factIds = ids.factIds ?? [];
    const entityIds = ids.entityIds ?? [];
    if (factIds.length + entityIds.length === 0) return 0;
    // The one access-count write (addAccessCounts's queries), both kinds in one transaction.
    const at = new Date().toISOString();
    const bump = (ids: string[]) => ids.map((id) => ({ id, userId: scope.userId, n: 1, at }));
    return this.db.writeTx(async (tx) => {
      const nf = factIds.length ? ((await rows<{ n: number }>(tx, ADD_ACCESS_COUNTS.fact, { rows: bump(factIds) }))[0]?.n ?? 0) : 0;
      const ne = entityIds.length ? ((await rows<{ n: number }>(tx, ADD_ACCESS_COUNTS.entity, { rows: bump(entityIds) }))[0]?.n ?? 0) : 0;
      return nf + ne;
    }, TAG('recordAccess'));
  }

  // ------------------------------------------------------------------ promotion

  promoteToGlobal(scope: AccessScope, factId: string, thresholds: PromotionThresholds, force: boolean): Promise<PromotionResult> {
    const { userId } = scope;
    return this.db.writeTx(async (tx) => {
      await tx.run(LOCK_USER, { userId });
      const [m] = await rows<{ status: string; channel: string; confidence: number; accessCount: number; conversations: number; globalId: string | null }>(tx, PROMOTION_MEASURES, { userId, factId });
      if (!m) throw new NotFoundError('fact', factId);
      const measures = { sourceChannel: m.channel, confidence: m.confidence, accessCount: m.accessCount, conversationCount: m.conversations, thresholds };
      const skippedBecause: string[] = [];
      if (m.channel === GLOBAL_CHANNEL) skippedBecause.push('already in _global');
      if (m.globalId) {
        const [g] = await rows<{ fact: FactRow }>(tx, GET_FACT, { userId, factId: m.globalId });
        return { promoted: false, globalFact: g ? toFact(g.fact) : null, ...measures, skippedBecause: ['already promoted'] };
      }
      if (m.status !== 'active') skippedBecause.push(`fact is ${m.status}`);
      if (!force) skippedBecause.push(...belowThresholds(measures, thresholds));
      if (skippedBecause.length > 0) return { promoted: false, globalFact: null, ...measures, skippedBecause };
      const [row] = await rows<{ fact: FactRow }>(tx, PROMOTE, { userId, factId, newId: randomUUID(), scopeKey: writeKey(withChannels(scope, [GLOBAL_CHANNEL])) });
      return { promoted: true, globalFact: toFact(created(row, userId).fact), ...measures, skippedBecause };
    }, TAG('promoteToGlobal'));
  }

  async findPromotionCandidates(thresholds: PromotionThresholds, limit: number): Promise<Array<{ userId: string; factId: string; channel: string }>> {
    return this.db.read(PROMOTION_CANDIDATES, { ...thresholds, limit }, TAG('findPromotionCandidates'));
  }

  // ----------------------------------------------------------------- embeddings

  async pendingEmbeddings(limit: number): Promise<Array<{ label: 'Entity' | 'Fact'; id: string; text: string }>> {
    return this.db.read(PENDING, { limit }, TAG('pendingEmbeddings'));
  }

  async setEmbeddings(items: Array<{ label: 'Entity' | 'Fact'; id: string; embedding: number[] }>): Promise<number> {
    const entityRows = items.filter((r) => r.label === 'Entity').map(({ id, embedding }) => ({ id, embedding }));
    const factRows = items.filter((r) => r.label === 'Fact').map(({ id, embedding }) => ({ id, embedding }));
    let n = 0;
    if (entityRows.length) n += (await this.db.write<{ n: number }>(SET_ENTITY_EMBEDDINGS, { rows: entityRows }, TAG('setEmbeddings')))[0]?.n ?? 0;
    if (factRows.length) n += (await this.db.write<{ n: number }>(SET_FACT_EMBEDDINGS, { rows: factRows }, TAG('setEmbeddings')))[0]?.n ?? 0;
    return n;
  }

  // ---------------------------------------------------------------- recall support

  async factsWithMatchingSource(scope: AccessScope, ids: string[], filters: TurnFilters): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.db.read<{ id: string }>(FACTS_WITH_MATCHING_SOURCE, { userId: scope.userId, ids, ...turnFilterParams(filters) }, TAG('factsWithMatchingSource'))).map((r) => r.id);
  }

  async entitiesWithMatchingSource(scope: AccessScope, ids: string[], filters: TurnFilters): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.db.read<{ id: string }>(ENTITIES_WITH_MATCHING_SOURCE, { userId: scope.userId, ids, ...turnFilterParams(filters) }, TAG('entitiesWithMatchingSource'))).map((r) => r.id);
  }

  async addAccessCounts(kind: 'fact' | 'entity', rows: AccessCount[]): Promise<number> {
    if (rows.length === 0) return 0;
    return (await this.db.write<{ n: number }>(ADD_ACCESS_COUNTS[kind], { rows }, TAG('addAccessCounts')))[0]?.n ?? 0;
  }
}

/** The thresholds a fact's measures fall short of, as readable reasons (empty: passes all). */
export function belowThresholds(m: { confidence: number; accessCount: number; conversationCount: number }, t: PromotionThresholds): string[] {
  const out: string[] = [];
  if (m.confidence < t.minConfidence) out.push(`confidence ${m.confidence} < ${t.minConfidence}`);
  if (m.accessCount < t.minAccessCount) out.push(`access count ${m.accessCount} < ${t.minAccessCount}`);
  if (m.conversationCount < t.minConversations) out.push(`conversations ${m.conversationCount} < ${t.minConversations}`);
  return out;
}

function factParams(scope: AccessScope, q: FactQuery): Record<string, unknown> {
  return {
    userId: scope.userId,
    channels: scope.channels,
    connections: scope.connections,
    limit: q.limit,
    includeInactive: q.includeInactive ?? false,
    minConfidence: q.minConfidence ?? 0,
    entityId: q.entityId ?? null,
    predicate: q.predicate ?? null,
  };
}

function entityParams(scope: AccessScope, q: EntityQuery): Record<string, unknown> {
  return { userId: scope.userId, channels: scope.channels, limit: q.limit, types: q.types && q.types.length > 0 ? q.types : null };
}

// ---------------------------------------------------------------- recall support

// $userId, $ids, $source, $sessionId, $connectionId, $contextType -> {id}: the facts with a matching source turn
const FACTS_WITH_MATCHING_SOURCE = `
UNWIND $ids AS xid MATCH (f:Fact {id: xid}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
  AND EXISTS { MATCH (f)-[:DERIVED_FROM]->(t:Turn) WHERE ${TURN_MATCHES_FILTERS} }
RETURN f.id AS id`;

// $userId, $ids, $source, $sessionId, $connectionId, $contextType -> {id}: the entities a conversation with a matching turn mentions
const ENTITIES_WITH_MATCHING_SOURCE = `
UNWIND $ids AS xid MATCH (e:Entity {id: xid}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId
  AND EXISTS { MATCH (c:Conversation)-[:MENTIONS]->(e) MATCH (c)-[:HAS_TURN]->(t:Turn) WHERE ${TURN_MATCHES_FILTERS} }
RETURN e.id AS id`;

// Each: $rows: [AccessCount] -> {n}
const ADD_ACCESS_COUNTS = { fact: addAccessCountsCypher('Fact'), entity: addAccessCountsCypher('Entity') } as const;

/**
 * The row of a create that MATCHes the user's node: none when the user was erased while this
 * transaction ran (the erasure deleted the node after LOCK_USER merged it). Nothing was
 * written; the caller gets 409, not a crash on a missing row.
 */
function created<R>(row: R | undefined, userId: string): R {
  if (row === undefined) throw new UserBeingErasedError(userId);
  return row;
}
