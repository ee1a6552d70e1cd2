import type { ManagedTransaction } from 'neo4j-driver';
import { poolKey } from '../access';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors';
import { keyedLuceneQuery, luceneQuery } from '../infra/fulltext-scope';
import { rows, type CypherRunner } from '../infra/neo4j';
import { check, type PoolRight } from './access';
import type {
  EntryChange,
  EntryKind,
  EntryProvenance,
  EntryVersion,
  GrantLevel,
  MemoryPool,
  NewEntry,
  NewPool,
  PoolActor,
  PoolEntry,
  PoolHit,
  PoolSearchOptions,
  PoolSnapshot,
  PoolStats,
  PoolStore,
  PoolUpkeep,
  SnapshotRestore,
} from './contract';
import { effectiveRelevance } from './relevance';

const TAG = (op: string) => ({ subsystem: 'pools', op });
/** The library and the CLI without --tenant act for this tenant id. */
const LOCAL_TENANT = '';
const tenantOf = (actor: { tenantId: string | null }) => actor.tenantId ?? LOCAL_TENANT;

// Projection of a MemoryPool `p`.
const POOL = `{ id: p.id, name: p.name, type: p.type, scope: p.scope, ownerAgent: p.owner_agent,
  access: {read: p.read_agents, write: p.write_agents, publicRead: p.public_read},
  expiresAt: toString(p.expires_at), createdAt: toString(p.created_at), updatedAt: toString(p.updated_at),
  createdBy: {agentId: p.created_by_agent, keyId: p.created_by_key} }`;
// Projection of a PoolEntry `e` (mergedFrom as JSON text, parsed by toEntry).
const ENTRY = `{ id: e.id, poolId: e.pool_id, version: e.version, kind: e.kind, source: e.source, content: e.content,
  importance: e.importance, confidence: e.confidence, accessCount: coalesce(e.access_count, 0), lastAccessedAt: toString(e.last_accessed),
  userId: e.user_id, status: e.status, agentId: e.agent_id, keyId: e.key_id, conversationId: e.conversation_id, turnId: e.turn_id,
  toolCallId: e.tool_call_id, note: e.provenance_note, mergedFrom: e.merged_from_json,
  createdAt: toString(e.created_at), updatedAt: toString(e.updated_at), expiresAt: toString(e.expires_at) }`;
// Projection of a PoolEntryVersion `v`.
const VERSION = `{ entryId: v.entry_id, version: v.version, content: v.content, kind: v.kind, importance: v.importance, confidence: v.confidence,
  change: v.change, note: v.note, changedBy: {agentId: v.agent_id, keyId: v.key_id}, at: toString(v.created_at) }`;
// Projection of a PoolSnapshot `s`.
const SNAPSHOT = `{ id: s.id, poolId: s.pool_id, note: s.note, entryCount: s.entry_count, createdAt: toString(s.created_at),
  createdBy: {agentId: s.agent_id, keyId: s.key_id} }`;
// A live (unexpired) node `x`.
const LIVE = (x: string) => `(${x}.expires_at IS NULL OR ${x}.expires_at > datetime())`;
// Entry `e` visible to a recall of $userId ($anyUser: a search with no user sees all).
const FOR_USER = `($anyUser OR e.user_id IS NULL OR e.user_id = $userId)`;

// $tenantId, $poolId -> {pool, tenant}: the pool by id (tenant returned so another tenant's id is told apart)
const GET_POOL = `MATCH (p:MemoryPool {id: $poolId}) RETURN ${POOL} AS pool, p.tenant_id AS tenant, ${LIVE('p')} AS live`;
// $tenantId, $poolId, $row -> {pool}
const CREATE_POOL = `
CREATE (p:MemoryPool {id: $poolId, tenant_id: $tenantId, name: $row.name, type: $row.type, scope: $row.scope, owner_agent: $row.ownerAgent,
  read_agents: $row.read, write_agents: $row.write, public_read: $row.publicRead,
  expires_at: CASE WHEN $row.expiresAt IS NULL THEN null ELSE datetime($row.expiresAt) END,
  created_at: datetime(), updated_at: datetime(), created_by_agent: $agentId, created_by_key: $keyId})
RETURN ${POOL} AS pool`;
// $tenantId, $agentId, $all -> {pool}: the tenant's live pools the agent may read (all of them when $all), newest first
const LIST_POOLS = `
MATCH (p:MemoryPool) WHERE p.tenant_id = $tenantId AND ${LIVE('p')}
  AND ($all OR p.owner_agent = $agentId OR p.public_read OR $agentId IN p.read_agents OR $agentId IN p.write_agents)
RETURN ${POOL} AS pool ORDER BY p.created_at DESC, p.id`;
// $tenantId, $agentId -> {id, name}: the pools an agent may read now
const READABLE_POOLS = `
MATCH (p:MemoryPool) WHERE p.tenant_id = $tenantId AND ${LIVE('p')}
  AND (p.owner_agent = $agentId OR p.public_read OR $agentId IN p.read_agents OR $agentId IN p.write_agents)
RETURN p.id AS id, coalesce(p.name, p.id) AS name`;
// $poolId, $read, $write, $publicRead -> {pool}
const SET_GRANTS = `
MATCH (p:MemoryPool {id: $poolId})
SET p.read_agents = $read, p.write_agents = $write, p.public_read = $publicRead, p.updated_at = datetime()
RETURN ${POOL} AS pool`;
// $poolId -> {n}: deletes in batches (each returns how many went)
const DELETE_POOL_VERSIONS = `MATCH (v:PoolEntryVersion) WHERE v.pool_id = $poolId WITH v LIMIT 5000 DETACH DELETE v RETURN count(*) AS n`;
const DELETE_POOL_ENTRIES = `MATCH (e:PoolEntry) WHERE e.pool_id = $poolId WITH e LIMIT 5000 DETACH DELETE e RETURN count(*) AS n`;
const DELETE_POOL_SNAPSHOT_ENTRIES = `MATCH (x:PoolSnapshotEntry) WHERE x.pool_id = $poolId WITH x LIMIT 5000 DETACH DELETE x RETURN count(*) AS n`;
const DELETE_POOL_SNAPSHOTS = `MATCH (s:PoolSnapshot) WHERE s.pool_id = $poolId WITH s LIMIT 5000 DETACH DELETE s RETURN count(*) AS n`;
const DELETE_POOL = `MATCH (p:MemoryPool {id: $poolId}) DETACH DELETE p RETURN count(*) AS n`;
// $poolId -> {entries, archived, versions, snapshots, accessCount, kinds}
const POOL_STATS = `
RETURN
  COUNT { MATCH (e:PoolEntry) WHERE e.pool_id = $poolId AND e.status = 'active' } AS entries,
  COUNT { MATCH (e:PoolEntry) WHERE e.pool_id = $poolId AND e.status = 'archived' } AS archived,
  COUNT { MATCH (v:PoolEntryVersion) WHERE v.pool_id = $poolId } AS versions,
  COUNT { MATCH (s:PoolSnapshot) WHERE s.pool_id = $poolId } AS snapshots,
  COLLECT { MATCH (e:PoolEntry) WHERE e.pool_id = $poolId RETURN sum(coalesce(e.access_count, 0)) AS n }[0] AS accessCount,
  COLLECT { MATCH (e:PoolEntry) WHERE e.pool_id = $poolId AND e.status = 'active' WITH e.kind AS kind, count(*) AS n RETURN {kind: kind, n: n} AS k } AS kinds`;

// $row (entry), $poolId, $tenantId, $poolKey, $agentId, $keyId, $change, $note -> {entry}: the entry and its version 1
const CREATE_ENTRY = `
CREATE (e:PoolEntry {id: $row.id, tenant_id: $tenantId, pool_id: $poolId, pool_key: $poolKey, version: 1, kind: $row.kind, source: $row.source,
  content: $row.content, importance: toFloat($row.importance), confidence: toFloat($row.confidence), access_count: 0, status: 'active',
  user_id: $row.userId, agent_id: $agentId, key_id: $keyId, conversation_id: $row.conversationId, turn_id: $row.turnId,
  tool_call_id: $row.toolCallId, provenance_note: $row.note, merged_from_json: $row.mergedFrom,
  expires_at: CASE WHEN $row.expiresAt IS NULL THEN null ELSE datetime($row.expiresAt) END,
  created_at: coalesce(datetime($row.createdAt), datetime()), updated_at: datetime()})
CREATE (v:PoolEntryVersion {id: $row.id + ':1', entry_id: $row.id, tenant_id: $tenantId, pool_id: $poolId, user_id: $row.userId, version: 1,
  content: $row.content, kind: $row.kind, importance: toFloat($row.importance), confidence: toFloat($row.confidence),
  change: $change, note: $note, agent_id: $agentId, key_id: $keyId, created_at: datetime()})
CREATE (e)-[:HAS_VERSION]->(v)
WITH e
CALL (e) { WITH e WHERE $row.embedding IS NOT NULL CALL db.create.setNodeVectorProperty(e, 'embedding', $row.embedding) }
RETURN ${ENTRY} AS entry`;
// $poolId, $entryId -> {entry}
const GET_ENTRY = `MATCH (e:PoolEntry {id: $entryId}) WHERE e.pool_id = $poolId AND ${LIVE('e')} RETURN ${ENTRY} AS entry`;
// $poolId, $entryId, $at -> nothing: one access
const TOUCH_ENTRY = `MATCH (e:PoolEntry {id: $entryId}) WHERE e.pool_id = $poolId SET e.access_count = coalesce(e.access_count, 0) + 1, e.last_accessed = datetime($at)`;
// $poolId, $userId, $anyUser, $kind, $statuses, $limit -> {entry}
const LIST_ENTRIES = `
MATCH (e:PoolEntry) WHERE e.pool_id = $poolId AND e.status IN $statuses AND ${LIVE('e')} AND ${FOR_USER} AND ($kind IS NULL OR e.kind = $kind)
RETURN ${ENTRY} AS entry ORDER BY e.updated_at DESC, e.id SKIP toInteger($offset) LIMIT toInteger($limit)`;
// $poolId, $entryId, $c (EntryChange fields, nulls kept), $agentId, $keyId -> {entry}: the next version, linked to the previous one
const UPDATE_ENTRY = `
MATCH (e:PoolEntry {id: $entryId}) WHERE e.pool_id = $poolId
OPTIONAL MATCH (e)-[:HAS_VERSION]->(prev:PoolEntryVersion {version: e.version})
SET e.version = e.version + 1,
    e.content = coalesce($c.content, e.content),
    e.kind = coalesce($c.kind, e.kind),
    e.importance = CASE WHEN $c.importanceDelta IS NOT NULL THEN toFloat(round((CASE WHEN e.importance + $c.importanceDelta > 1.0 THEN 1.0 WHEN e.importance + $c.importanceDelta < 0.0 THEN 0.0 ELSE e.importance + $c.importanceDelta END) * 1000000) / 1000000)
                        ELSE toFloat(coalesce($c.importance, e.importance)) END,
    e.confidence = toFloat(coalesce($c.confidence, e.confidence)),
    e.merged_from_json = coalesce($c.mergedFrom, e.merged_from_json),
    e.access_count = coalesce(e.access_count, 0) + coalesce($c.addAccess, 0),
    e.status = CASE WHEN $c.reactivate THEN 'active' ELSE e.status END,
    e.updated_at = datetime()
CREATE (v:PoolEntryVersion {id: e.id + ':' + toString(e.version), entry_id: e.id, tenant_id: e.tenant_id, pool_id: e.pool_id, user_id: e.user_id,
  version: e.version, content: e.content, kind: e.kind, importance: e.importance, confidence: e.confidence,
  change: $c.change, note: $c.note, agent_id: $agentId, key_id: $keyId, created_at: datetime()})
CREATE (e)-[:HAS_VERSION]->(v)
WITH e, v, prev
CALL (v, prev) { WITH v, prev WHERE prev IS NOT NULL CREATE (v)-[:PREVIOUS_VERSION]->(prev) }
CALL (e) { WITH e WHERE $c.setEmbedding AND $c.embedding IS NOT NULL CALL db.create.setNodeVectorProperty(e, 'embedding', $c.embedding) }
CALL (e) { WITH e WHERE $c.setEmbedding AND $c.embedding IS NULL REMOVE e.embedding }
RETURN ${ENTRY} AS entry`;
// Cypher tail: deletes the matched entries `e` with their versions -> {n}
const DELETE_WITH_VERSIONS = `
OPTIONAL MATCH (e)-[:HAS_VERSION]->(v:PoolEntryVersion)
DETACH DELETE v
WITH DISTINCT e
DETACH DELETE e
RETURN count(*) AS n`;
// $entryIds -> {n}: entries deleted with their versions and their snapshot copies
const PURGE_ENTRIES = `
UNWIND $entryIds AS id
MATCH (e:PoolEntry {id: id}) USING INDEX SEEK e:PoolEntry(id)
CALL (e) { MATCH (x:PoolSnapshotEntry) WHERE x.entry_id = e.id DETACH DELETE x }
${DELETE_WITH_VERSIONS}`;
// $conversationId, $turnId (null: any) -> {id, content}: entries whose provenance is the conversation (or that turn of it)
const ENTRIES_FROM = `
MATCH (e:PoolEntry) WHERE e.conversation_id = $conversationId AND ($turnId IS NULL OR e.turn_id = $turnId)
RETURN e.id AS id, e.content AS content`;
// $userId -> {id}: entries written without a user id whose provenance is one of the user's conversations
const ENTRIES_NAMING_USER = `
MATCH (c:Conversation) WHERE c.user_id = $userId
WITH collect(c.id) AS conversations
MATCH (e:PoolEntry) WHERE e.user_id IS NULL AND e.conversation_id IN conversations
RETURN e.id AS id`;
// $poolId, $entryId -> {n}: the entry and its versions
const DELETE_ENTRY = `
MATCH (e:PoolEntry {id: $entryId}) WHERE e.pool_id = $poolId
${DELETE_WITH_VERSIONS}`;
// $poolId, $entryId -> {version}: oldest first
const HISTORY = `
MATCH (e:PoolEntry {id: $entryId}) WHERE e.pool_id = $poolId
MATCH (e)-[:HAS_VERSION]->(v:PoolEntryVersion)
RETURN ${VERSION} AS version ORDER BY v.version`;

// $snapshotId, $poolId, $tenantId, $note, $agentId, $keyId -> {snapshot}: the snapshot and a copy of every entry (with its embedding)
const TAKE_SNAPSHOT = `
CREATE (s:PoolSnapshot {id: $snapshotId, tenant_id: $tenantId, pool_id: $poolId, note: $note, agent_id: $agentId, key_id: $keyId, created_at: datetime(), entry_count: 0})
WITH s
CALL (s) {
  MATCH (e:PoolEntry) WHERE e.pool_id = $poolId
  CREATE (x:PoolSnapshotEntry {id: s.id + ':' + e.id, snapshot_id: s.id, tenant_id: e.tenant_id, pool_id: e.pool_id, entry_id: e.id,
    version: e.version, kind: e.kind, source: e.source, content: e.content, importance: e.importance, confidence: e.confidence,
    status: e.status, user_id: e.user_id, agent_id: e.agent_id, key_id: e.key_id, conversation_id: e.conversation_id, turn_id: e.turn_id,
    tool_call_id: e.tool_call_id, provenance_note: e.provenance_note, merged_from_json: e.merged_from_json,
    expires_at: e.expires_at, created_at: e.created_at, embedding: e.embedding})
  RETURN count(x) AS n
}
SET s.entry_count = n
RETURN ${SNAPSHOT} AS snapshot`;
// $poolId -> {snapshot}: newest first
const LIST_SNAPSHOTS = `MATCH (s:PoolSnapshot) WHERE s.pool_id = $poolId RETURN ${SNAPSHOT} AS snapshot ORDER BY s.created_at DESC, s.id`;
// $poolId, $snapshotId -> {found}
const SNAPSHOT_EXISTS = `RETURN EXISTS { MATCH (s:PoolSnapshot {id: $snapshotId}) WHERE s.pool_id = $poolId } AS found`;
// $poolId, $snapshotId -> {entryId, captured, current, same}: each captured entry against the pool now
const SNAPSHOT_DIFF = `
MATCH (x:PoolSnapshotEntry) WHERE x.snapshot_id = $snapshotId AND x.pool_id = $poolId
OPTIONAL MATCH (e:PoolEntry {id: x.entry_id})
RETURN x.entry_id AS entryId, e IS NOT NULL AS exists,
  e IS NOT NULL AND e.content = x.content AND e.kind = x.kind AND e.importance = x.importance AND e.confidence = x.confidence AND e.status = x.status AS same`;
// $poolId, $snapshotId -> {n}: entries of the pool the snapshot does not hold, with their versions
const REMOVE_UNCAPTURED = `
MATCH (e:PoolEntry) WHERE e.pool_id = $poolId AND NOT EXISTS { MATCH (x:PoolSnapshotEntry {id: $snapshotId + ':' + e.id}) }
${DELETE_WITH_VERSIONS}`;
// $snapshotId, $entryId, $agentId, $keyId -> {n}: an entry deleted since, created again from its copy (version 1, change snapshot_restore)
const RECREATE_FROM_SNAPSHOT = `
MATCH (x:PoolSnapshotEntry {id: $snapshotId + ':' + $entryId})
CREATE (e:PoolEntry {id: x.entry_id, tenant_id: x.tenant_id, pool_id: x.pool_id, pool_key: $poolKey, version: 1, kind: x.kind, source: x.source,
  content: x.content, importance: x.importance, confidence: x.confidence, access_count: 0, status: x.status, user_id: x.user_id,
  agent_id: x.agent_id, key_id: x.key_id, conversation_id: x.conversation_id, turn_id: x.turn_id, tool_call_id: x.tool_call_id,
  provenance_note: x.provenance_note, merged_from_json: x.merged_from_json, expires_at: x.expires_at, created_at: x.created_at, updated_at: datetime()})
CREATE (v:PoolEntryVersion {id: x.entry_id + ':1', entry_id: x.entry_id, tenant_id: x.tenant_id, pool_id: x.pool_id, user_id: x.user_id, version: 1,
  content: x.content, kind: x.kind, importance: x.importance, confidence: x.confidence, change: 'snapshot_restore', note: 'snapshot ' + $snapshotId,
  agent_id: $agentId, key_id: $keyId, created_at: datetime()})
CREATE (e)-[:HAS_VERSION]->(v)
WITH e, x
CALL (e, x) { WITH e, x WHERE x.embedding IS NOT NULL CALL db.create.setNodeVectorProperty(e, 'embedding', x.embedding) }
RETURN count(*) AS n`;
// $snapshotId, $entryId -> {content, kind, importance, confidence, status, embedding}: a captured entry
const CAPTURED = `
MATCH (x:PoolSnapshotEntry {id: $snapshotId + ':' + $entryId})
RETURN x.content AS content, x.kind AS kind, x.importance AS importance, x.confidence AS confidence, x.status AS status, x.embedding AS embedding`;
// $entryId, $status -> nothing
const SET_STATUS = `MATCH (e:PoolEntry {id: $entryId}) SET e.status = $status`;

// ---------------------------------------------------------------- recall support

// $query (Lucene, pool_key-scoped), $k, $tenantId, $poolIds, $userId, $anyUser, $limit -> {entry, poolName, score}
const FULLTEXT = `
CALL db.index.fulltext.queryNodes('pool_entry_text', $query, {limit: toInteger($k)}) YIELD node AS e, score
WHERE e.tenant_id = $tenantId AND e.pool_id IN $poolIds AND e.status = 'active' AND ${LIVE('e')} AND ${FOR_USER}
RETURN ${ENTRY} AS entry, score ORDER BY score DESC LIMIT toInteger($limit)`;
// $k, $embedding, $tenantId, $poolIds, $userId, $anyUser, $limit -> {entry, score} from the (unfiltered) vector index
const VECTOR_INDEX = `
CALL db.index.vector.queryNodes('pool_entry_embeddings', toInteger($k), $embedding) YIELD node AS e, score
WHERE e.tenant_id = $tenantId AND e.pool_id IN $poolIds AND e.status = 'active' AND ${LIVE('e')} AND ${FOR_USER}
RETURN ${ENTRY} AS entry, score ORDER BY score DESC LIMIT toInteger($limit)`;
// $embedding, $tenantId, $poolIds, $userId, $anyUser, $limit -> {entry, score}: exact cosine over the pools' entries (pool_id index seek)
const VECTOR_SCAN = `
MATCH (e:PoolEntry) WHERE e.pool_id IN $poolIds AND e.tenant_id = $tenantId AND e.status = 'active' AND ${LIVE('e')} AND ${FOR_USER} AND e.embedding IS NOT NULL
WITH e, vector.similarity.cosine(e.embedding, $embedding) AS score ORDER BY score DESC LIMIT toInteger($limit)
RETURN ${ENTRY} AS entry, score`;
// $poolIds -> {n}: entries in the pools
const COUNT_IN_POOLS = `MATCH (e:PoolEntry) WHERE e.pool_id IN $poolIds RETURN count(e) AS n`;
// $rows: [{id, n, at}] -> {n}
const ADD_ACCESS_COUNTS = `
UNWIND $rows AS r
MATCH (e:PoolEntry {id: r.id})
SET e.access_count = coalesce(e.access_count, 0) + r.n,
    e.last_accessed = CASE WHEN e.last_accessed IS NULL OR e.last_accessed < datetime(r.at) THEN datetime(r.at) ELSE e.last_accessed END
RETURN count(e) AS n`;
// $poolIds -> {n}: active entries of those pools
const COUNT_ACTIVE = `MATCH (e:PoolEntry) WHERE e.pool_id IN $poolIds AND e.status = 'active' RETURN count(e) AS n`;

// ---------------------------------------------------------------- upkeep

// $now, $limit -> {id}: expired pools
const EXPIRED_POOLS = `MATCH (p:MemoryPool) WHERE p.expires_at <= datetime($now) RETURN p.id AS id LIMIT toInteger($limit)`;
// $now, $limit -> {n}: expired entries with their versions
const DELETE_EXPIRED_ENTRIES = `
MATCH (e:PoolEntry) WHERE e.expires_at <= datetime($now)
WITH e LIMIT toInteger($limit)
${DELETE_WITH_VERSIONS}`;
// $before, $afterId, $limit -> {id, importance, confidence, updatedAt, lastAccessedAt, expiresAt}
const STALE_CANDIDATES = `
MATCH (e:PoolEntry) WHERE e.status = 'active' AND coalesce(e.last_accessed, e.updated_at) < datetime($before) AND ($afterId IS NULL OR e.id > $afterId)
RETURN e.id AS id, e.importance AS importance, e.confidence AS confidence, toString(e.updated_at) AS updatedAt,
  toString(e.last_accessed) AS lastAccessedAt, toString(e.expires_at) AS expiresAt
ORDER BY e.id LIMIT toInteger($limit)`;
// $ids, $now -> {n}
const ARCHIVE = `UNWIND $ids AS id MATCH (e:PoolEntry {id: id}) WHERE e.status = 'active' SET e.status = 'archived', e.archived_at = datetime($now) RETURN count(e) AS n`;
// -> {id}
const ALL_POOLS = `MATCH (p:MemoryPool) RETURN p.id AS id ORDER BY id`;
// $poolId, $minScore, $k, $limit -> {a, b, score}: near-duplicate pairs (a < b) of one pool through the vector index
const DUPLICATE_PAIRS = `
MATCH (a:PoolEntry) WHERE a.pool_id = $poolId AND a.status = 'active' AND a.embedding IS NOT NULL
CALL (a) {
  CALL db.index.vector.queryNodes('pool_entry_embeddings', toInteger($k), a.embedding) YIELD node AS b, score
  WITH a, b, score WHERE b.pool_id = a.pool_id AND a.id < b.id AND b.status = 'active' AND score >= $minScore
    AND coalesce(b.user_id, '') = coalesce(a.user_id, '')
  RETURN b, score
}
RETURN a.id AS a, b.id AS b, score ORDER BY score DESC, a, b LIMIT toInteger($limit)`;
// $poolId, $minScore, $limit -> {a, b, score}: the same pairs by exact cosine over every pair of the pool (small pools: the
// approximate index, asked for a few neighbours, can miss an exact twin among many similar entries)
const DUPLICATE_PAIRS_EXACT = `
MATCH (a:PoolEntry) WHERE a.pool_id = $poolId AND a.status = 'active' AND a.embedding IS NOT NULL
MATCH (b:PoolEntry) WHERE b.pool_id = $poolId AND b.status = 'active' AND b.embedding IS NOT NULL AND a.id < b.id
  AND coalesce(b.user_id, '') = coalesce(a.user_id, '')
WITH a, b, vector.similarity.cosine(a.embedding, b.embedding) AS score WHERE score >= $minScore
RETURN a.id AS a, b.id AS b, score ORDER BY score DESC, a, b LIMIT toInteger($limit)`;
// $poolId -> {n}: active entries of one pool
const COUNT_POOL_ACTIVE = `MATCH (e:PoolEntry) WHERE e.pool_id = $poolId AND e.status = 'active' RETURN count(e) AS n`;
// $ids -> {entry, tenantId, poolId}
const ENTRIES_BY_ID = `UNWIND $ids AS id MATCH (e:PoolEntry {id: id}) RETURN ${ENTRY} AS entry, e.tenant_id AS tenantId`;

/** An entry as stored: the provenance flat beside it, `mergedFrom` as JSON. */
type EntryRow = Omit<PoolEntry, 'provenance' | 'effectiveRelevance'> & Omit<EntryProvenance, 'mergedFrom'> & { mergedFrom: string | null };

/** An entry row as the contract's PoolEntry (provenance gathered, mergedFrom parsed, relevance scored). */
export function toEntry(r: EntryRow, now = Date.now()): PoolEntry {
  const { agentId, keyId, conversationId, turnId, toolCallId, note, mergedFrom, ...rest } = r;
  const provenance: EntryProvenance = { agentId, keyId, conversationId, turnId, toolCallId, note, mergedFrom: mergedFrom ? (JSON.parse(mergedFrom) as EntryProvenance['mergedFrom']) : [] };
  const entry = { ...rest, provenance, effectiveRelevance: 0 };
  entry.effectiveRelevance = effectiveRelevance(entry, now);
  return entry;
}

/** Runs a batched delete until it deletes nothing; the total. */
async function drain(tx: ManagedTransaction, cypher: string, params: Record<string, unknown>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = (await rows<{ n: number }>(tx, cypher, params))[0]?.n ?? 0;
    total += n;
    if (n < 5000) return total;
  }
}

/**
 * Pool entries that are a user's personal data by provenance (written from their
 * conversations), for the deletes that take them (src/forgetting) and forget-user
 * (src/tenancy). Each runs in the caller's transaction.
 */
export const poolProvenance = {
  /** Entries written from the conversation (or from its turn `turnId`). */
  entriesFrom: (tx: ManagedTransaction, conversationId: string, turnId: string | null) => rows<{ id: string; content: string }>(tx, ENTRIES_FROM, { conversationId, turnId }),
  /** Entries without a user id written from any of the user's conversations. */
  namingUser: async (tx: ManagedTransaction, userId: string) => (await rows<{ id: string }>(tx, ENTRIES_NAMING_USER, { userId })).map((r) => r.id),
  /** Deletes the entries with their versions and snapshot copies; returns how many entries went. */
  purge: async (tx: ManagedTransaction, entryIds: string[]) => (entryIds.length === 0 ? 0 : ((await rows<{ n: number }>(tx, PURGE_ENTRIES, { entryIds }))[0]?.n ?? 0)),
};

export class Neo4jPoolStore implements PoolStore, PoolUpkeep {
  constructor(
    private readonly db: CypherRunner,
    private readonly opts: { scanMaxEntries?: number } = {},
  ) {}

  /** The pool if the actor holds `right` on it: NotFoundError when it may not read it (or it is not there), ForbiddenError when it reads but lacks the right. */
  private async pool(tx: ManagedTransaction, actor: PoolActor, poolId: string, right: PoolRight): Promise<MemoryPool> {
    const [row] = await rows<{ pool: MemoryPool; tenant: string; live: boolean }>(tx, GET_POOL, { poolId });
    if (!row || row.tenant !== tenantOf(actor) || !row.live) throw new NotFoundError('pool', poolId);
    const verdict = check(row.pool, actor, right);
    if (verdict === 'hidden') throw new NotFoundError('pool', poolId);
    if (verdict === 'forbidden') {
      throw new ForbiddenError(
        `agent ${actor.agentId} may ${right === 'write' ? 'read but not write' : 'not administer'} pool ${poolId}; ${right === 'write' ? 'ask its owner for a write grant' : 'only its owner or an admin key may'}`,
        {
          poolId,
          agentId: actor.agentId,
          needs: right,
        },
      );
    }
    return row.pool;
  }

  private readTx<R>(actor: PoolActor, poolId: string, right: PoolRight, op: string, work: (tx: ManagedTransaction, pool: MemoryPool) => Promise<R>): Promise<R> {
    return this.db.writeTx(async (tx) => work(tx, await this.pool(tx, actor, poolId, right)), TAG(op));
  }

  createPool(actor: PoolActor, pool: NewPool): Promise<{ pool: MemoryPool; created: boolean }> {
    return this.db.writeTx(async (tx) => {
      const [row] = await rows<{ pool: MemoryPool; tenant: string }>(tx, GET_POOL, { poolId: pool.id });
      if (row) {
        if (row.tenant !== tenantOf(actor) || check(row.pool, actor, 'read') === 'hidden') throw new ValidationError(`pool id ${pool.id} is already in use; choose another id`, { poolId: pool.id });
        return { pool: row.pool, created: false };
      }
      const [made] = await rows<{ pool: MemoryPool }>(tx, CREATE_POOL, {
        poolId: pool.id,
        tenantId: tenantOf(actor),
        agentId: actor.agentId,
        keyId: actor.keyId,
        row: {
          name: pool.name,
          type: pool.type,
          scope: pool.scope,
          ownerAgent: pool.ownerAgent,
          read: pool.access.read,
          write: pool.access.write,
          publicRead: pool.access.publicRead,
          expiresAt: pool.expiresAt,
        },
      });
      return { pool: made!.pool, created: true };
    }, TAG('createPool'));
  }

  async listPools(actor: PoolActor): Promise<MemoryPool[]> {
    const found = await this.db.read<{ pool: MemoryPool }>(LIST_POOLS, { tenantId: tenantOf(actor), agentId: actor.agentId, all: actor.agentId === null }, TAG('listPools'));
    return found.map((r) => r.pool);
  }

  async getPool(actor: PoolActor, poolId: string): Promise<MemoryPool | null> {
    const [row] = await this.db.read<{ pool: MemoryPool; tenant: string; live: boolean }>(GET_POOL, { poolId }, TAG('getPool'));
    return row && row.live && row.tenant === tenantOf(actor) && check(row.pool, actor, 'read') === 'ok' ? row.pool : null;
  }

  deletePool(actor: PoolActor, poolId: string): Promise<{ entries: number; versions: number; snapshots: number }> {
    return this.readTx(actor, poolId, 'admin', 'deletePool', async (tx) => cascade(tx, poolId));
  }

  grant(actor: PoolActor, poolId: string, agentId: string, level: GrantLevel): Promise<MemoryPool> {
    return this.readTx(actor, poolId, 'admin', 'grant', async (tx, pool) => {
      if (pool.type === 'agent_private') throw new ValidationError(`pool ${poolId} is agent_private: only its owner reads and writes it`, { poolId });
      const read = level === 'read' ? union(pool.access.read, agentId) : pool.access.read;
      const write = level === 'write' ? union(pool.access.write, agentId) : pool.access.write;
      return this.setGrants(tx, poolId, read, write, pool.access.publicRead);
    });
  }

  revoke(actor: PoolActor, poolId: string, agentId: string, level?: GrantLevel): Promise<MemoryPool> {
    return this.readTx(actor, poolId, 'admin', 'revoke', async (tx, pool) => {
      // Write implies read: revoking read (or both) takes write too; revoking write leaves an explicit read grant.
      const read = level === 'write' ? pool.access.read : pool.access.read.filter((a) => a !== agentId);
      const write = pool.access.write.filter((a) => a !== agentId);
      return this.setGrants(tx, poolId, read, write, pool.access.publicRead);
    });
  }

  setPublicRead(actor: PoolActor, poolId: string, publicRead: boolean): Promise<MemoryPool> {
    return this.readTx(actor, poolId, 'admin', 'setPublicRead', async (tx, pool) => {
      if (publicRead && pool.type === 'agent_private') throw new ValidationError(`pool ${poolId} is agent_private: it cannot be publicly readable`, { poolId });
      return this.setGrants(tx, poolId, pool.access.read, pool.access.write, publicRead);
    });
  }

  private async setGrants(tx: ManagedTransaction, poolId: string, read: string[], write: string[], publicRead: boolean): Promise<MemoryPool> {
    return (await rows<{ pool: MemoryPool }>(tx, SET_GRANTS, { poolId, read, write, publicRead }))[0]!.pool;
  }

  poolStats(actor: PoolActor, poolId: string): Promise<PoolStats> {
    return this.readTx(actor, poolId, 'read', 'poolStats', async (tx) => {
      const [r] = await rows<Omit<PoolStats, 'poolId' | 'byKind'> & { kinds: Array<{ kind: string; n: number }> }>(tx, POOL_STATS, { poolId });
      const { kinds, ...counts } = r!;
      return { poolId, ...counts, accessCount: counts.accessCount ?? 0, byKind: Object.fromEntries(kinds.map((k) => [k.kind, k.n])) };
    });
  }

  addEntry(actor: PoolActor, poolId: string, entry: NewEntry): Promise<PoolEntry> {
    return this.readTx(actor, poolId, 'write', 'addEntry', async (tx) => {
      const [row] = await rows<{ entry: EntryRow }>(tx, CREATE_ENTRY, {
        poolId,
        tenantId: tenantOf(actor),
        poolKey: poolKey(actor.tenantId, poolId),
        agentId: actor.agentId,
        keyId: actor.keyId,
        change: 'create',
        note: entry.provenance.note ?? null,
        row: {
          id: entry.id,
          kind: entry.kind,
          source: entry.source,
          content: entry.content,
          importance: entry.importance,
          confidence: entry.confidence,
          userId: entry.userId,
          conversationId: entry.provenance.conversationId ?? null,
          turnId: entry.provenance.turnId ?? null,
          toolCallId: entry.provenance.toolCallId ?? null,
          note: entry.provenance.note ?? null,
          mergedFrom: null,
          expiresAt: entry.expiresAt,
          createdAt: null,
          embedding: entry.embedding,
        },
      });
      return toEntry(row!.entry);
    });
  }

  getEntry(actor: PoolActor, poolId: string, entryId: string): Promise<PoolEntry | null> {
    return this.db
      .writeTx(async (tx) => {
        await this.pool(tx, actor, poolId, 'read');
        const [row] = await rows<{ entry: EntryRow }>(tx, GET_ENTRY, { poolId, entryId });
        if (!row) return null;
        await tx.run(TOUCH_ENTRY, { poolId, entryId, at: new Date().toISOString() });
        return toEntry(row.entry);
      }, TAG('getEntry'))
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === 'NOT_FOUND') return null;
        throw err;
      });
  }

  listEntries(actor: PoolActor, poolId: string, q: { userId?: string; kind?: EntryKind; includeArchived: boolean; limit: number; offset?: number }): Promise<PoolEntry[]> {
    return this.readTx(actor, poolId, 'read', 'listEntries', async (tx) => {
      const found = await rows<{ entry: EntryRow }>(tx, LIST_ENTRIES, {
        poolId,
        userId: q.userId ?? null,
        anyUser: q.userId === undefined,
        kind: q.kind ?? null,
        statuses: q.includeArchived ? ['active', 'archived'] : ['active'],
        limit: q.limit,
        offset: q.offset ?? 0,
      });
      const now = Date.now();
      return found.map((r) => toEntry(r.entry, now));
    });
  }

  updateEntry(actor: PoolActor, poolId: string, entryId: string, change: EntryChange): Promise<PoolEntry> {
    return this.readTx(actor, poolId, 'write', 'updateEntry', async (tx) => {
      const [row] = await rows<{ entry: EntryRow }>(tx, UPDATE_ENTRY, { poolId, entryId, agentId: actor.agentId, keyId: actor.keyId, c: changeParams(change) });
      if (!row) throw new NotFoundError('pool entry', entryId);
      return toEntry(row.entry);
    });
  }

  deleteEntry(actor: PoolActor, poolId: string, entryId: string): Promise<boolean> {
    return this.readTx(actor, poolId, 'write', 'deleteEntry', async (tx) => ((await rows<{ n: number }>(tx, DELETE_ENTRY, { poolId, entryId }))[0]?.n ?? 0) > 0);
  }

  history(actor: PoolActor, poolId: string, entryId: string): Promise<EntryVersion[] | null> {
    return this.readTx(actor, poolId, 'read', 'history', async (tx) => {
      const found = await rows<{ version: EntryVersion }>(tx, HISTORY, { poolId, entryId });
      return found.length === 0 ? null : found.map((r) => r.version);
    });
  }

  takeSnapshot(actor: PoolActor, poolId: string, snapshotId: string, note: string | null): Promise<PoolSnapshot> {
    return this.readTx(actor, poolId, 'admin', 'takeSnapshot', async (tx) => {
      const [row] = await rows<{ snapshot: PoolSnapshot }>(tx, TAKE_SNAPSHOT, { snapshotId, poolId, tenantId: tenantOf(actor), note, agentId: actor.agentId, keyId: actor.keyId });
      return row!.snapshot;
    });
  }

  listSnapshots(actor: PoolActor, poolId: string): Promise<PoolSnapshot[]> {
    return this.readTx(actor, poolId, 'read', 'listSnapshots', async (tx) => (await rows<{ snapshot: PoolSnapshot }>(tx, LIST_SNAPSHOTS, { poolId })).map((r) => r.snapshot));
  }

  restoreSnapshot(actor: PoolActor, poolId: string, snapshotId: string): Promise<SnapshotRestore> {
    return this.readTx(actor, poolId, 'admin', 'restoreSnapshot', async (tx) => {
      if (!(await rows<{ found: boolean }>(tx, SNAPSHOT_EXISTS, { poolId, snapshotId }))[0]?.found) throw new NotFoundError('snapshot', snapshotId);
      const report: SnapshotRestore = { snapshotId, restored: 0, recreated: 0, removed: 0, unchanged: 0 };
      report.removed = (await rows<{ n: number }>(tx, REMOVE_UNCAPTURED, { poolId, snapshotId }))[0]?.n ?? 0;
      const diff = await rows<{ entryId: string; exists: boolean; same: boolean }>(tx, SNAPSHOT_DIFF, { poolId, snapshotId });
      for (const d of diff) {
        if (!d.exists) {
          await tx.run(RECREATE_FROM_SNAPSHOT, { snapshotId, entryId: d.entryId, poolKey: poolKey(actor.tenantId, poolId), agentId: actor.agentId, keyId: actor.keyId });
          report.recreated += 1;
        } else if (d.same) {
          report.unchanged += 1;
        } else {
          const [x] = await rows<{ content: string; kind: EntryKind; importance: number; confidence: number; status: 'active' | 'archived'; embedding: number[] | null }>(tx, CAPTURED, {
            snapshotId,
            entryId: d.entryId,
          });
          const change: EntryChange = {
            change: 'snapshot_restore',
            content: x!.content,
            kind: x!.kind,
            importance: x!.importance,
            confidence: x!.confidence,
            embedding: x!.embedding,
            note: `snapshot ${snapshotId}`,
          };
          await tx.run(UPDATE_ENTRY, { poolId, entryId: d.entryId, agentId: actor.agentId, keyId: actor.keyId, c: changeParams(change) });
          await tx.run(SET_STATUS, { entryId: d.entryId, status: x!.status });
          report.restored += 1;
        }
      }
      return report;
    });
  }

  // ---------------------------------------------------------------- recall support

  async readablePools(actor: Pick<PoolActor, 'tenantId' | 'agentId'>): Promise<Array<{ id: string; name: string }>> {
    if (actor.agentId === null) return [];
    return this.db.read<{ id: string; name: string }>(READABLE_POOLS, { tenantId: tenantOf(actor), agentId: actor.agentId }, TAG('readablePools'));
  }

  async fulltextSearch(actor: Pick<PoolActor, 'tenantId'>, poolIds: string[], words: string, q: PoolSearchOptions): Promise<PoolHit[]> {
    const query = keyedLuceneQuery(
      'pool_key',
      poolIds.map((p) => poolKey(actor.tenantId, p)),
      luceneQuery(words),
    );
    if (!query || poolIds.length === 0) return [];
    const found = await this.db.read<{ entry: EntryRow; score: number }>(
      FULLTEXT,
      { query, k: Math.min(Math.max(q.limit * 5, 50), 1_000), limit: q.limit, ...this.filter(actor, poolIds, q) },
      TAG('fulltextSearch'),
    );
    return this.hits(found);
  }

  async vectorSearch(actor: Pick<PoolActor, 'tenantId'>, poolIds: string[], embedding: number[], q: PoolSearchOptions): Promise<PoolHit[]> {
    if (poolIds.length === 0) return [];
    const params = { embedding, limit: q.limit, ...this.filter(actor, poolIds, q) };
    const k = Math.min(Math.max(q.limit * 5, 100), 2_000);
    let found = await this.db.read<{ entry: EntryRow; score: number }>(VECTOR_INDEX, { ...params, k }, TAG('vectorSearch'));
    if (found.length < q.limit) {
      // Too few of these pools' entries among the index's neighbours: small pools are scanned
      // exactly (complete and cheap); large ones get the index again, wider.
      const n = (await this.db.read<{ n: number }>(COUNT_IN_POOLS, { poolIds }, TAG('countInPools')))[0]?.n ?? 0;
      if (n > found.length) {
        found =
          n <= (this.opts.scanMaxEntries ?? 3_000)
            ? await this.db.read<{ entry: EntryRow; score: number }>(VECTOR_SCAN, params, TAG('vectorScan'))
            : await this.db.read<{ entry: EntryRow; score: number }>(VECTOR_INDEX, { ...params, k: Math.min(k * 8, 5_000) }, TAG('vectorSearch'));
      }
    }
    return this.hits(found);
  }

  private filter(actor: Pick<PoolActor, 'tenantId'>, poolIds: string[], q: PoolSearchOptions) {
    return { tenantId: tenantOf(actor), poolIds, userId: q.userId, anyUser: q.userId === null };
  }

  private hits(found: Array<{ entry: EntryRow; score: number }>): PoolHit[] {
    const now = Date.now();
    return found.map((r) => ({ entry: toEntry(r.entry, now), poolName: '', score: r.score }));
  }

  async addAccessCounts(counts: Array<{ id: string; n: number; at: string }>): Promise<number> {
    if (counts.length === 0) return 0;
    return (await this.db.write<{ n: number }>(ADD_ACCESS_COUNTS, { rows: counts.map(({ id, n, at }) => ({ id, n, at })) }, TAG('addAccessCounts')))[0]?.n ?? 0;
  }

  async countShared(actor: Pick<PoolActor, 'tenantId' | 'agentId'>): Promise<{ pools: number; entries: number }> {
    const pools =
      actor.agentId === null
        ? (await this.db.read<{ pool: MemoryPool }>(LIST_POOLS, { tenantId: tenantOf(actor), agentId: null, all: true }, TAG('countShared'))).map((r) => r.pool.id)
        : (await this.readablePools(actor)).map((p) => p.id);
    if (pools.length === 0) return { pools: 0, entries: 0 };
    const entries = (await this.db.read<{ n: number }>(COUNT_ACTIVE, { poolIds: pools }, TAG('countShared')))[0]?.n ?? 0;
    return { pools: pools.length, entries };
  }

  // ---------------------------------------------------------------- upkeep

  async removeExpired(now: string, limit: number): Promise<{ pools: number; entries: number }> {
    const expired = await this.db.read<{ id: string }>(EXPIRED_POOLS, { now, limit }, TAG('removeExpired'));
    let entries = 0;
    for (const { id } of expired) entries += (await this.db.writeTx((tx) => cascade(tx, id), TAG('removeExpired'))).entries;
    entries += (await this.db.write<{ n: number }>(DELETE_EXPIRED_ENTRIES, { now, limit }, TAG('removeExpired')))[0]?.n ?? 0;
    return { pools: expired.length, entries };
  }

  async staleCandidates(before: string, limit: number, afterId: string | null) {
    return this.db.read<Pick<PoolEntry, 'id' | 'importance' | 'confidence' | 'updatedAt' | 'lastAccessedAt' | 'expiresAt'>>(STALE_CANDIDATES, { before, limit, afterId }, TAG('staleCandidates'));
  }

  async archiveEntries(ids: string[], now: string): Promise<number> {
    if (ids.length === 0) return 0;
    return (await this.db.write<{ n: number }>(ARCHIVE, { ids, now }, TAG('archiveEntries')))[0]?.n ?? 0;
  }

  async poolIds(): Promise<string[]> {
    return (await this.db.read<{ id: string }>(ALL_POOLS, {}, TAG('poolIds'))).map((r) => r.id);
  }

  async duplicatePairs(poolId: string, minScore: number, limit: number): Promise<Array<{ a: string; b: string; score: number }>> {
    const n = (await this.db.read<{ n: number }>(COUNT_POOL_ACTIVE, { poolId }, TAG('duplicatePairs')))[0]?.n ?? 0;
    if (n < 2) return [];
    // Exact below ~1,500 entries (about a million pairs, a few seconds in a nightly job); the index above.
    if (n <= 1_500) return this.db.read<{ a: string; b: string; score: number }>(DUPLICATE_PAIRS_EXACT, { poolId, minScore, limit }, TAG('duplicatePairsExact'));
    return this.db.read<{ a: string; b: string; score: number }>(DUPLICATE_PAIRS, { poolId, minScore, k: 100, limit }, TAG('duplicatePairs'));
  }

  mergeEntries(keepId: string, dropId: string, now: string): Promise<boolean> {
    return this.db.writeTx(async (tx) => {
      const found = await rows<{ entry: EntryRow; tenantId: string }>(tx, ENTRIES_BY_ID, { ids: [keepId, dropId] });
      const keep = found.find((r) => r.entry.id === keepId);
      const drop = found.find((r) => r.entry.id === dropId);
      if (!keep || !drop || keep.entry.poolId !== drop.entry.poolId || keep.tenantId !== drop.tenantId) return false;
      const k = toEntry(keep.entry);
      const d = toEntry(drop.entry);
      const mergedFrom = [
        ...k.provenance.mergedFrom,
        {
          entryId: d.id,
          content: d.content,
          agentId: d.provenance.agentId,
          keyId: d.provenance.keyId,
          conversationId: d.provenance.conversationId,
          turnId: d.provenance.turnId,
          toolCallId: d.provenance.toolCallId,
          createdAt: d.createdAt,
        },
        ...d.provenance.mergedFrom,
      ];
      const change: EntryChange = {
        change: 'merge',
        importance: Math.max(k.importance, d.importance),
        confidence: Math.max(k.confidence, d.confidence),
        note: `merged near-duplicate ${d.id} at ${now}`,
      };
      await tx.run(UPDATE_ENTRY, {
        poolId: k.poolId,
        entryId: k.id,
        agentId: null,
        keyId: null,
        c: { ...changeParams(change), mergedFrom: JSON.stringify(mergedFrom), addAccess: d.accessCount },
      });
      await tx.run(DELETE_ENTRY, { poolId: d.poolId, entryId: d.id });
      return true;
    }, TAG('mergeEntries'));
  }
}

/** Deletes a pool and everything in it, in batches, inside the caller's transaction. */
async function cascade(tx: ManagedTransaction, poolId: string): Promise<{ entries: number; versions: number; snapshots: number }> {
  const versions = await drain(tx, DELETE_POOL_VERSIONS, { poolId });
  const entries = await drain(tx, DELETE_POOL_ENTRIES, { poolId });
  await drain(tx, DELETE_POOL_SNAPSHOT_ENTRIES, { poolId });
  const snapshots = await drain(tx, DELETE_POOL_SNAPSHOTS, { poolId });
  await tx.run(DELETE_POOL, { poolId });
  return { entries, versions, snapshots };
}

/** Every field UPDATE_ENTRY reads, nulls for those the change leaves alone. */
function changeParams(c: EntryChange) {
  return {
    change: c.change,
    content: c.content ?? null,
    kind: c.kind ?? null,
    importance: c.importance ?? null,
    importanceDelta: c.importanceDelta ?? null,
    confidence: c.confidence ?? null,
    note: c.note ?? null,
    setEmbedding: c.embedding !== undefined,
    embedding: c.embedding ?? null,
    mergedFrom: null as string | null,
    addAccess: 0,
    reactivate: c.change === 'restore' || c.change === 'update',
  };
}

function union(list: string[], item: string): string[] {
  return list.includes(item) ? list : [...list, item];
}
