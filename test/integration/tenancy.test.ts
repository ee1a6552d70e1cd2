import { ROUTES } from '../../src/api/routes';
import { TenantNamespace } from '../../src/access';
import { uid } from '../support/stack';
import { happy, openHarness, seedUser, type Harness, type SeededUser } from './api-harness';

let h: Harness;
let A: { tenantId: string; key: string; keyId: string };
let B: { tenantId: string; key: string; keyId: string };
beforeAll(async () => {
  h = await openHarness();
  [A, B] = [await h.tenant(), await h.tenant()];
});
afterAll(async () => h.close());

/** Everything A holds for a user: the export (minus its timestamp) and the live session. */
async function snapshotOf(u: SeededUser) {
  await h.m.backgroundEmbedder.drain(); // embeddings arriving are not a change by another tenant
  const lines = [];
  for await (const line of h.srv.api.users.export(`${A.tenantId}.${u.userId}`)) if (line.kind !== 'header') lines.push(JSON.stringify(line));
  const session = await h.call(A.key, 'GET', u.s);
  const topic = await h.call(A.key, 'GET', `${u.s}/context/topic`);
  return { lines: lines.sort(), session: session.body, topic: [topic.status, topic.body.value] };
}

describe('tenant isolation', () => {
  it("another tenant's key, given A's ids on every route, gets 404 or writes only into its own namespace; A's memory is unchanged", async () => {
    const u = await seedUser(h, A.key);
    await h.call(A.key, 'PUT', `${u.s}/context/topic`, { value: 'travel' });
    await h.call(A.key, 'POST', `${u.s}/thoughts`, { thought: 'secret plan' });
    const before = await snapshotOf(u);
    expect(before.lines.length).toBeGreaterThanOrEqual(5);

    // Reads and deletes first (B does not own the id yet), then the writes that claim it.
    const order = [...ROUTES].sort((a, b) => Number(a.access === 'claim') - Number(b.access === 'claim'));
    for (const r of order) {
      const c = happy[r.id]!(u);
      const res = await h.call(B.key, c.method, c.path, c.body);
      if (r.access === 'tenant') {
        // About the caller's own tenant (its users, its key, its audit log): answered, and nothing of A's in it.
        expect({ id: r.id, status: res.status }).toEqual({ id: r.id, status: r.status });
        expect(JSON.stringify(res.body)).not.toContain(u.userId);
        expect(JSON.stringify(res.body)).not.toContain(A.tenantId);
      } else if (r.access === 'claim') {
        // A write names B's own user of that name: it succeeds in B's namespace, unless it
        // references A's objects (entity, fact or turn ids), which B cannot see: 404.
        // A's pool in the path is such a reference too.
        const refersToA = JSON.stringify([c.path, c.body ?? {}]).match(new RegExp([u.entityId, u.personId, u.factId, u.strategyId, u.goalId, u.poolId].join('|')));
        expect({ id: r.id, status: res.status }).toEqual({ id: r.id, status: refersToA ? 404 : r.status });
      } else if (!JSON.stringify([c.path, c.body ?? {}]).match(new RegExp([u.userId, u.poolId].join('|')))) {
        // Names nothing of A's (the pools B may read): answers for B alone.
        expect({ id: r.id, status: res.status }).toEqual({ id: r.id, status: c.status });
        if (r.id === 'listPools') expect(res.body.pools.map((p: { id: string }) => p.id)).not.toContain(u.poolId);
      } else {
        expect({ id: r.id, status: res.status, code: res.body.error?.code }).toEqual({ id: r.id, status: 404, code: 'NOT_FOUND' });
      }
      // Whatever B did, nothing of A's changed: checked after every route that may write
      // (GET never does, and the check after the loop covers them too).
      if (c.method !== 'GET') expect({ id: r.id, after: await snapshotOf(u) }).toEqual({ id: r.id, after: before });
    }
    expect(await snapshotOf(u)).toEqual(before);

    // B's writes went to B's own "alice", invisible to A and carrying no A data.
    const bView = await h.call(B.key, 'GET', `/v1/users/${u.userId}/stats`);
    expect(bView.status).toBe(200);
    expect(bView.body.nodes.Turn ?? 0).toBeLessThan(10);
    const bConv = await h.call(B.key, 'GET', `/v1/users/${u.userId}/conversations/${u.conversationId}`);
    expect(bConv.body.turns.map((t: { content: string }) => t.content)).toEqual(['And I adopted a cat.']);
    const aConv = await h.call(A.key, 'GET', `/v1/users/${u.userId}/conversations/${u.conversationId}`);
    expect(aConv.body.turns.map((t: { content: string }) => t.content)).not.toContain('And I adopted a cat.');
    // One export of A's user per writing route (about 65 of ~95): minutes on a loaded 2-core machine.
  }, 300_000);

  it("ids that spell out another tenant's namespace stay inside the caller's own", async () => {
    const u = await seedUser(h, A.key);
    const before = await snapshotOf(u);
    const spoofUser = `${A.tenantId}.${u.userId}`;
    const spoofConv = `${A.tenantId}.${u.conversationId}`;
    expect((await h.call(B.key, 'GET', `/v1/users/${spoofUser}/conversations/${u.conversationId}`)).status).toBe(404);
    expect((await h.call(B.key, 'GET', `/v1/users/${spoofUser}/stats`)).status).toBe(404);
    expect((await h.call(B.key, 'POST', '/v1/turns/recent', { userId: spoofUser, hours: 100 })).status).toBe(404);
    const w = await h.call(B.key, 'POST', '/v1/turns', { userId: spoofUser, conversationId: spoofConv, role: 'user', content: 'injected' });
    expect(w.status).toBe(201);
    expect(w.body.turn).toMatchObject({ userId: spoofUser, conversationId: spoofConv });
    expect((await h.call(B.key, 'POST', '/v1/turns/recent', { userId: spoofUser, hours: 1 })).body.turns.map((t: { content: string }) => t.content)).toEqual(['injected']);
    expect(await snapshotOf(u)).toEqual(before);
    const stored = await h.m.neo4j.read<{ users: string[] }>(
      'MATCH (t:Turn {content: "injected"}) WHERE t.user_id STARTS WITH $p RETURN collect(t.user_id) AS users',
      { p: B.tenantId },
      { subsystem: 'test', op: 'check' },
    );
    expect(stored[0]!.users).toEqual([`${B.tenantId}.${spoofUser}`]);
  });

  it("a tenant cannot erase another tenant's user, and an erase of its own leaves the other tenant's namesake intact", async () => {
    const u = await seedUser(h, A.key);
    await h.call(B.key, 'POST', '/v1/turns', { userId: u.userId, conversationId: uid('c'), role: 'user', content: 'B namesake' });
    const before = await snapshotOf(u);
    const erased = await h.call(B.key, 'DELETE', `/v1/users/${u.userId}`);
    expect(erased.status).toBe(200);
    expect(erased.body.nodesDeleted).toBe(3); // B's User, Conversation, Turn
    expect(await snapshotOf(u)).toEqual(before);
    expect((await h.call(A.key, 'GET', `/v1/users/${u.userId}/stats`)).body.nodes).toMatchObject({ User: 1, Conversation: 1, Turn: 2 });
  });

  it('a revoked key is refused; keys are stored only as hashes', async () => {
    const t = await h.tenant();
    expect((await h.call(t.key, 'POST', '/v1/turns', { userId: 'x', conversationId: uid('c'), role: 'user', content: 'hi' })).status).toBe(201);
    expect(await h.srv.api.tenants.revokeKey(t.keyId)).toBe(true);
    const r = await h.call(t.key, 'GET', '/v1/users/x/stats');
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('INVALID_API_KEY');
    const rows = await h.m.pg.primary.query('SELECT key_hash FROM api_keys WHERE id = $1', [t.keyId]);
    expect(rows.rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.rows[0].key_hash).not.toContain(t.key.slice(20));
    const listed = await h.srv.api.tenants.listKeys(t.tenantId);
    expect(listed).toEqual([expect.objectContaining({ id: t.keyId, tenantId: t.tenantId, revokedAt: expect.any(String) })]);
  });
});

describe('TenantNamespace', () => {
  const ns = new TenantNamespace('acme');
  it('namespaces user, conversation and turn ids deeply and maps them back', () => {
    const input = { turns: [{ userId: 'alice', conversationId: 'c1', content: 'acme.com is great', metadata: { note: 'acme.x' } }], turnIds: ['c1:0'] };
    const inside = ns.mapIn(input);
    expect(inside).toEqual({ turns: [{ userId: 'acme.alice', conversationId: 'acme.c1', content: 'acme.com is great', metadata: { note: 'acme.x' } }], turnIds: ['acme.c1:0'] });
    expect(ns.mapOut({ turn: { id: 'acme.c1:0', userId: 'acme.alice', conversationId: 'acme.c1', content: 'acme.com is great' } })).toEqual({
      turn: { id: 'c1:0', userId: 'alice', conversationId: 'c1', content: 'acme.com is great' },
    });
    expect(TenantNamespace.userIds(input)).toEqual(['alice']);
  });
  it('refuses ids that would not fit the internal limit', () => {
    expect(() => ns.mapIn({ userId: 'u'.repeat(124) })).toThrow(/at most 123 characters/);
    expect(ns.mapIn({ userId: 'u'.repeat(123) }).userId).toHaveLength(128);
  });
});
