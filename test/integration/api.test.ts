import { z } from 'zod';
import { ROUTES } from '../../src/api/routes';
import { uid } from '../support/stack';
import { happy, openHarness, seedUser as seed, type Harness } from './api-harness';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await openHarness({ API_BODY_LIMIT: '64k' });
  key = (await h.tenant()).key;
});
afterAll(async () => h.close());

describe('every route', () => {
  it('has a happy-path case in this suite', () => {
    expect(Object.keys(happy).sort()).toEqual(h.srv.api.routes.map((r) => r.id).sort());
  });

  it.each(ROUTES.map((r) => [r.id, r] as const))('%s: happy path answers its documented status and schema', async (id, route) => {
    const u = await seed(h, key);
    await h.call(key, 'PUT', `${u.s}/context/topic`, { value: 'travel' });
    await h.m.backgroundEmbedder.drain();
    const c = happy[id]!(u);
    const r = await h.call(key, c.method, c.path, c.body);
    expect({ id, status: r.status, body: r.body }).toMatchObject({ status: c.status });
    expect(r.status).toBe(route.status);
    const parsed = route.output.safeParse(r.body);
    if (!parsed.success) throw new Error(`${id} response does not match its schema: ${z.prettifyError(parsed.error)}`);
    // Ids come back in the tenant's terms, never namespaced: in id fields, in signals that
    // name a turn, and in rendered text such as the prompt block's citations.
    for (const own of [u.userId, u.conversationId]) expect(JSON.stringify(r.body)).not.toContain('.' + own);
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  // A refused request changes nothing, so one seeded user serves every route's refusals.
  let refused: Promise<Awaited<ReturnType<typeof seed>>> | undefined;
  it.each(ROUTES.map((r) => [r.id, r] as const))('%s: 401 without a key, 400 on bad input, 404 for an unknown user; never 500', async (id) => {
    const u = await (refused ??= seed(h, key));
    const c = happy[id]!(u);
    expect((await h.call(undefined, c.method, c.path, c.body)).status).toBe(401);
    expect((await h.call('mg_000000000000_' + 'x'.repeat(43), c.method, c.path, c.body)).status).toBe(401);

    const route = ROUTES.find((x) => x.id === id)!;
    if (route.access === 'tenant' && !('userId' in route.input.shape)) {
      // Names no user: an unknown field is bad input; there is no user to be unknown.
      expect((await h.call(key, c.method, `${c.path}${c.path.includes('?') ? '&' : '?'}unexpected=1`)).status).toBe(400);
      return;
    }

    // Bad input: an id with a forbidden character in the path or body, then an unknown field.
    // (Pool routes name a pool, not a user, in their path.)
    const named = [u.userId, u.poolId].find((id) => c.path.includes(id));
    const badPath = named ? c.path.replace(named, 'bad:id') : c.path;
    const badBody = c.body && typeof c.body === 'object' ? { ...c.body, unexpected: 1 } : c.body;
    const bad = named
      ? await h.call(key, c.method, badPath, c.body)
      : c.method === 'GET' || c.method === 'DELETE'
        ? await h.call(key, c.method, `${c.path}?userId=bad:id`)
        : await h.call(key, c.method, c.path, { ...(c.body as object), userId: 'bad:id' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(bad.body.error.details.issues.length).toBeGreaterThan(0);
    if (c.body) expect((await h.call(key, c.method, c.path, badBody)).status).toBe(400);
    else expect((await h.call(key, c.method, `${c.path}${c.path.includes('?') ? '&' : '?'}unexpected=1`)).status).toBe(400);

    // Unknown user of this tenant: 404 for reads and deletes; writes claim the id. (A case that
    // names no user, such as most pool routes, has nothing to check here: tests/pools covers them.)
    if (!JSON.stringify([c.path, c.body ?? null]).includes(u.userId)) return;
    const stranger = uid('nobody');
    const otherConv = uid('c');
    const strangerPath = c.path.replace(u.userId, stranger).replace(u.conversationId, otherConv);
    const strangerBody = JSON.parse(
      JSON.stringify(c.body ?? null)
        .split(u.userId)
        .join(stranger)
        .split(u.conversationId)
        .join(otherConv),
    );
    const r = await h.call(key, c.method, strangerPath, strangerBody ?? undefined);
    // A write that references only u's objects (entities, facts, turns) cannot use them: 404/400, never 5xx.
    if (route.access === 'claim') expect([route.status, 400, 404]).toContain(r.status);
    // A tenant-wide read takes the user id as a filter: an unknown user matches nothing.
    else if (route.access === 'tenant') expect(r.status).toBe(route.status);
    else expect(r.status).toBe(404);
  });
});

describe('validation and error shape', () => {
  it('answers 400 INVALID_JSON for a malformed body, 415 for a non-JSON body, 413 for a huge one', async () => {
    const bad = await h.call(key, 'POST', '/v1/turns', '{"userId": "a",');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: { code: 'INVALID_JSON', message: expect.stringContaining('not valid JSON'), details: {}, requestId: expect.any(String) } });
    expect((await h.call(key, 'POST', '/v1/turns', 'userId=a', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
    const huge = await h.call(key, 'POST', '/v1/turns', { userId: 'a', conversationId: 'c', role: 'user', content: 'x'.repeat(70_000) });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 400 for a JSON body that is not an object, and never 500 for junk', async () => {
    for (const body of ['[]', '"text"', '42', 'null', '{"turns": "x"}', '{"userId": {"$ne": 1}}']) {
      for (const path of ['/v1/turns', '/v1/turns/batch', '/v1/turns/recent', '/v1/search/vector']) {
        const r = await h.call(key, 'POST', path, body);
        expect({ path, body, status: r.status }).toEqual({ path, body, status: 400 });
        expect(r.body.error.code).toMatch(/VALIDATION_FAILED|INVALID_JSON/);
      }
    }
    const r = await h.call(key, 'GET', '/v1/users/%E0%A4%A/stats');
    expect(r.status).toBe(400);
  });

  it('answers 404 for an unknown route and 405 with Allow for a wrong method', async () => {
    const r = await h.call(key, 'GET', '/v1/nope');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('ROUTE_NOT_FOUND');
    const m = await h.call(key, 'GET', '/v1/turns');
    expect(m.status).toBe(405);
    expect(m.headers.get('allow')).toBe('POST');
    expect((await h.call(undefined, 'GET', '/nowhere')).status).toBe(404);
  });

  it("returns the caller's request id, or makes one", async () => {
    const r = await h.call(key, 'GET', '/v1/nope', undefined, { 'x-request-id': 'req-123' });
    expect(r.headers.get('x-request-id')).toBe('req-123');
    expect(r.body.error.requestId).toBe('req-123');
    const bad = await h.call(key, 'GET', '/v1/nope', undefined, { 'x-request-id': 'bad id with spaces' });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('404s a conversation of another user of the same tenant, and a context value that is not set', async () => {
    const a = await seed(h, key);
    const b = await seed(h, key);
    expect((await h.call(key, 'GET', `/v1/users/${b.userId}/conversations/${a.conversationId}`)).status).toBe(404);
    const miss = await h.call(key, 'GET', `${a.s}/context/never-set`);
    expect(miss.status).toBe(404);
    expect(miss.body.error.details).toMatchObject({ what: 'context value' });
  });
});

describe('round trips through the API', () => {
  it('stores, reads back and searches a conversation; working memory follows', async () => {
    const u = await seed(h, key);
    const conv = await h.call(key, 'GET', `/v1/users/${u.userId}/conversations/${u.conversationId}`);
    expect(conv.body.turns.map((t: { index: number; userId: string; conversationId: string; id: string }) => [t.index, t.userId, t.conversationId, t.id])).toEqual([
      [0, u.userId, u.conversationId, `${u.conversationId}:0`],
      [1, u.userId, u.conversationId, `${u.conversationId}:1`],
    ]);
    const again = await h.call(key, 'POST', '/v1/turns', { userId: u.userId, conversationId: u.conversationId, index: 0, role: 'user', content: 'I moved to Lisbon last spring.' });
    expect(again.status).toBe(201);
    expect(again.body.created).toBe(false);
    await h.m.backgroundEmbedder.drain();
    const hits = await h.call(key, 'POST', '/v1/search/vector', { userId: u.userId, query: 'Which place did I relocate to last year?', topK: 1 });
    expect(hits.body.results[0].turn.content).toContain('Lisbon');
    await h.call(key, 'PUT', `${u.s}/context/topic`, { value: ['a', 1] });
    await h.call(key, 'POST', `${u.s}/thoughts`, { thought: 'ask about the move' });
    const snap = await h.call(key, 'GET', u.s);
    expect(snap.body.context).toEqual({ topic: ['a', 1] });
    expect(snap.body.thoughts.map((t: { thought: string }) => t.thought)).toEqual(['ask about the move']);
    expect(snap.body.recentTurns.map((t: { index: number }) => t.index)).toEqual([1, 0]);
    await h.call(key, 'DELETE', u.s);
    expect((await h.call(key, 'GET', u.s)).body).toMatchObject({ context: {}, thoughts: [], recentTurns: [] });
  });

  it('forgets a user: afterwards the user is unknown (404) and stats of nothing remain', async () => {
    const u = await seed(h, key);
    const r = await h.call(key, 'DELETE', `/v1/users/${u.userId}`);
    expect(r.body.nodesDeleted).toBeGreaterThanOrEqual(4);
    expect(r.body.userId).toBe(u.userId);
    expect((await h.call(key, 'GET', `/v1/users/${u.userId}/stats`)).status).toBe(404);
    expect((await h.call(key, 'DELETE', `/v1/users/${u.userId}`)).status).toBe(404);
  });
});

describe('operations endpoints', () => {
  it('healthz, metrics with request and operation histograms and graph counts', async () => {
    expect((await h.call(undefined, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    const u = await seed(h, key);
    expect((await h.call(key, 'POST', '/v1/recall', { userId: u.userId, query: 'Lisbon' })).status).toBe(200);
    expect((await h.call(key, 'GET', `${u.s}/context/none`)).status).toBe(404);
    const metrics = await h.call(undefined, 'GET', '/metrics');
    expect(metrics.status).toBe(200);
    let text = String(metrics.body);
    expect(text).toMatch(/mnemograph_http_request_duration_seconds_count\{method="POST",route="\/v1\/turns",status="201"\} \d+/);
    expect(text).toMatch(/mnemograph_operation_duration_seconds_count\{operation="storeTurn",outcome="ok"\} \d+/);
    expect(text).toMatch(/mnemograph_graph_nodes\{label="Turn"\} [1-9]\d*/);
    expect(text).toMatch(/mnemograph_graph_relationships\{type="HAS_TURN"\} [1-9]\d*/);
    expect(text).toMatch(/mnemograph_embedding_backlog \d+/);
    expect(text).toMatch(/mnemograph_working_memory_lookups_total\{result="(hit|miss)"\} \d+/);
    expect(text).toMatch(/mnemograph_recall_results_count\{technique="[a-z]+"\} [1-9]/);
    // recall/context, the block agents ask for, reports its stages as remember does.
    const embedCount = () => Number(/^mnemograph_recall_stage_seconds_count\{stage="embed"\} (\d+)$/m.exec(text)?.[1]);
    const before = embedCount();
    expect(before).toBeGreaterThan(0);
    expect((await h.call(key, 'POST', '/v1/recall/context', { userId: u.userId, query: 'Lisbon' })).status).toBe(200);
    text = String((await h.call(undefined, 'GET', '/metrics')).body);
    expect(embedCount()).toBe(before + 1);
    expect(text).toMatch(/mnemograph_consolidation_lag_seconds \d/);
    expect(text).toMatch(/mnemograph_consolidation_backlog \d/);
    expect(text).toMatch(/# TYPE mnemograph_job_items_total counter/);
    expect(text).toMatch(/# TYPE mnemograph_job_last_success_timestamp_seconds gauge/);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
  });

  it('readyz reports each store with its latency', async () => {
    const r = await h.call(undefined, 'GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ready: true, stores: { neo4j: { up: true }, postgres: { up: true }, redis: { up: true } } });
    expect(r.body.stores.neo4j.latencyMs).toBeGreaterThan(0);
  });
});
