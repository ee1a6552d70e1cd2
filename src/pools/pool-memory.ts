import { randomUUID } from 'node:crypto';
import type { AuditLogger } from '../audit';
import type { Embedder } from '../embedding';
import { NotFoundError, ValidationError } from '../errors';
import type { Logger } from '../infra/logger';
import { LOCAL_PRINCIPAL, TenantNamespace, type AccessPrincipal } from '../access';
import type { FusionSettings } from '../retrieval/sources/hybrid';
import { parseInput } from '../schemas';
import { checkDimensions, embeddingForWrite } from '../semantic/embed';
import {
  CreatePoolInputSchema,
  EntryInputSchema,
  EntryRefSchema,
  EntryUpdateSchema,
  GrantInputSchema,
  ImportanceInputSchema,
  ListEntriesSchema,
  PoolRefSchema,
  PoolSearchSchema,
  PublicReadInputSchema,
  RestoreVersionSchema,
  RevokeInputSchema,
  SnapshotInputSchema,
  SnapshotRefSchema,
  type CreatePoolInput,
  type EntryInput,
  type EntryUpdate,
  type EntryVersion,
  type GrantInput,
  type MemoryPool,
  type PoolEntry,
  type PoolScope,
  type PoolSearch,
  type PoolSnapshot,
  type PoolStats,
  type PoolStore,
  type PoolType,
  type RevokeInput,
  type SnapshotRestore,
} from './contract';
import { searchPools, type PoolSearchHit } from './search';
import { adjustImportance } from './relevance';

export interface PoolMemoryDeps {
  store: PoolStore;
  embedder: Embedder;
  audit: AuditLogger;
  log: Logger;
  /** How pool search fuses full-text and vector (the recall settings'). */
  fusion: FusionSettings;
}

/** The channel pool audit rows are filed under (pools are a tenant's, not a user's channel). */
const AUDIT_CHANNEL = '_pools';
const DEFAULT_SCOPE: Record<PoolType, PoolScope> = { shared: 'account', agent_private: 'agent', team_shared: 'team', task_scoped: 'task' };

/**
 * Memory pools in the facade (`AgentMemory.pools`): validates, embeds, calls the store as the
 * principal it acts for (the API key's tenant, key and agent; never an id from input) and
 * audits every read, write, grant and revoke as memory type `shared`.
 */
export class PoolMemory {
  constructor(
    private readonly d: PoolMemoryDeps,
    private readonly principal: AccessPrincipal = LOCAL_PRINCIPAL,
  ) {}

  /** The same pool memory acting for `principal`. */
  as(principal: AccessPrincipal): PoolMemory {
    return new PoolMemory(this.d, principal);
  }

  /**
   * Creates a pool owned by the calling agent (an admin key may name any owner, or none).
   * Idempotent on `poolId`. An agent key naming another owner is refused (ValidationError).
   */
  async createPool(input: CreatePoolInput): Promise<{ pool: MemoryPool; created: boolean }> {
    const p = parseInput(CreatePoolInputSchema, input, 'pool');
    const me = this.principal.agentId;
    if (me !== null && p.ownerAgent !== undefined && p.ownerAgent !== me) {
      throw new ValidationError(`invalid pool: an agent key creates pools it owns itself (${me}); ownerAgent ${p.ownerAgent} needs an admin key`, {
        issues: [{ path: 'ownerAgent', message: 'not the calling agent' }],
      });
    }
    if (p.type === 'agent_private' && (p.access.read.length > 0 || p.access.write.length > 0 || p.access.publicRead)) {
      throw new ValidationError('invalid pool: an agent_private pool has no grants; only its owner reads and writes it', { issues: [{ path: 'access', message: 'must be empty' }] });
    }
    const owner = p.ownerAgent ?? me;
    if (p.type === 'agent_private' && owner === null) throw new ValidationError('invalid pool: an agent_private pool needs ownerAgent', { issues: [{ path: 'ownerAgent', message: 'required' }] });
    // A generated id is the tenant's like a chosen one (namespaced as the API edge namespaces input).
    const id = p.poolId ?? (this.principal.tenantId === null ? randomUUID() : new TenantNamespace(this.principal.tenantId).toInternal(randomUUID(), 'poolId'));
    const t0 = performance.now();
    const result = await this.d.store.createPool(this.principal, {
      id,
      name: p.name ?? id,
      type: p.type,
      scope: p.scope ?? DEFAULT_SCOPE[p.type],
      ownerAgent: owner,
      access: p.access,
      expiresAt: p.expiresAt ?? null,
    });
    if (result.created) this.write('create_pool', id, [id], t0, { type: p.type, ownerAgent: owner, access: p.access });
    return result;
  }

  /** Pools the caller may read (all of the tenant's for an admin key), newest first. */
  async listPools(): Promise<MemoryPool[]> {
    const t0 = performance.now();
    const pools = await this.d.store.listPools(this.principal);
    this.read('list_pools', null, 'pools', pools.length, t0);
    return pools;
  }

  /** The pool, or null when it is not there or the caller may not read it. */
  async getPool(poolId: string): Promise<MemoryPool | null> {
    const q = parseInput(PoolRefSchema, { poolId }, 'pool reference');
    const t0 = performance.now();
    const pool = await this.d.store.getPool(this.principal, q.poolId);
    this.read('get_pool', q.poolId, q.poolId, pool ? 1 : 0, t0);
    return pool;
  }

  /** Deletes the pool with its entries, versions and snapshots (owner or admin key). */
  async deletePool(poolId: string): Promise<{ poolId: string; entries: number; versions: number; snapshots: number }> {
    const q = parseInput(PoolRefSchema, { poolId }, 'pool reference');
    const t0 = performance.now();
    const r = await this.d.store.deletePool(this.principal, q.poolId);
    // What went is counts, not content: kept at every audit level (a payload only at verbose).
    this.write('delete_pool', q.poolId, [q.poolId], t0, undefined, undefined, { deleted: r });
    return { poolId: q.poolId, ...r };
  }

  async grant(input: GrantInput): Promise<MemoryPool> {
    const g = parseInput(GrantInputSchema, input, 'grant');
    const t0 = performance.now();
    const pool = await this.d.store.grant(this.principal, g.poolId, g.agentId, g.level);
    this.write('grant_pool_access', g.poolId, [g.poolId], t0, { agentId: g.agentId, level: g.level });
    return pool;
  }

  async revoke(input: RevokeInput): Promise<MemoryPool> {
    const g = parseInput(RevokeInputSchema, input, 'revoke');
    const t0 = performance.now();
    const pool = await this.d.store.revoke(this.principal, g.poolId, g.agentId, g.level);
    this.write('revoke_pool_access', g.poolId, [g.poolId], t0, { agentId: g.agentId, level: g.level ?? 'all' });
    return pool;
  }

  async setPublicRead(poolId: string, publicRead: boolean): Promise<MemoryPool> {
    const g = parseInput(PublicReadInputSchema, { poolId, publicRead }, 'public read');
    const t0 = performance.now();
    const pool = await this.d.store.setPublicRead(this.principal, g.poolId, g.publicRead);
    this.write('set_pool_public_read', g.poolId, [g.poolId], t0, { publicRead: g.publicRead });
    return pool;
  }

  async stats(poolId: string): Promise<PoolStats> {
    const q = parseInput(PoolRefSchema, { poolId }, 'pool reference');
    const t0 = performance.now();
    const s = await this.d.store.poolStats(this.principal, q.poolId);
    this.read('pool_stats', q.poolId, q.poolId, s.entries, t0);
    return s;
  }

  /** Pools and entries the caller may read: the "shared" tier's counts. */
  countShared(): Promise<{ pools: number; entries: number }> {
    return this.d.store.countShared(this.principal);
  }

  /** Writes an entry (write grant, owner or admin); embedded with the service's embedder. */
  async addEntry(input: EntryInput): Promise<PoolEntry> {
    const e = parseInput(EntryInputSchema, input, 'pool entry');
    const embedding = await embeddingForWrite(this.d.embedder, this.d.log, 'pools', e.content, e.embedding);
    const t0 = performance.now();
    const entry = await this.d.store.addEntry(this.principal, e.poolId, {
      id: randomUUID(),
      kind: e.kind,
      source: e.source,
      content: e.content,
      importance: e.importance,
      confidence: e.confidence,
      userId: e.userId ?? null,
      provenance: e.provenance,
      expiresAt: e.expiresAt ?? null,
      embedding: embedding ?? null,
    });
    this.write('add_pool_entry', e.poolId, [entry.id], t0, { kind: e.kind, source: e.source, content: e.content }, e.userId);
    return entry;
  }

  /** The entry (counting an access), or null when missing or in a pool the caller may not read. */
  async getEntry(poolId: string, entryId: string): Promise<PoolEntry | null> {
    const q = parseInput(EntryRefSchema, { poolId, entryId }, 'pool entry reference');
    const t0 = performance.now();
    const entry = await this.d.store.getEntry(this.principal, q.poolId, q.entryId);
    this.read('get_pool_entry', q.poolId, q.entryId, entry ? 1 : 0, t0, entry?.userId ?? undefined);
    return entry;
  }

  /** A page of the pool's entries, newest first; `cursor` is the offset the previous page's `nextCursor` gave. */
  async listEntries(input: { poolId: string; userId?: string; kind?: PoolEntry['kind']; includeArchived?: boolean; limit?: number; cursor?: string }): Promise<PoolEntry[]> {
    const { poolId, cursor, ...q } = parseInput(ListEntriesSchema, input, 'pool entry list');
    const t0 = performance.now();
    const entries = await this.d.store.listEntries(this.principal, poolId, { ...q, offset: cursor === undefined ? 0 : Number(cursor) });
    this.read('list_pool_entries', poolId, poolId, entries.length, t0, q.userId);
    return entries;
  }

  /** A new version of the entry (content re-embedded when it changed); the history keeps the old one. */
  async updateEntry(input: EntryUpdate): Promise<PoolEntry> {
    const u = parseInput(EntryUpdateSchema, input, 'pool entry update');
    const embedding = u.content === undefined ? undefined : ((await embeddingForWrite(this.d.embedder, this.d.log, 'pools', u.content, undefined)) ?? null);
    const t0 = performance.now();
    const entry = await this.d.store.updateEntry(this.principal, u.poolId, u.entryId, {
      change: 'update',
      content: u.content,
      kind: u.kind,
      importance: u.importance,
      confidence: u.confidence,
      embedding,
      note: u.note,
    });
    this.write(
      'update_pool_entry',
      u.poolId,
      [entry.id],
      t0,
      { version: entry.version, content: u.content, kind: u.kind, importance: u.importance, confidence: u.confidence },
      entry.userId ?? undefined,
    );
    return entry;
  }

  async deleteEntry(poolId: string, entryId: string): Promise<boolean> {
    const q = parseInput(EntryRefSchema, { poolId, entryId }, 'pool entry reference');
    const t0 = performance.now();
    const deleted = await this.d.store.deleteEntry(this.principal, q.poolId, q.entryId);
    if (deleted) this.write('delete_pool_entry', q.poolId, [q.entryId], t0);
    return deleted;
  }

  /** Every version of the entry, oldest first, with who changed it; null when it is not there. */
  async history(poolId: string, entryId: string): Promise<EntryVersion[] | null> {
    const q = parseInput(EntryRefSchema, { poolId, entryId }, 'pool entry reference');
    const t0 = performance.now();
    const versions = await this.d.store.history(this.principal, q.poolId, q.entryId);
    this.read('pool_entry_history', q.poolId, q.entryId, versions?.length ?? 0, t0);
    return versions;
  }

  /** Restores version `version` as the entry's next version (the history keeps everything). */
  async restoreVersion(input: { poolId: string; entryId: string; version: number }): Promise<PoolEntry> {
    const r = parseInput(RestoreVersionSchema, input, 'version restore');
    const versions = await this.d.store.history(this.principal, r.poolId, r.entryId);
    if (!versions) throw new NotFoundError('pool entry', r.entryId);
    const old = versions.find((v) => v.version === r.version);
    if (!old) throw new NotFoundError('version', `${r.entryId}@${r.version}`);
    const embedding = (await embeddingForWrite(this.d.embedder, this.d.log, 'pools', old.content, undefined)) ?? null;
    const t0 = performance.now();
    const entry = await this.d.store.updateEntry(this.principal, r.poolId, r.entryId, {
      change: 'restore',
      content: old.content,
      kind: old.kind,
      importance: old.importance,
      confidence: old.confidence,
      embedding,
      note: `restored version ${r.version}`,
    });
    this.write('restore_pool_entry', r.poolId, [entry.id], t0, { restoredVersion: r.version, version: entry.version }, entry.userId ?? undefined);
    return entry;
  }

  /** Moves importance up (`boost`) or down (`reduce`) by `amount` (default 0.1), within [0, 1], as a new version. */
  async adjustImportance(input: { poolId: string; entryId: string; direction: 'boost' | 'reduce'; amount?: number }): Promise<PoolEntry> {
    const a = parseInput(ImportanceInputSchema, input, 'importance change');
    const t0 = performance.now();
    const delta = adjustImportance(0.5, a.direction, a.amount) - 0.5;
    const entry = await this.d.store.updateEntry(this.principal, a.poolId, a.entryId, { change: a.direction, importanceDelta: delta });
    this.write(`${a.direction}_pool_entry`, a.poolId, [entry.id], t0, { amount: a.amount, importance: entry.importance }, entry.userId ?? undefined);
    return entry;
  }

  /**
   * Hybrid search over the pools the caller may read (or the given ones, each of which must
   * be readable: an unreadable one is "not found"). Each hit says its pool and its signals.
   */
  async search(input: PoolSearch): Promise<PoolSearchHit[]> {
    const q = parseInput(PoolSearchSchema, input, 'pool search');
    const t0 = performance.now();
    let pools = this.principal.agentId === null ? (await this.d.store.listPools(this.principal)).map((p) => ({ id: p.id, name: p.name })) : await this.d.store.readablePools(this.principal);
    if (q.poolIds) {
      const readable = new Set(pools.map((p) => p.id));
      const missing = q.poolIds.find((id) => !readable.has(id));
      if (missing) throw new NotFoundError('pool', missing);
      pools = pools.filter((p) => q.poolIds!.includes(p.id));
    }
    const embedding = pools.length > 0 ? await this.queryEmbedding(q.query) : undefined;
    const hits = await searchPools(this.d.store, this.d.fusion, { actor: this.principal, pools, query: q.query, embedding, userId: q.userId ?? null, limit: q.topK });
    this.read('search_pools', null, q.query, hits.length, t0, q.userId, { pools: pools.map((p) => p.id) });
    return hits;
  }

  async takeSnapshot(poolId: string, note?: string): Promise<PoolSnapshot> {
    const s = parseInput(SnapshotInputSchema, { poolId, note }, 'snapshot');
    const t0 = performance.now();
    const snap = await this.d.store.takeSnapshot(this.principal, s.poolId, randomUUID(), s.note ?? null);
    this.write('snapshot_pool', s.poolId, [snap.id], t0, { entries: snap.entryCount });
    return snap;
  }

  async listSnapshots(poolId: string): Promise<PoolSnapshot[]> {
    const q = parseInput(PoolRefSchema, { poolId }, 'pool reference');
    const t0 = performance.now();
    const snaps = await this.d.store.listSnapshots(this.principal, q.poolId);
    this.read('list_pool_snapshots', q.poolId, q.poolId, snaps.length, t0);
    return snaps;
  }

  /** Puts the pool back as the snapshot captured it (owner or admin key). */
  async restoreSnapshot(poolId: string, snapshotId: string): Promise<SnapshotRestore> {
    const s = parseInput(SnapshotRefSchema, { poolId, snapshotId }, 'snapshot reference');
    const t0 = performance.now();
    const report = await this.d.store.restoreSnapshot(this.principal, s.poolId, s.snapshotId);
    this.write('restore_pool_snapshot', s.poolId, [s.snapshotId], t0, { ...report });
    return report;
  }

  private async queryEmbedding(query: string): Promise<number[] | undefined> {
    try {
      const v = (await this.d.embedder.embed([query], { priority: 'interactive', input: 'query' }))[0];
      if (v) checkDimensions(this.d.embedder, v, 'embedding');
      return v;
    } catch (err) {
      this.d.log.warn({ subsystem: 'pools', err: (err as Error).message }, 'query embedding failed; searching pools by keyword only');
      return undefined;
    }
  }

  private actor(): Record<string, unknown> {
    return { tenantId: this.principal.tenantId, agentId: this.principal.agentId, keyId: this.principal.keyId };
  }

  private write(operation: string, poolId: string, affectedIds: string[], t0: number, payload?: Record<string, unknown>, userId?: string, extra: Record<string, unknown> = {}): void {
    this.d.audit.logWrite({
      operation,
      memoryType: 'shared',
      userId: userId ?? '',
      channel: AUDIT_CHANNEL,
      affectedIds,
      latencyMs: performance.now() - t0,
      payload,
      metadata: { poolId, actor: this.actor(), ...extra },
    });
  }

  private read(operation: string, poolId: string | null, query: string, resultCount: number, t0: number, userId?: string, extra: Record<string, unknown> = {}): void {
    this.d.audit.logRead({
      operation,
      memoryType: 'shared',
      userId: userId ?? '',
      channel: AUDIT_CHANNEL,
      query,
      channelsSearched: [AUDIT_CHANNEL],
      resultCount,
      latencyMs: performance.now() - t0,
      metadata: { poolId, actor: this.actor(), ...extra },
    });
  }
}
