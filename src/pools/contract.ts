import type { AccessPrincipal } from '../access';
import type { EntryKind, EntrySource, GrantLevel, PoolScope, PoolType } from './schema';

export * from './schema';

/**
 * Shared memory pools (seed 001 `MemoryPool`, `ContextEntry`, `PersistentContext`
 * snapshots): spaces of one tenant that several agents read and write under grants.
 *
 * Nodes (all carry `tenant_id`; ids are tenant-namespaced at the API edge):
 * - `(:MemoryPool)`: type, scope, owner agent, grants (`read_agents`, `write_agents`,
 *   `public_read`), expiry.
 * - `(:PoolEntry)`: the current version of an entry: `pool_id`, kind, source, verbatim
 *   content, importance, confidence, embedding, access count, provenance, optional
 *   `user_id` (then it is that user's personal data), status `active` | `archived`.
 * - `(:PoolEntryVersion)`: one per version, `(:PoolEntry)-[:HAS_VERSION]->(v)`,
 *   `(newer)-[:PREVIOUS_VERSION]->(older)`, with who changed what and when.
 * - `(:PoolSnapshot)` and its `(:PoolSnapshotEntry)` copies (by `snapshot_id`).
 *
 * Every operation takes the acting principal (tenant, key, agent) first and checks the
 * pool's grants in the same transaction (src/pools/access.ts): no read right is "not found",
 * read without write (or admin) is ForbiddenError.
 */

/** Who acts: the principal of the request (tenant, key, agent); an agent of null is the whole tenant. */
export type PoolActor = AccessPrincipal;

export interface PoolGrants {
  read: string[];
  write: string[];
  publicRead: boolean;
}

export interface MemoryPool {
  id: string;
  name: string;
  type: PoolType;
  scope: PoolScope;
  ownerAgent: string | null;
  access: PoolGrants;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  createdBy: { agentId: string | null; keyId: string | null };
}

export interface EntryProvenance {
  /** The agent and key that wrote the entry (from the request's key, never from input). */
  agentId: string | null;
  keyId: string | null;
  conversationId: string | null;
  turnId: string | null;
  toolCallId: string | null;
  note: string | null;
  /** Near-duplicates merged into this entry, each with its own provenance and content. */
  mergedFrom: Array<{
    entryId: string;
    content: string;
    agentId: string | null;
    keyId: string | null;
    conversationId: string | null;
    turnId: string | null;
    toolCallId: string | null;
    createdAt: string;
  }>;
}

export interface PoolEntry {
  id: string;
  poolId: string;
  version: number;
  kind: EntryKind;
  source: EntrySource;
  content: string;
  importance: number;
  confidence: number;
  accessCount: number;
  lastAccessedAt: string | null;
  userId: string | null;
  status: 'active' | 'archived';
  provenance: EntryProvenance;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  /** importance, confidence and recency combined (src/pools/relevance.ts). */
  effectiveRelevance: number;
}

export type VersionChange = 'create' | 'update' | 'restore' | 'boost' | 'reduce' | 'merge' | 'snapshot_restore';

export interface EntryVersion {
  entryId: string;
  version: number;
  content: string;
  kind: EntryKind;
  importance: number;
  confidence: number;
  change: VersionChange;
  note: string | null;
  changedBy: { agentId: string | null; keyId: string | null };
  at: string;
}

export interface PoolSnapshot {
  id: string;
  poolId: string;
  note: string | null;
  entryCount: number;
  createdAt: string;
  createdBy: { agentId: string | null; keyId: string | null };
}

export interface PoolStats {
  poolId: string;
  entries: number;
  archived: number;
  versions: number;
  snapshots: number;
  accessCount: number;
  byKind: Record<string, number>;
}

export interface SnapshotRestore {
  snapshotId: string;
  /** Entries set back to their captured version (as a new version). */
  restored: number;
  /** Entries deleted since the snapshot, created again. */
  recreated: number;
  /** Entries created after the snapshot, removed. */
  removed: number;
  unchanged: number;
}

/** A pool to create; its tenant and creator are the actor's. */
export type NewPool = Omit<MemoryPool, 'createdAt' | 'updatedAt' | 'createdBy'>;

export interface NewEntry {
  id: string;
  kind: EntryKind;
  source: EntrySource;
  content: string;
  importance: number;
  confidence: number;
  userId: string | null;
  provenance: { conversationId?: string; turnId?: string; toolCallId?: string; note?: string };
  expiresAt: string | null;
  embedding: number[] | null;
}

/** One change to an entry, written as its next version. */
export interface EntryChange {
  change: VersionChange;
  content?: string;
  kind?: EntryKind;
  importance?: number;
  /** Added to importance (boost / reduce), kept within [0, 1]; applied in the write, so concurrent boosts add up. */
  importanceDelta?: number;
  confidence?: number;
  /** The new content's embedding (null: none could be made). */
  embedding?: number[] | null;
  note?: string;
}

/** A pool entry found by a search, with its pool and the signal's raw score. */
export interface PoolHit {
  entry: PoolEntry;
  poolName: string;
  score: number;
}

export interface PoolSearchOptions {
  /** Whose recall: entries about another user are left out; null = every entry (a search with no user). */
  userId: string | null;
  limit: number;
}

export interface PoolStore {
  /** Creates the pool (idempotent on id: a repeat returns the stored one, `created: false`; an id of another tenant is a ValidationError). */
  createPool(actor: PoolActor, pool: NewPool): Promise<{ pool: MemoryPool; created: boolean }>;
  /** Pools the actor may read (every pool of the tenant for an admin), newest first. */
  listPools(actor: PoolActor): Promise<MemoryPool[]>;
  /** The pool, or null when it is not the tenant's, expired, or unreadable for the actor. */
  getPool(actor: PoolActor, poolId: string): Promise<MemoryPool | null>;
  /** Deletes the pool with its entries, versions and snapshots (admin right). */
  deletePool(actor: PoolActor, poolId: string): Promise<{ entries: number; versions: number; snapshots: number }>;
  /** Adds a read or write grant (admin right; not on `agent_private` pools). */
  grant(actor: PoolActor, poolId: string, agentId: string, level: GrantLevel): Promise<MemoryPool>;
  /** Removes a grant (both levels without `level`); the next request sees it. */
  revoke(actor: PoolActor, poolId: string, agentId: string, level?: GrantLevel): Promise<MemoryPool>;
  setPublicRead(actor: PoolActor, poolId: string, publicRead: boolean): Promise<MemoryPool>;
  poolStats(actor: PoolActor, poolId: string): Promise<PoolStats>;

  /** Writes a new entry as version 1 (write right). */
  addEntry(actor: PoolActor, poolId: string, entry: NewEntry): Promise<PoolEntry>;
  /** The entry, or null (also when the pool is unreadable). Counts an access. */
  getEntry(actor: PoolActor, poolId: string, entryId: string): Promise<PoolEntry | null>;
  /** Entries newest first (active only unless `includeArchived`); `userId` keeps entries about no user or that user. */
  listEntries(actor: PoolActor, poolId: string, q: { userId?: string; kind?: EntryKind; includeArchived: boolean; limit: number; offset?: number }): Promise<PoolEntry[]>;
  /** Writes `change` as the entry's next version, linked to the previous one (write right). NotFoundError for a missing entry. */
  updateEntry(actor: PoolActor, poolId: string, entryId: string, change: EntryChange): Promise<PoolEntry>;
  /** Deletes the entry and its versions (write right); false when there was none. */
  deleteEntry(actor: PoolActor, poolId: string, entryId: string): Promise<boolean>;
  /** Every version, oldest first (read right); null when the entry is not there. */
  history(actor: PoolActor, poolId: string, entryId: string): Promise<EntryVersion[] | null>;

  /** Captures every entry of the pool as it is now (admin right). */
  takeSnapshot(actor: PoolActor, poolId: string, snapshotId: string, note: string | null): Promise<PoolSnapshot>;
  listSnapshots(actor: PoolActor, poolId: string): Promise<PoolSnapshot[]>;
  /** Puts the pool's entries back as captured: changed ones get a new version, deleted ones come back, later ones go (admin right). */
  restoreSnapshot(actor: PoolActor, poolId: string, snapshotId: string): Promise<SnapshotRestore>;

  // Recall support (src/retrieval/sources/pool-source.ts).

  /** The pools an agent may read right now (never cached); empty for a principal without an agent. */
  readablePools(actor: Pick<PoolActor, 'tenantId' | 'agentId'>): Promise<Array<{ id: string; name: string }>>;
  /** Full-text hits among the given (readable) pools' active entries, best first. */
  fulltextSearch(actor: Pick<PoolActor, 'tenantId'>, poolIds: string[], words: string, q: PoolSearchOptions): Promise<PoolHit[]>;
  /** Nearest active entries of the given pools by embedding, best first; score (1 + cosine) / 2. */
  vectorSearch(actor: Pick<PoolActor, 'tenantId'>, poolIds: string[], embedding: number[], q: PoolSearchOptions): Promise<PoolHit[]>;
  /** Recall access counts (rows' userId is ignored: pool entries are the tenant's). */
  addAccessCounts(rows: Array<{ id: string; n: number; at: string }>): Promise<number>;
  /** Pools and active entries of a tenant the actor may read (the "shared" tier's statistics). */
  countShared(actor: Pick<PoolActor, 'tenantId' | 'agentId'>): Promise<{ pools: number; entries: number }>;
}

/** The maintenance operations of the `pools` job, across tenants (src/worker/jobs/pools.ts). */
export interface PoolUpkeep {
  /** Deletes expired pools (with everything in them) and expired entries; at most `limit` of each per call. */
  removeExpired(now: string, limit: number): Promise<{ pools: number; entries: number }>;
  /** Active entries last touched before `before`, for the staleness score; ordered by id after `afterId`. */
  staleCandidates(before: string, limit: number, afterId: string | null): Promise<Array<Pick<PoolEntry, 'id' | 'importance' | 'confidence' | 'updatedAt' | 'lastAccessedAt' | 'expiresAt'>>>;
  /** Archives the entries (status `archived`: out of recall and lists). */
  archiveEntries(ids: string[], now: string): Promise<number>;
  /** Every pool id (to walk them one at a time). */
  poolIds(): Promise<string[]>;
  /** Pairs of active entries of one pool about the same user (or none) whose embeddings score at least `minScore` ((1 + cosine) / 2), best first. */
  duplicatePairs(poolId: string, minScore: number, limit: number): Promise<Array<{ a: string; b: string; score: number }>>;
  /**
   * Merges `dropId` into `keepId` (same pool): the keeper gets a new version (change `merge`)
   * holding the dropped entry's provenance and content in `mergedFrom` (and what was merged
   * into it before), the higher importance and confidence, and the summed access count; the
   * dropped entry and its versions go. False when either is gone.
   */
  mergeEntries(keepId: string, dropId: string, now: string): Promise<boolean>;
}
