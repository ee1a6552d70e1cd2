import { openHarness, type Harness } from './api-harness';
import { uid } from '../support/stack';
import { poolsJob } from '../../src/worker/jobs/pools';
import { PgAuditTrail } from '../../src/audit';

/**
 * Memory pools over real HTTP with agent-bound keys, on the real stack: who may read and
 * write (404 without read, 403 without write, for every pool route), recall across pools,
 * revokes that hold on the next request, publicRead, tenants, versions, snapshots, the
 * pools job (near-duplicates, staleness), forget-user.
 */
let h: Harness;
let tenant: { tenantId: string; key: string };
const keys: Record<string, string> = {};

type Right = 'none' | 'read' | 'write' | 'admin';
interface Ctx {
  p: string;
  e: string;
  poolId: string;
  snapshotId: string;
  userId: string;
}
/** Every pool route on pool `c.p` and its right; a case is the request and the status the owner gets. */
const CASES: Record<string, { right: Right; call: (c: Ctx) => { method: string; path: string; body?: unknown } }> = {
  searchPools: { right: 'none', call: (c) => ({ method: 'POST', path: '/v1/pools/search', body: { query: 'what is the deploy window?', poolIds: [c.poolId] } }) },
  createPool: { right: 'none', call: () => ({ method: 'POST', path: '/v1/pools', body: { name: 'scratch' } }) },
  listPools: { right: 'none', call: () => ({ method: 'GET', path: '/v1/pools' }) },
  getPool: { right: 'read', call: (c) => ({ method: 'GET', path: c.p }) },
  poolStats: { right: 'read', call: (c) => ({ method: 'GET', path: `${c.p}/stats` }) },
  listPoolEntries: { right: 'read', call: (c) => ({ method: 'POST', path: `${c.p}/entries/list`, body: {} }) },
  getPoolEntry: { right: 'read', call: (c) => ({ method: 'GET', path: c.e }) },
  poolEntryHistory: { right: 'read', call: (c) => ({ method: 'GET', path: `${c.e}/versions` }) },
  listPoolSnapshots: { right: 'read', call: (c) => ({ method: 'GET', path: `${c.p}/snapshots` }) },
  addPoolEntry: { right: 'write', call: (c) => ({ method: 'POST', path: `${c.p}/entries`, body: { content: 'written by someone' } }) },
  updatePoolEntry: { right: 'write', call: (c) => ({ method: 'PUT', path: c.e, body: { content: 'changed by someone' } }) },
  restorePoolEntryVersion: { right: 'write', call: (c) => ({ method: 'POST', path: `${c.e}/restore`, body: { version: 1 } }) },
  adjustPoolEntryImportance: { right: 'write', call: (c) => ({ method: 'POST', path: `${c.e}/importance`, body: { direction: 'reduce' } }) },
  deletePoolEntry: { right: 'write', call: (c) => ({ method: 'DELETE', path: c.e }) },
  grantPoolAccess: { right: 'admin', call: (c) => ({ method: 'POST', path: `${c.p}/grants`, body: { agentId: 'intruder', level: 'write' } }) },
  revokePoolAccess: { right: 'admin', call: (c) => ({ method: 'DELETE', path: `${c.p}/grants/writer` }) },
  setPoolPublicRead: { right: 'admin', call: (c) => ({ method: 'PUT', path: `${c.p}/public-read`, body: { publicRead: true } }) },
  takePoolSnapshot: { right: 'admin', call: (c) => ({ method: 'POST', path: `${c.p}/snapshots`, body: {} }) },
  restorePoolSnapshot: { right: 'admin', call: (c) => ({ method: 'POST', path: `${c.p}/snapshots/${c.snapshotId}/restore`, body: {} }) },
  deletePool: { right: 'admin', call: (c) => ({ method: 'DELETE', path: c.p }) },
};
const SECRET = 'The deploy window for the payments service is Tuesday 14:00 UTC.';

beforeAll(async () => {
  h = await openHarness({ AUDIT_LEVEL: 'reads' });
});

/** A fresh tenant with an admin key and one key per agent, so each test's grants are its own. */
async function freshTenant(): Promise<void> {
  tenant = await h.tenant();
  for (const agent of ['planner', 'reader', 'writer', 'outsider']) keys[agent] = (await h.srv.api.tenants.createKey(tenant.tenantId, { agentId: agent })).key;
}
afterAll(async () => h.close());

async function call(agent: string, req: { method: string; path: string; body?: unknown }) {
  return h.call(keys[agent] ?? agent, req.method, req.path, req.body);
}

/** A pool owned by planner (reader reads, writer writes) with one entry and a snapshot, and a user with a turn saying the same thing. */
async function setup(): Promise<Ctx> {
  await freshTenant();
  const poolId = uid('p');
  const made = await call('planner', { method: 'POST', path: '/v1/pools', body: { poolId, name: 'ops', type: 'team_shared', access: { read: ['reader'], write: ['writer'] } } });
  expect(made.status).toBe(201);
  expect(made.body.pool).toMatchObject({ id: poolId, ownerAgent: 'planner', createdBy: { agentId: 'planner' } });
  const entry = await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/entries`, body: { content: SECRET, kind: 'decision', importance: 0.7 } });
  expect(entry.status).toBe(201);
  const snap = await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/snapshots`, body: {} });
  const userId = uid('u');
  // The user's own memory says the same words, so "nothing from the pool" is about the pool, not the text.
  expect((await h.call(tenant.key, 'POST', '/v1/turns', { userId, conversationId: uid('c'), role: 'user', content: 'hello there' })).status).toBe(201);
  const p = `/v1/pools/${poolId}`;
  return { poolId, p, e: `${p}/entries/${entry.body.id}`, snapshotId: snap.body.id, userId };
}

async function recallPools(agent: string, userId: string, query = 'When is the deploy window for the payments service?') {
  const r = await call(agent, { method: 'POST', path: '/v1/recall', body: { userId, query, topK: 5 } });
  expect(r.status).toBe(200);
  return r.body.pools as Array<{ id: string; text: string; data: { poolId: string; poolName: string }; signals: Record<string, unknown> }>;
}

describe('pool access over HTTP with agent keys', () => {
  it.each(Object.entries(CASES))('%s: no read grant 404, read without the right 403, the right answers', async (id, { right, call: make }) => {
    const c = await setup();
    const req = make(c);
    const outsider = await call('outsider', req);
    if (right === 'none') {
      expect(outsider.status).toBe(id === 'createPool' ? 201 : id === 'searchPools' ? 404 : 200);
      if (id === 'listPools') expect(outsider.body.pools.map((p: { id: string }) => p.id)).not.toContain(c.poolId);
    } else {
      expect({ id, status: outsider.status, code: outsider.body.error?.code }).toEqual({ id, status: 404, code: 'NOT_FOUND' });
    }
    const reader = await call('reader', req);
    const writer = await call('writer', req);
    if (right === 'read' || right === 'none') {
      expect(reader.status).toBeLessThan(300);
      expect(writer.status).toBeLessThan(300);
    } else if (right === 'write') {
      expect({ id, status: reader.status, code: reader.body.error?.code }).toEqual({ id, status: 403, code: 'FORBIDDEN' });
      expect(writer.status).toBeLessThan(300);
    } else {
      expect({ id, status: reader.status }).toEqual({ id, status: 403 });
      expect({ id, status: writer.status }).toEqual({ id, status: 403 });
      // The owner, and an admin key (it administers every pool of its tenant; a deleted pool is deleted by it alone).
      if (id !== 'deletePool') expect((await call('planner', req)).status).toBeLessThan(300);
      expect((await h.call(tenant.key, req.method, req.path, req.body)).status).toBeLessThan(300);
    }
  });

  it('recall: a reader finds the entry with its pool and signals; an agent without a grant finds nothing, identical text included; admin keys keep today’s recall', async () => {
    const c = await setup();
    const found = await recallPools('reader', c.userId);
    expect(found[0]).toMatchObject({ text: SECRET, data: { poolId: c.poolId, poolName: 'ops' } });
    expect(Object.keys(found[0]!.signals)).toEqual(expect.arrayContaining(['pool']));
    expect(found[0]!.signals.fulltext ?? found[0]!.signals.vector).toBeDefined();
    expect(await recallPools('outsider', c.userId, SECRET)).toEqual([]);
    expect(await recallPools(tenant.key, c.userId, SECRET)).toEqual([]);
    const search = await call('outsider', { method: 'POST', path: '/v1/pools/search', body: { query: SECRET } });
    expect(search.body.results.filter((r: { poolId: string }) => r.poolId === c.poolId)).toEqual([]);
    const ctx = await call('reader', { method: 'POST', path: '/v1/recall/context', body: { userId: c.userId, query: 'deploy window payments' } });
    expect(ctx.body.context).toContain(SECRET);
    expect(ctx.body.context).toContain('pool ops');
  });

  it('a revoke holds on the very next request, in reads and recall', async () => {
    const c = await setup();
    expect((await call('reader', { method: 'GET', path: c.e })).status).toBe(200);
    expect(await recallPools('reader', c.userId)).toHaveLength(1);
    expect((await call('planner', { method: 'DELETE', path: `${c.p}/grants/reader` })).status).toBe(200);
    expect((await call('reader', { method: 'GET', path: c.e })).status).toBe(404);
    expect(await recallPools('reader', c.userId)).toEqual([]);
    // Revoking write leaves read to a writer with no read grant? No: write implied read, so writer loses both.
    expect((await call('planner', { method: 'DELETE', path: `${c.p}/grants/writer?level=write` })).status).toBe(200);
    expect((await call('writer', { method: 'GET', path: c.e })).status).toBe(404);
  });

  it('publicRead lets every agent of the tenant read, never write', async () => {
    const c = await setup();
    expect((await call('outsider', { method: 'GET', path: c.p })).status).toBe(404);
    expect((await call('planner', { method: 'PUT', path: `${c.p}/public-read`, body: { publicRead: true } })).status).toBe(200);
    expect((await call('outsider', { method: 'GET', path: c.e })).status).toBe(200);
    expect(await recallPools('outsider', c.userId)).toHaveLength(1);
    expect((await call('outsider', { method: 'PUT', path: c.e, body: { content: 'vandalised' } })).status).toBe(403);
    expect((await call('planner', { method: 'PUT', path: `${c.p}/public-read`, body: { publicRead: false } })).status).toBe(200);
    expect((await call('outsider', { method: 'GET', path: c.e })).status).toBe(404);
  });

  it('another tenant never sees or changes anything, even with an agent of the same name', async () => {
    const c = await setup();
    const other = await h.tenant();
    const otherReader = (await h.srv.api.tenants.createKey(other.tenantId, { agentId: 'reader' })).key;
    for (const [id, { call: make }] of Object.entries(CASES)) {
      if (id === 'createPool' || id === 'listPools') continue;
      for (const key of [other.key, otherReader]) {
        const r = await h.call(key, make(c).method, make(c).path, make(c).body);
        expect({ id, status: r.status }).toEqual({ id, status: 404 });
      }
    }
    const listed = await h.call(other.key, 'GET', '/v1/pools');
    expect(listed.body.pools.map((p: { id: string }) => p.id)).not.toContain(c.poolId);
    expect((await call('planner', { method: 'GET', path: c.e })).body).toMatchObject({ content: SECRET, version: 1 });
    expect((await call('planner', { method: 'GET', path: c.p })).body.access).toEqual({ read: ['reader'], write: ['writer'], publicRead: false });
  });

  it('an agent key creates pools it owns itself; agent_private pools take no grants', async () => {
    await freshTenant();
    const r = await call('reader', { method: 'POST', path: '/v1/pools', body: { ownerAgent: 'planner' } });
    expect(r.status).toBe(400);
    const mine = await call('reader', { method: 'POST', path: '/v1/pools', body: { type: 'agent_private' } });
    expect(mine.body.pool).toMatchObject({ ownerAgent: 'reader', type: 'agent_private', scope: 'agent' });
    expect((await call('reader', { method: 'POST', path: `/v1/pools/${mine.body.pool.id}/grants`, body: { agentId: 'planner' } })).status).toBe(400);
  });
});

describe('versions, snapshots, maintenance', () => {
  it('N updates give N+1 versions in order with their actors; any version restores as a new one; all audited', async () => {
    const c = await setup();
    const contents = ['window moved to Wednesday', 'window moved to Thursday', 'window cancelled'];
    for (const content of contents) expect((await call('writer', { method: 'PUT', path: c.e, body: { content, note: 'ops change' } })).status).toBe(200);
    const history = await call('reader', { method: 'GET', path: `${c.e}/versions` });
    expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3, 4]);
    expect(history.body.versions.map((v: { content: string }) => v.content)).toEqual([SECRET, ...contents]);
    expect(history.body.versions.map((v: { changedBy: { agentId: string } }) => v.changedBy.agentId)).toEqual(['planner', 'writer', 'writer', 'writer']);
    expect(history.body.versions.map((v: { change: string }) => v.change)).toEqual(['create', 'update', 'update', 'update']);
    const restored = await call('writer', { method: 'POST', path: `${c.e}/restore`, body: { version: 1 } });
    expect(restored.body).toMatchObject({ version: 5, content: SECRET });
    const boosted = await call('writer', { method: 'POST', path: `${c.e}/importance`, body: { direction: 'boost', amount: 0.2 } });
    expect(boosted.body).toMatchObject({ version: 6, importance: 0.9 });
    expect(boosted.body.effectiveRelevance).toBeGreaterThan(0.6);
    await h.m.audit.flush();
    const entryId = c.e.split('/').pop()!;
    const audit = await h.m.pg.primary.query(`SELECT operation, memory_type, metadata FROM memory_audit_log WHERE $1 = ANY(affected_ids) ORDER BY id`, [entryId]);
    expect(audit.rows.map((r) => r.operation)).toEqual(['add_pool_entry', 'update_pool_entry', 'update_pool_entry', 'update_pool_entry', 'restore_pool_entry', 'boost_pool_entry']);
    expect(audit.rows.every((r) => r.memory_type === 'shared')).toBe(true);
    expect(audit.rows[1].metadata.actor).toMatchObject({ agentId: 'writer', tenantId: tenant.tenantId });
    const grants = await h.m.pg.primary.query(`SELECT operation FROM memory_audit_log WHERE metadata->>'poolId' = $1 AND operation LIKE '%pool_access'`, [`${tenant.tenantId}.${c.poolId}`]);
    expect(grants.rows).toEqual([]); // none yet on this pool
    await call('planner', { method: 'POST', path: `${c.p}/grants`, body: { agentId: 'outsider' } });
    await call('planner', { method: 'DELETE', path: `${c.p}/grants/outsider` });
    await h.m.audit.flush();
    const after = await h.m.pg.primary.query(`SELECT operation FROM memory_audit_log WHERE metadata->>'poolId' = $1 AND operation LIKE '%pool_access' ORDER BY id`, [`${tenant.tenantId}.${c.poolId}`]);
    expect(after.rows.map((r) => r.operation)).toEqual(['grant_pool_access', 'revoke_pool_access']);
    const reads = await h.m.pg.primary.query(`SELECT count(*)::int AS n FROM memory_audit_log WHERE metadata->>'poolId' = $1 AND operation = 'pool_entry_history'`, [`${tenant.tenantId}.${c.poolId}`]);
    expect(reads.rows[0].n).toBe(1);
  });

  it('snapshots: take, list, restore the entries as they were', async () => {
    const c = await setup();
    const second = await call('writer', { method: 'POST', path: `${c.p}/entries`, body: { content: 'Rollbacks need two approvals.', kind: 'plan' } });
    const snap = await call('planner', { method: 'POST', path: `${c.p}/snapshots`, body: { note: 'two entries' } });
    expect(snap.body).toMatchObject({ entryCount: 2, note: 'two entries' });
    await call('writer', { method: 'PUT', path: c.e, body: { content: 'window cancelled' } });
    await call('writer', { method: 'DELETE', path: `${c.p}/entries/${second.body.id}` });
    await call('writer', { method: 'POST', path: `${c.p}/entries`, body: { content: 'A later note' } });
    const listed = await call('reader', { method: 'GET', path: `${c.p}/snapshots` });
    expect(listed.body.snapshots.map((s: { id: string }) => s.id)).toEqual([snap.body.id, c.snapshotId]);
    const r = await call('planner', { method: 'POST', path: `${c.p}/snapshots/${snap.body.id}/restore`, body: {} });
    expect(r.body).toMatchObject({ restored: 1, recreated: 1, removed: 1, unchanged: 0 });
    const entries = await call('reader', { method: 'POST', path: `${c.p}/entries/list`, body: {} });
    expect(entries.body.entries.map((e: { content: string }) => e.content).sort()).toEqual([SECRET, 'Rollbacks need two approvals.'].sort());
    // Restored content is found again by meaning, not only by its words.
    expect((await recallPools('reader', c.userId))[0]?.text).toBe(SECRET);
    const hist = await call('reader', { method: 'GET', path: `${c.e}/versions` });
    expect(hist.body.versions.at(-1)).toMatchObject({ change: 'snapshot_restore', content: SECRET, changedBy: { agentId: 'planner' } });
  });

  it('the pools job merges near-duplicates keeping both provenances, keeps distinct entries apart, and archives stale ones', async () => {
    await freshTenant();
    const poolId = uid('p');
    await call('planner', { method: 'POST', path: '/v1/pools', body: { poolId, access: { write: ['writer'] } } });
    const add = (agent: string, content: string, body: object = {}) => call(agent, { method: 'POST', path: `/v1/pools/${poolId}/entries`, body: { content, ...body } });
    const a = await add('planner', 'The staging database password rotates every Monday morning.', { provenance: { toolCallId: 'call-1' } });
    const b = await add('writer', 'The staging database password rotates every Monday morning!', { provenance: { toolCallId: 'call-2' } });
    const d = await add('planner', 'Customer invoices are sent on the first day of the month.');
    const job = poolsJob({ pools: h.m.poolStore, trail: new PgAuditTrail(h.m.pg.primary), duplicateCosine: 0.92, staleThreshold: 0.9, staleHalfLifeDays: 30 });
    const ctx = { clock: { now: () => new Date() }, log: h.m.log, signal: new AbortController().signal, workerId: 'test', pause: () => Promise.resolve() };
    const stats = await job(ctx);
    expect(stats.merged).toBeGreaterThanOrEqual(1);
    const left = (await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/entries/list`, body: {} })).body.entries as Array<{
      id: string;
      provenance: { agentId: string; toolCallId: string; mergedFrom: Array<{ entryId: string; agentId: string; toolCallId: string }> };
    }>;
    expect(left.map((e) => e.id).sort()).toEqual([d.body.id, [a.body.id, b.body.id].sort()[0]].sort());
    const survivor = left.find((e) => e.id !== d.body.id)!;
    const provenances = [survivor.provenance, ...survivor.provenance.mergedFrom].map((p) => `${p.agentId}/${p.toolCallId}`).sort();
    expect(provenances).toEqual(['planner/call-1', 'writer/call-2']);
    const hist = await call('planner', { method: 'GET', path: `/v1/pools/${poolId}/entries/${survivor.id}/versions` });
    expect(hist.body.versions.at(-1).change).toBe('merge');

    // 200 days without a read: stale (importance 0.5 passes 0.9 after ~100 days), archived, out of lists.
    const later = { ...ctx, clock: { now: () => new Date(Date.now() + 200 * 86_400_000) } };
    expect((await job(later)).archived).toBeGreaterThanOrEqual(2);
    expect((await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/entries/list`, body: {} })).body.entries).toEqual([]);
    expect((await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/entries/list`, body: { includeArchived: true } })).body.entries).toHaveLength(2);
  });

  it('deleting a pool leaves one audit row naming how much went, at level writes', async () => {
    await freshTenant();
    const poolId = uid('p');
    await call('planner', { method: 'POST', path: '/v1/pools', body: { poolId } });
    await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/entries`, body: { content: 'Standup moves to 9:30.' } });
    expect((await call('planner', { method: 'DELETE', path: `/v1/pools/${poolId}` })).status).toBe(200);
    await h.m.audit.flush();
    const row = await h.m.pg.primary.query("SELECT metadata FROM memory_audit_log WHERE operation = 'delete_pool' ORDER BY id DESC LIMIT 1");
    expect(row.rows[0].metadata).toMatchObject({ deleted: { entries: 1, versions: 1, snapshots: 0 } });
    expect(row.rows[0].metadata.payload).toBeUndefined();
  });

  it('expired pools go with everything in them; entries about a user are erased with the user', async () => {
    await freshTenant();
    const poolId = uid('p');
    await call('planner', { method: 'POST', path: '/v1/pools', body: { poolId, expiresAt: new Date(Date.now() + 60_000).toISOString() } });
    const userId = uid('u');
    const about = await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/entries`, body: { content: 'Prefers calls after 10am.', userId } });
    expect(about.status).toBe(201);
    const stats = await h.call(tenant.key, 'GET', `/v1/users/${userId}/stats`);
    expect(stats.body.nodes).toMatchObject({ PoolEntry: 1, PoolEntryVersion: 1 });
    expect((await h.call(tenant.key, 'DELETE', `/v1/users/${userId}`)).status).toBe(200);
    expect((await call('planner', { method: 'GET', path: `/v1/pools/${poolId}/entries/${about.body.id}` })).status).toBe(404);
    await call('planner', { method: 'POST', path: `/v1/pools/${poolId}/entries`, body: { content: 'Team lunch on Fridays.' } });
    const job = poolsJob({ pools: h.m.poolStore, trail: new PgAuditTrail(h.m.pg.primary), duplicateCosine: 0.92, staleThreshold: 0.9, staleHalfLifeDays: 30 });
    await job({ clock: { now: () => new Date(Date.now() + 120_000) }, log: h.m.log, signal: new AbortController().signal, workerId: 'test', pause: () => Promise.resolve() });
    const left = await h.m.neo4j.read<{ n: number }>('MATCH (e:PoolEntry) WHERE e.pool_id = $p RETURN count(e) AS n', { p: `${tenant.tenantId}.${poolId}` }, { subsystem: 'test', op: 'check' });
    expect(left[0]!.n).toBe(0);
    expect((await call('planner', { method: 'GET', path: `/v1/pools/${poolId}` })).status).toBe(404);
    // The expiry is one chained audit row of what went, by kind and count.
    const record = await h.m.pg.primary.query("SELECT metadata, chain_seq FROM memory_audit_log WHERE operation = 'expire_pools' ORDER BY id DESC LIMIT 1");
    expect(record.rows).toEqual([{ metadata: { deleted: { pools: expect.any(Number), entries: expect.any(Number) } }, chain_seq: expect.any(String) }]);
    expect(record.rows[0].metadata.deleted.pools).toBeGreaterThanOrEqual(1);
  });
});
