import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MnemographClient, NotFoundError, RateLimitedError, UnauthorizedError, ValidationFailedError, ConnectionError, routes } from '../../src/client';
import { uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

let h: Harness;
let client: MnemographClient;
beforeAll(async () => {
  h = await openHarness();
  client = new MnemographClient({ baseUrl: h.url, apiKey: (await h.tenant()).key, backoffMs: 10 });
});
afterAll(async () => h.close());

describe('MnemographClient against the real server', () => {
  it('mirrors the facade: store, read, search, working memory, stats, forget', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const first = await client.storeTurn({ userId, conversationId, role: 'user', content: 'My daughter starts school in Porto in September.' });
    expect(first).toMatchObject({ created: true, turn: { userId, conversationId, index: 0, id: `${conversationId}:0` } });
    const batch = await client.storeTurns([
      { userId, conversationId, role: 'assistant', content: 'Exciting! Which school?' },
      { userId, conversationId, role: 'user', content: 'The international one near the river.' },
    ]);
    expect(batch.map((r) => r.turn.index)).toEqual([1, 2]);
    expect((await client.getConversation(userId, conversationId)).map((t) => t.content)).toHaveLength(3);
    expect((await client.getRecentTurns({ userId, hours: 1, limit: 2 })).map((t) => t.index)).toEqual([2, 1]);
    await h.m.backgroundEmbedder.drain();
    const hits = await client.vectorSearch({ userId, query: 'my daughter starts school in Porto', topK: 2 });
    expect(hits.map((x) => x.turn.content).join(' ')).toContain('Porto');
    expect(hits[0]!.score).toBeGreaterThan(0);

    const s = client.session({ userId, conversationId });
    await s.set('plan', { step: 2 }, 60);
    expect(await s.get('plan')).toEqual({ step: 2 });
    expect(await s.get('missing')).toBeNull();
    await s.pushThought('ask about the school run');
    await s.setActiveGoal({ goalId: 'g-1', description: 'help with the move' });
    expect(await s.activeGoal()).toEqual({ goalId: 'g-1', description: 'help with the move' });
    expect((await s.thoughts()).map((t) => t.thought)).toEqual(['ask about the school run']);
    expect((await s.recentTurns()).map((t) => t.index)).toEqual([2, 1, 0]);
    await s.delete('plan');
    expect(await s.context()).toEqual({});
    await s.clear();

    const stats = await client.userStats(userId);
    expect(stats.nodes).toMatchObject({ Turn: 3, Conversation: 1, User: 1 });
    const erased = await client.forgetUser(userId);
    expect(erased.nodesDeleted).toBe(5);
    await expect(client.userStats(userId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('throws typed errors carrying code, details and request id', async () => {
    const err = await client.storeTurn({ userId: 'bad:id', conversationId: 'c', role: 'user', content: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationFailedError);
    expect(err).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', details: { issues: [expect.objectContaining({ path: 'userId' })] }, requestId: expect.any(String) });
    await expect(client.getConversation(uid('nobody'), 'c')).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const anon = new MnemographClient({ baseUrl: h.url, apiKey: 'mg_000000000000_' + 'y'.repeat(43) });
    await expect(anon.userStats('x')).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("covers knowledge, recall, goals, strategies and observations with the facade's names", async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await client.storeTurn({ userId, conversationId, role: 'user', content: 'My sister Anna lives in Lyon.' });
    const anna = await client.upsertEntity({ userId, name: 'Anna', type: 'person', aliases: ['my sister'] });
    expect(anna.created).toBe(true);
    expect((await client.findEntitiesByName({ userId, name: 'my sister' })).map((e) => e.id)).toEqual([anna.entity.id]);
    const fact = await client.learnFact({ userId, claim: 'Anna lives in Lyon', aboutEntityIds: [anna.entity.id], sourceTurnId: `${conversationId}:0` });
    expect(fact.fact).toMatchObject({ claim: 'Anna lives in Lyon', userId, sourceTurnId: `${conversationId}:0` });
    expect((await client.getFact(userId, fact.fact.id))?.claim).toBe('Anna lives in Lyon');
    expect(await client.getFact(userId, 'no-such-fact')).toBeNull();
    const fixed = await client.correctFact({ userId, factId: fact.fact.id, claim: 'Anna lives in Marseille' });
    expect(fixed.oldFact.id).toBe(fact.fact.id);
    expect((await client.confirmFact(userId, fixed.newFact.id)).protected).toBe(true);
    const graph = await client.getEntityGraph({ userId, entityIds: [anna.entity.id] });
    expect(graph.facts.map((f) => f.claim)).toEqual(['Anna lives in Marseille']);

    const bundle = await client.remember({ userId, query: 'Where does Anna live?' });
    expect(bundle.userId).toBe(userId);
    expect(bundle.turns.map((t) => t.turn.conversationId)).toContain(conversationId);
    expect(await client.recallContext({ userId, query: 'Where does Anna live?', tokenBudget: 300 })).toContain('Lyon');

    const goal = await client.addGoal({ userId, description: 'Visit Anna', priority: 6 });
    expect((await client.listActiveGoals({ userId })).map((g) => g.id)).toEqual([goal.goal.id]);
    expect((await client.getGoal(userId, goal.goal.id))?.goal.description).toBe('Visit Anna');
    expect((await client.completeGoal({ userId, goalId: goal.goal.id })).goal.status).toBe('completed');
    const strategy = await client.learnStrategy({ userId, description: 'Check trains then book', toolSequence: ['trains', 'book'], contextPattern: 'plan a visit' });
    expect((await client.findStrategies({ userId, task: 'plan a visit to Lyon' })).map((r) => r.strategy.id)).toContain(strategy.strategy.id);
    const inv = await client.recordInvocation({ userId, conversationId, toolName: 'trains', success: true, latencyMs: 9 });
    expect((await client.getInvocations(userId, conversationId)).map((i) => i.id)).toEqual([inv.invocation.id]);
    const obs = await client.recordObservation(userId, 'likes trains', 'preference');
    expect(obs).toMatchObject({ created: true, observation: { userId, content: 'likes trains' } });
    expect((await client.getUserProfile(userId)).userId).toBe(userId);
  });

  it('calls any route of the table through call()', async () => {
    const userId = uid('u');
    await client.call(routes.storeTurn, { userId, conversationId: uid('c'), role: 'user', content: 'hello' });
    const r = await client.call(routes.userStats, { userId });
    expect(r.nodes.Turn).toBe(1);
  });
});

describe('retries', () => {
  /** A server answering 429/503 `failures` times before proxying to the real API. */
  async function flaky(status: number, failures: number, retryAfter?: string): Promise<{ server: Server; url: string; hits: () => number }> {
    let hits = 0;
    const server = createServer((req, res) => {
      // A failed proxy call (say, the API went away) answers 502 instead of becoming an unhandled rejection.
      serve(req, res).catch((err: unknown) => res.writeHead(502).end(String(err)));
    });
    async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
      hits++;
      if (hits <= failures) {
        res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
        res.end(JSON.stringify({ error: { code: status === 429 ? 'RATE_LIMITED' : 'STORE_UNAVAILABLE', message: 'try later', details: {} } }));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const upstream = await fetch(h.url + req.url, { method: req.method, headers: req.headers as Record<string, string>, body: chunks.length ? Buffer.concat(chunks) : undefined });
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(await upstream.text());
    }
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
  }

  it('retries 503 and 429 (honouring Retry-After) and then succeeds', async () => {
    const key = (await h.tenant()).key;
    for (const [status, retryAfter] of [
      [503, undefined],
      [429, '1'],
    ] as const) {
      const f = await flaky(status, 2, retryAfter);
      try {
        const c = new MnemographClient({ baseUrl: f.url, apiKey: key, backoffMs: 5, retries: 3 });
        const t0 = Date.now();
        const r = await c.storeTurn({ userId: uid('u'), conversationId: uid('c'), role: 'user', content: 'after retries' });
        expect(r.created).toBe(true);
        expect(f.hits()).toBe(3);
        if (retryAfter) expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
      } finally {
        f.server.close();
      }
    }
  });

  it('gives up after its retries with the typed error', async () => {
    const f = await flaky(429, 10);
    try {
      const c = new MnemographClient({ baseUrl: f.url, apiKey: 'k', backoffMs: 1, retries: 2 });
      await expect(c.userStats('u')).rejects.toBeInstanceOf(RateLimitedError);
      expect(f.hits()).toBe(3);
    } finally {
      f.server.close();
    }
  });

  it('reports an unreachable server as ConnectionError after retrying', async () => {
    const c = new MnemographClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', backoffMs: 1, retries: 1 });
    await expect(c.userStats('u')).rejects.toBeInstanceOf(ConnectionError);
  });
});
