import type { IncomingMessage, ServerResponse } from 'node:http';
import { TenantNamespace } from '../../src/access';
import { parseErasureReceipt, verifyErasureReceipt } from '../../src/audit';
import { cleanupJob } from '../../src/worker/jobs/cleanup';
import { uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

/**
 * Memory over a lifetime, over real HTTP and the real stores (issue: memory over a lifetime):
 * the nightly cleanup never takes memory out of recall; a delete forgets what was learned only
 * from what went (and keeps what has another source); an agent key's whole-user routes show
 * what its other routes show; only an admin erases; an erasure is final and counted.
 */
let h: Harness;
let A: { tenantId: string; key: string; keyId: string };
beforeAll(async () => {
  h = await openHarness({ AUDIT_LEVEL: 'writes' });
  A = await h.tenant();
});
afterAll(async () => h.close());

const DAY = 86_400_000;
const internal = (userId: string) => new TenantNamespace(A.tenantId).toInternal(userId, 'userId');
const turn = (userId: string, conversationId: string, content: string, extra: Record<string, unknown> = {}) =>
  h.call(A.key, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content, ...extra });
const consolidate = async (userId: string) => expect((await h.call(A.key, 'POST', `/v1/users/${userId}/consolidate`, {})).status).toBe(200);
const recallText = async (userId: string, query: string) => JSON.stringify((await h.call(A.key, 'POST', '/v1/recall', { userId, query, topK: 10 })).body);
const exportText = async (key: string, userId: string) => {
  const r = await h.call(key, 'GET', `/v1/users/${userId}/export`);
  expect(r.status).toBe(200);
  return typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
};
const facts = async (userId: string) =>
  (await h.call(A.key, 'GET', `/v1/users/${userId}/facts?status=all&limit=200`)).body.facts as Array<{ id: string; claim: string; status: string; sourceTurnId: string | null }>;
const everywhere = async (userId: string, query: string) =>
  [
    await recallText(userId, query),
    JSON.stringify((await h.call(A.key, 'POST', '/v1/recall/context', { userId, query: 'what is the capital of France?' })).body),
    await exportText(A.key, userId),
    JSON.stringify(await facts(userId)),
    JSON.stringify((await h.call(A.key, 'GET', `/v1/users/${userId}/entities?includeDeleted=true&limit=200`)).body),
    JSON.stringify((await h.call(A.key, 'GET', `/v1/users/${userId}/profile`)).body),
  ].join('\n');

describe('archive is not forget', () => {
  it('a conversation 200 days old is archived by the nightly cleanup and still recalled', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const timestamp = new Date(Date.now() - 200 * DAY).toISOString();
    expect((await turn(userId, conversationId, 'The restaurant in Kyoto was called Tsuruya and I loved their tofu.', { timestamp })).status).toBe(201);
    expect(await recallText(userId, 'what was the restaurant in Kyoto called?')).toContain('Tsuruya');

    const run = await h.m.createWorker().runJob('cleanup', { userIds: [internal(userId)] });
    expect(run).toMatchObject({ status: 'succeeded', stats: expect.objectContaining({ archived: 1, retentionDeleted: 0 }) });
    const listed = await h.call(A.key, 'GET', `/v1/users/${userId}/conversations`);
    expect(listed.body.conversations).toEqual([expect.objectContaining({ conversationId, archived: true })]);
    expect(await recallText(userId, 'what was the restaurant in Kyoto called?')).toContain('Tsuruya');
    // A new turn brings the conversation back from the archive.
    expect((await turn(userId, conversationId, 'We should go back to Kyoto.')).status).toBe(201);
    expect((await h.call(A.key, 'GET', `/v1/users/${userId}/conversations`)).body.conversations[0].archived).toBe(false);
  });
});

describe('the retention rule (off by default)', () => {
  it('deletes conversations idle past RETENTION_DELETE_DAYS with what was learned only from them, keeps confirmed facts, and audits each', async () => {
    expect(h.m.config.worker.deleteDays).toBeUndefined();
    const userId = uid('u');
    const [old, recent] = [uid('c'), uid('c')];
    await turn(userId, old, 'I work at Feedzai.', { timestamp: new Date(Date.now() - 400 * DAY).toISOString() });
    await turn(userId, old, 'I am allergic to peanuts.', { timestamp: new Date(Date.now() - 400 * DAY).toISOString() });
    await turn(userId, recent, 'I play the cello.');
    await consolidate(userId);
    const allergy = (await facts(userId)).find((f) => /peanuts/.test(f.claim))!;
    expect((await h.call(A.key, 'POST', `/v1/users/${userId}/facts/${allergy.id}/confirm`, {})).status).toBe(200);

    const jobs = { ...h.m.jobs, cleanup: cleanupJob({ ...h.m.jobStores, archiveDays: 90, duplicateSimilarity: 0.99, retention: { days: 365, forget: h.m.jobStores.forget! } }) };
    const run = await h.m.createWorker({ jobs }).runJob('cleanup', { userIds: [internal(userId)] });
    expect(run).toMatchObject({ status: 'succeeded', stats: expect.objectContaining({ retentionDeleted: 1 }) });
    expect((await h.call(A.key, 'GET', `/v1/users/${userId}/conversations`)).body.conversations.map((c: any) => c.conversationId)).toEqual([recent]);
    const left = await facts(userId);
    expect(left.map((f) => f.claim).join()).not.toMatch(/Feedzai/);
    expect(left.find((f) => f.id === allergy.id)).toMatchObject({ status: 'active' });
    await h.m.audit.flush();
    const audit = await h.m.pg.primary.query(`SELECT affected_ids FROM memory_audit_log WHERE user_id = $1 AND operation = 'retention_delete'`, [internal(userId)]);
    expect(audit.rows).toEqual([{ affected_ids: [new TenantNamespace(A.tenantId).toInternal(old, 'conversationId')] }]);
  });
});

describe('a delete forgets what was learned only from it', () => {
  it('the peanut turn: its facts, entities and profile entries go, the dry run lists each, and nothing about peanuts is left', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await turn(userId, conversationId, 'I am allergic to peanuts, and I work at Feedzai in Lisbon.');
    await h.call(A.key, 'POST', '/v1/turns', { userId, conversationId, role: 'assistant', content: 'Noted, thanks for telling me.' });
    await consolidate(userId);
    expect(await everywhere(userId, 'what am I allergic to?')).toMatch(/peanut/i);

    const path = `/v1/users/${userId}/conversations/${conversationId}/turns/0`;
    const dry = await h.call(A.key, 'DELETE', `${path}?dryRun=true`);
    expect(dry.status).toBe(200);
    const goes = (kind: string) => dry.body.items.filter((i: any) => i.kind === kind && i.action === 'delete').map((i: any) => i.label);
    expect(goes('fact')).toEqual(expect.arrayContaining([expect.stringMatching(/peanuts/), expect.stringMatching(/Feedzai/)]));
    expect(goes('entity')).toEqual(expect.arrayContaining(['Feedzai', 'Lisbon']));
    expect(goes('profile')).toEqual(expect.arrayContaining([expect.stringMatching(/allergic to: peanuts/)]));
    expect(dry.body.summary).toMatch(/^Would delete turn 0 of the conversation; learned only from it: 2 facts, 2 entities/);
    expect(await everywhere(userId, 'what am I allergic to?')).toMatch(/peanut/i); // a dry run changes nothing

    const gone = await h.call(A.key, 'DELETE', path);
    expect(gone.body).toMatchObject({ dryRun: false, turns: 1, counts: { fact: { delete: 2 }, entity: { delete: 2 } } });
    expect(await everywhere(userId, 'what am I allergic to?')).not.toMatch(/peanut|feedzai|lisbon/i);
    await h.m.audit.flush();
    const audit = await h.m.pg.primary.query(`SELECT metadata FROM memory_audit_log WHERE user_id = $1 AND operation = 'delete_turn'`, [internal(userId)]);
    expect(audit.rows).toEqual([{ metadata: expect.objectContaining({ turns: 1, derived: expect.objectContaining({ fact: { delete: 2, keep: 0, restore: 0 } }) }) }]);
    expect(JSON.stringify(audit.rows)).not.toMatch(/peanut/i);
  });

  it('a fact learned twice keeps its other source; keepDerived keeps what was learned', async () => {
    const userId = uid('u');
    const [first, second] = [uid('c'), uid('c')];
    await turn(userId, first, 'I work at Feedzai.');
    await turn(userId, second, 'I work at Feedzai.');
    await consolidate(userId);
    const before = (await facts(userId)).filter((f) => /Feedzai/.test(f.claim) && f.status === 'active');
    expect(before).toHaveLength(1);

    const del = await h.call(A.key, 'DELETE', `/v1/users/${userId}/conversations/${first}`);
    expect(del.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'fact', action: 'keep', why: expect.stringMatching(/also learned from 1 other turn/) })]));
    const [kept] = (await facts(userId)).filter((f) => f.id === before[0]!.id);
    expect(kept).toMatchObject({ status: 'active', sourceTurnId: `${second}:0` });

    const keep = await h.call(A.key, 'DELETE', `/v1/users/${userId}/conversations/${second}?keepDerived=true`);
    expect(keep.body).toMatchObject({ keepDerived: true, counts: { fact: { delete: 0, keep: 1 } } });
    expect((await facts(userId)).find((f) => f.id === before[0]!.id)).toMatchObject({ status: 'active', sourceTurnId: null });
  });

  it('retracting a fact takes its value out of the profile; deleting a short-term entry takes the fact it was promoted to', async () => {
    const userId = uid('u');
    await turn(userId, uid('c'), 'I am allergic to peanuts.');
    await consolidate(userId);
    const profile = async () => JSON.stringify((await h.call(A.key, 'GET', `/v1/users/${userId}/profile`)).body);
    expect(await profile()).toMatch(/peanuts/);
    const allergy = (await facts(userId)).find((f) => /peanuts/.test(f.claim))!;
    expect((await h.call(A.key, 'POST', `/v1/users/${userId}/facts/${allergy.id}/retract`, { reason: 'a test result says no' })).status).toBe(200);
    expect(await profile()).not.toMatch(/peanuts/);

    const entry = `/v1/users/${userId}/short-term/s1/seat`;
    expect((await h.call(A.key, 'PUT', entry, { type: 'observation', value: 'aisle seat on long flights' })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await h.call(A.key, 'GET', entry)).status).toBe(200);
    expect((await h.m.createWorker().runJob('short_term', { userIds: [internal(userId)] })).stats).toMatchObject({ promoted: 1 });
    expect((await facts(userId)).map((f) => f.claim)).toContain('seat: aisle seat on long flights');
    expect((await h.call(A.key, 'DELETE', entry)).status).toBe(200);
    expect((await facts(userId)).map((f) => f.claim)).not.toContain('seat: aisle seat on long flights');
  });

  it('deleting the turn that changed a value makes the old value current again', async () => {
    const userId = uid('u');
    const [home, move] = [uid('c'), uid('c')];
    await turn(userId, home, 'I live in Lisbon.');
    await consolidate(userId);
    await turn(userId, move, 'I moved to Berlin last month.');
    await consolidate(userId);
    const lisbon = (await facts(userId)).find((f) => /Lisbon/.test(f.claim))!;
    expect(lisbon.status).toBe('superseded');

    const del = await h.call(A.key, 'DELETE', `/v1/users/${userId}/conversations/${move}`);
    expect(del.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'fact', id: lisbon.id, action: 'restore' })]));
    expect((await facts(userId)).find((f) => f.id === lisbon.id)).toMatchObject({ status: 'active' });
    expect(await everywhere(userId, 'where do I live?')).not.toMatch(/berlin/i);
  });
});

describe('only the right key', () => {
  it("an agent key's export and stats hold what its routes show it; only an admin erases", async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await turn(userId, conversationId, 'I prefer window seats.');
    const agents = Object.fromEntries(await Promise.all(['a1', 'a2', 'a3'].map(async (a) => [a, (await h.srv.api.tenants.createKey(A.tenantId, { agentId: a })).key] as const))) as Record<
      'a1' | 'a2' | 'a3',
      string
    >;
    const reviewer = (await h.srv.api.tenants.createKey(A.tenantId, { role: 'reviewer' })).key;
    const privatePool = uid('p');
    const teamPool = uid('p');
    expect((await h.call(agents.a1, 'POST', '/v1/pools', { poolId: privatePool, name: 'mine', type: 'agent_private' })).status).toBe(201);
    expect((await h.call(agents.a2, 'POST', '/v1/pools', { poolId: teamPool, name: 'team', type: 'team_shared', access: { read: ['a1'], write: [] } })).status).toBe(201);
    expect((await h.call(agents.a1, 'POST', `/v1/pools/${privatePool}/entries`, { content: 'A1 PRIVATE NOTE', userId })).status).toBe(201);
    expect((await h.call(agents.a2, 'POST', `/v1/pools/${teamPool}/entries`, { content: 'A2 TEAM NOTE', userId })).status).toBe(201);
    for (const a of ['a1', 'a2'] as const)
      expect((await h.call(agents[a], 'PUT', `/v1/users/${userId}/short-term/s1/draft`, { type: 'task_context', value: `${a.toUpperCase()} DRAFT` })).status).toBe(200);

    const seen = {
      admin: await exportText(A.key, userId),
      a1: await exportText(agents.a1, userId),
      a3: await exportText(agents.a3, userId),
    };
    for (const s of ['A1 PRIVATE NOTE', 'A2 TEAM NOTE', 'A1 DRAFT', 'A2 DRAFT']) expect(seen.admin).toContain(s);
    for (const s of ['A1 PRIVATE NOTE', 'A2 TEAM NOTE', 'A1 DRAFT', 'A2 DRAFT']) expect(seen.a3).not.toContain(s);
    expect(seen.a3).toContain('window seats');
    for (const s of ['A1 PRIVATE NOTE', 'A2 TEAM NOTE', 'A1 DRAFT']) expect(seen.a1).toContain(s);
    expect(seen.a1).not.toContain('A2 DRAFT');
    // Each agent's own routes agree with its export.
    expect((await h.call(agents.a3, 'GET', `/v1/pools/${privatePool}`)).status).toBe(404);
    expect((await h.call(agents.a3, 'GET', `/v1/users/${userId}/short-term/s1/draft`)).status).toBe(404);

    const stats = async (key: string) => (await h.call(key, 'GET', `/v1/users/${userId}/stats`)).body;
    const adminStats = await stats(A.key);
    const a3Stats = await stats(agents.a3);
    expect(adminStats.rows.short_term_entries).toBe(2);
    expect(a3Stats.rows.short_term_entries).toBeUndefined();
    expect(adminStats.nodes.PoolEntry).toBe(2);
    expect(a3Stats.nodes.PoolEntry).toBeUndefined();
    expect((await stats(agents.a1)).nodes.PoolEntry).toBe(2);
    expect(await stats(reviewer)).toEqual(adminStats);

    // The whole-user routes, walked with each role.
    expect((await h.call(reviewer, 'GET', `/v1/users/${userId}/export`)).status).toBe(403);
    for (const key of [agents.a1, agents.a3, reviewer]) expect((await h.call(key, 'DELETE', `/v1/users/${userId}`)).status).toBe(403);
    expect(await exportText(A.key, userId)).toContain('A1 PRIVATE NOTE');
    expect((await h.call(A.key, 'DELETE', `/v1/users/${userId}`)).status).toBe(200);
  });
});

describe('erasure is final and accounted', () => {
  it('counts the Redis keys it deletes and takes pool entries whose provenance is the user', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await turn(userId, conversationId, 'Remember my locker code 4471.');
    await h.call(A.key, 'PUT', `/v1/users/${userId}/sessions/${conversationId}/context/mood`, { value: 'calm' });
    const poolId = uid('p');
    expect((await h.call(A.key, 'POST', '/v1/pools', { poolId, name: 'ops' })).status).toBe(201);
    const entry = await h.call(A.key, 'POST', `/v1/pools/${poolId}/entries`, { content: 'LOCKER 4471 (from the chat)', provenance: { conversationId, turnId: `${conversationId}:0` } });
    expect(entry.status).toBe(201);

    const erased = await h.call(A.key, 'DELETE', `/v1/users/${userId}`);
    expect(erased.status).toBe(200);
    expect(erased.body.redisKeysDeleted).toBeGreaterThan(0);
    // The receipt checks against the audit chain.
    await h.m.audit.flush();
    const checked = await verifyErasureReceipt(h.m.pg.primary, parseErasureReceipt(erased.body.receipt));
    expect(checked.problem).toBeNull(); // the record and its hashes hold (the whole chain is audit-receipt.test.ts's, on a database of its own)
    expect((await h.call(A.key, 'GET', `/v1/pools/${poolId}/entries/${entry.body.id}`)).status).toBe(404);
    const left = await h.m.neo4j.read<{ n: number }>('MATCH (e:PoolEntry) WHERE e.content CONTAINS $s RETURN count(e) AS n', { s: 'LOCKER 4471' }, { subsystem: 'test', op: 'left' });
    expect(left[0]!.n).toBe(0);
  });

  it('no write that reached the server before the erasure answered survives it', async () => {
    // Arrival and the erasure's answer are timed where they happen, at the server (the client
    // shares this process: its send time says nothing of when the server read the request).
    const arrived = new Map<string, number>();
    let answered = Infinity;
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const tag = req.headers['x-test-write'];
      if (typeof tag === 'string') arrived.set(tag, performance.now());
      if (req.method === 'DELETE' && req.headers['x-test-erasure']) res.once('finish', () => (answered = performance.now()));
    };
    h.srv.server.prependListener('request', onRequest);
    try {
      for (let round = 0; round < 3; round++) {
        const userId = uid('u');
        const conversationId = uid('c');
        await turn(userId, conversationId, 'first');
        const acknowledged: string[] = [];
        let stop = false;
        const writer = async (w: number) => {
          for (let i = 0; !stop; i++) {
            const content = `w${w}-${i}`;
            const r = await h.call(A.key, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content }, { 'x-test-write': content });
            if (r.status === 201) acknowledged.push(content);
            else expect(r.status).toBe(409);
          }
        };
        const writers = [0, 1, 2, 3, 4, 5].map(writer);
        await new Promise((r) => setTimeout(r, 150));
        answered = Infinity;
        expect((await h.call(A.key, 'DELETE', `/v1/users/${userId}`, undefined, { 'x-test-erasure': '1' })).status).toBe(200);
        await new Promise((r) => setTimeout(r, 300));
        stop = true;
        await Promise.all(writers);
        const page = await h.call(A.key, 'GET', `/v1/users/${userId}/conversations/${conversationId}/turns?limit=500`);
        const kept = new Set<string>(page.status === 200 ? page.body.turns.map((t: any) => t.content) : []);
        expect(acknowledged.filter((c) => arrived.get(c)! < answered && kept.has(c))).toEqual([]);
        // Writes that arrived after the answer stay (the user wrote again).
        expect(acknowledged.filter((c) => arrived.get(c)! > answered).every((c) => kept.has(c))).toBe(true);
      }
    } finally {
      h.srv.server.off('request', onRequest);
    }
  });
});
