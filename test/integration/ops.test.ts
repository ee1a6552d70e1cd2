import { PgUsageSink } from '../../src/llm';
import { PgJobStore } from '../../src/worker';
import { uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

/**
 * The operations report over real HTTP and the real stores: admin keys only (agent and
 * reviewer keys 403), every per-tenant number the caller's tenant's only (LLM calls and cost,
 * consolidation backlog, embedding backlog), job runs with status and timing but never their
 * counters or error text, and each store's health.
 */
let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

describe('GET /v1/ops', () => {
  it('reports the tenant’s numbers only, job runs without counters or errors, and the stores’ health', async () => {
    const [A, B] = [await h.tenant(), await h.tenant()];
    const userId = uid('u');
    for (const content of ['I moved to Lisbon.', 'Nice!']) {
      expect((await h.call(A.key, 'POST', '/v1/turns', { userId, conversationId: uid('c'), role: 'user', content })).status).toBe(201);
    }
    const sink = new PgUsageSink(h.m.pg.primary);
    const call = { provider: 'openai', model: 'gpt-test', inputTokens: 1000, outputTokens: 200, costUsd: 0.0125, latencyMs: 40 };
    await sink.record({ ...call, userId: `${A.tenantId}.${userId}`, purpose: 'extraction', ok: true });
    await sink.record({ ...call, userId: `${A.tenantId}.${userId}`, purpose: 'extraction', ok: false, error: 'rate limited', costUsd: 0 });
    await sink.record({ ...call, userId: `${B.tenantId}.someone`, purpose: 'extraction', ok: true, costUsd: 99 });
    const jobs = new PgJobStore(h.m.pg.primary);
    const job = uid('job').slice(0, 30);
    const run = (await jobs.startRun(job, 'w1', new Date(Date.now() - 5_000)))!;
    await jobs.finishRun(run, 'failed', { facts: 12345 }, `boom for user ${B.tenantId}.someone`);

    const a = await h.call(A.key, 'GET', '/v1/ops?hours=1');
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      tenantId: A.tenantId,
      stores: { neo4j: { up: true }, postgres: { up: true }, redis: { up: true } },
      consolidation: { conversations: 2 },
      llm: { calls: 2, failed: 1, inputTokens: 2000, outputTokens: 400, costUsd: 0.0125, byPurpose: [{ purpose: 'extraction', model: 'gpt-test', calls: 2, failed: 1 }] },
    });
    expect(a.body.consolidation.lagSeconds).toBeGreaterThanOrEqual(0);
    expect(a.body.embeddingBacklog.turns).toBeGreaterThanOrEqual(0);
    const mine = a.body.jobs.find((j: any) => j.job === job);
    expect(mine).toMatchObject({ lastStatus: 'failed', runs: 1, failures: 1, lastSuccessAt: null });
    expect(mine.lastDurationMs).toBeGreaterThanOrEqual(4_000);
    expect(JSON.stringify(a.body)).not.toMatch(/12345|boom|someone/);

    const b = await h.call(B.key, 'GET', '/v1/ops');
    expect(b.body).toMatchObject({ tenantId: B.tenantId, consolidation: { conversations: 0, lagSeconds: 0 }, embeddingBacklog: { turns: 0 }, llm: { calls: 1, costUsd: 99 } });
    expect(JSON.stringify(b.body)).not.toContain(A.tenantId);

    expect((await h.call(A.key, 'GET', '/v1/ops?hours=0')).status).toBe(400);
    expect((await h.call(A.key, 'GET', '/v1/ops?tenantId=other')).status).toBe(400);
  });

  it('admin keys only: agent and reviewer keys get 403, no key 401', async () => {
    const A = await h.tenant();
    const agent = (await h.srv.api.tenants.createKey(A.tenantId, { agentId: 'planner' })).key;
    const reviewer = (await h.srv.api.tenants.createKey(A.tenantId, { role: 'reviewer' })).key;
    expect((await h.call(agent, 'GET', '/v1/ops')).body.error).toMatchObject({ code: 'FORBIDDEN', details: { role: 'agent' } });
    expect((await h.call(reviewer, 'GET', '/v1/ops')).status).toBe(403);
    expect((await h.call(undefined, 'GET', '/v1/ops')).status).toBe(401);
  });
});
