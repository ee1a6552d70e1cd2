import { createMnemograph, type Mnemograph } from '../../src/container';
import { ValidationError } from '../../src/errors';
import { keyPrincipal } from '../../src/access';
import { eventually, testConfig, uid } from '../support/stack';

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'reads', EMBEDDING_MODE: 'deferred', LOG_LEVEL: 'silent' }));
});
afterAll(async () => m.close());

const tag = { subsystem: 'test', op: 'check' };
async function neo4jTurnCount(userId: string): Promise<number> {
  return (await m.neo4j.read<{ n: number }>('MATCH (t:Turn {user_id: $userId}) RETURN count(t) AS n', { userId }, tag))[0]!.n;
}
async function pgTurnCount(userId: string): Promise<number> {
  return Number((await m.pg.primary.query('SELECT count(*) AS n FROM conversation_logs WHERE user_id = $1', [userId])).rows[0].n);
}
async function redisKeys(userId: string): Promise<string[]> {
  return m.redis.keys(`working:${userId}:*`);
}

describe('storeTurn', () => {
  it('is found by getConversation, getRecentTurns, vectorSearch and working memory', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const { turn, created } = await m.memory.storeTurn({
      userId,
      conversationId,
      role: 'user',
      content: 'My sister Alice just adopted a golden retriever named Biscuit.',
      metadata: { source: 'chat', speaker: 'Bob' },
    });
    expect(created).toBe(true);
    expect(turn).toMatchObject({ userId, channel: '_global', conversationId, index: 0, role: 'user', embedded: false });
    expect(turn.tokenCount).toBeGreaterThan(5);
    await m.memory.storeTurn({ userId, conversationId, role: 'assistant', content: 'That is lovely! How old is Biscuit?' });

    const conv = await m.memory.getConversation(userId, conversationId);
    expect(conv.map((t) => [t.index, t.role])).toEqual([
      [0, 'user'],
      [1, 'assistant'],
    ]);
    expect(conv[0]!.metadata).toEqual({ source: 'chat', speaker: 'Bob' });
    const followed = await m.neo4j.read<{ n: number }>('MATCH (:Turn {id: $a})-[:FOLLOWED_BY]->(:Turn {id: $b}) RETURN count(*) AS n', { a: conv[0]!.id, b: conv[1]!.id }, tag);
    expect(followed[0]!.n).toBe(1);

    expect((await m.memory.getRecentTurns({ userId, hours: 1 })).map((t) => t.index)).toEqual([1, 0]);

    await m.backgroundEmbedder.drain();
    const hits = await m.memory.vectorSearch({ userId, query: 'What kind of dog did Alice get?', topK: 1 });
    expect(hits[0]?.turn.id).toBe(conv[0]!.id);
    expect(hits[0]!.turn.embedded).toBe(true);

    const working = await m.memory.session({ userId, conversationId }).recentTurns(10);
    expect(working.map((t) => t.index)).toEqual([1, 0]);
    expect(await pgTurnCount(userId)).toBe(2);
  });

  it('filters recent turns by time window and channel', async () => {
    const userId = uid('u');
    const old = new Date(Date.now() - 48 * 3_600_000).toISOString();
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'old global', timestamp: old });
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'new global' });
    await m.memory.storeTurn({ userId, channel: 'proj-a', conversationId: uid('c'), role: 'user', content: 'new in a' });
    await m.memory.storeTurn({ userId, channel: 'proj-b', conversationId: uid('c'), role: 'user', content: 'new in b' });
    const contents = async (q: Parameters<typeof m.memory.getRecentTurns>[0]) => (await m.memory.getRecentTurns(q)).map((t) => t.content).sort();
    expect(await contents({ userId, hours: 24 })).toEqual(['new global']);
    expect(await contents({ userId, channels: ['proj-a'], hours: 24 })).toEqual(['new global', 'new in a']);
    expect(await contents({ userId, channels: ['proj-a'], hours: 72 })).toEqual(['new global', 'new in a', 'old global']);
    expect(await contents({ userId, channels: ['proj-a', 'proj-b'], hours: 72, limit: 2 })).toHaveLength(2);
  });

  it('never shows one user or channel the turns of another, even with identical text', async () => {
    const [alice, bob] = [uid('alice'), uid('bob')];
    const text = 'The launch code for project Falcon is 4921';
    await m.memory.storeTurn({ userId: alice, conversationId: uid('c'), role: 'user', content: text });
    await m.memory.storeTurn({ userId: bob, channel: 'secret', conversationId: uid('c'), role: 'user', content: text });
    await m.backgroundEmbedder.drain();
    const aliceHits = await m.memory.vectorSearch({ userId: alice, query: text, topK: 10 });
    expect(aliceHits.map((h) => h.turn.userId)).toEqual([alice]);
    expect(await m.memory.vectorSearch({ userId: bob, query: text, topK: 10 })).toEqual([]);
    expect((await m.memory.vectorSearch({ userId: bob, channels: ['secret'], query: text, topK: 10 })).map((h) => h.turn.userId)).toEqual([bob]);
    expect(await m.memory.getRecentTurns({ userId: bob, hours: 1 })).toEqual([]);
  });

  it('leaves one turn for duplicate and racing writes', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const input = { userId, conversationId, index: 0, role: 'user' as const, content: 'same turn' };
    const results = await Promise.all(Array.from({ length: 8 }, () => m.memory.storeTurn(input)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.turn.id)).size).toBe(1);
    const again = await m.memory.storeTurn({ ...input, content: 'a different text for the same slot' });
    expect(again).toMatchObject({ created: false, turn: { content: 'same turn' } });
    expect(await neo4jTurnCount(userId)).toBe(1);
    expect(await pgTurnCount(userId)).toBe(1);
    expect(await m.memory.session({ userId, conversationId }).recentTurns()).toHaveLength(1);
  });

  it('assigns distinct indexes to concurrent turns without one', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await Promise.all(Array.from({ length: 10 }, (_, i) => m.memory.storeTurn({ userId, conversationId, role: 'user', content: `turn ${i}` })));
    const conv = await m.memory.getConversation(userId, conversationId);
    expect(conv.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const links = await m.neo4j.read<{ n: number }>('MATCH (c:Conversation {id: $id})-[:HAS_TURN]->(t)-[:FOLLOWED_BY]->() RETURN count(*) AS n', { id: conversationId }, tag);
    expect(links[0]!.n).toBe(9);
  });

  it('imports batches idempotently', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const batch = Array.from({ length: 300 }, (_, i) => ({ userId, conversationId, index: i, role: i % 2 ? ('assistant' as const) : ('user' as const), content: `line ${i}` }));
    expect((await m.memory.storeTurns(batch)).filter((r) => r.created)).toHaveLength(300);
    expect((await m.memory.storeTurns(batch.slice(0, 10))).filter((r) => r.created)).toHaveLength(0);
    expect(await neo4jTurnCount(userId)).toBe(300);
    expect(await pgTurnCount(userId)).toBe(300);
  });

  it('writes a large import in slices that yield to interactive calls, whole and in order', async () => {
    const userId = uid('u');
    const [a, b] = [uid('c'), uid('c')];
    // 250 turns without indexes over two conversations, interleaved, and one turn twice (rows 3 and 203).
    const batch = Array.from({ length: 250 }, (_, i) => ({ userId, conversationId: i % 2 ? b : a, role: 'user' as const, content: `slice line ${i}` }));
    batch[203] = { ...batch[3]!, index: 1 } as (typeof batch)[number];
    batch[3] = { ...batch[3]!, index: 1 } as (typeof batch)[number];
    let yields = 0;
    const idle = m.gate.idle.bind(m.gate);
    m.gate.idle = (ms) => {
      if (ms !== undefined) yields++; // the import's bounded pauses (the background embedder's waits name no bound)
      return idle(ms);
    };
    const leave = m.gate.enter(); // an interactive call under way: every pause waits for it (bounded)
    try {
      const results = await m.memory.storeTurns(batch);
      expect(results.filter((r) => r.created)).toHaveLength(249);
      expect(results[203]).toMatchObject({ created: false, turn: { id: results[3]!.turn.id } });
    } finally {
      leave();
      m.gate.idle = idle;
    }
    // Prepared, written in Neo4j and logged in Postgres 100 turns at a time: two pauses each,
    // and one before the commit.
    expect(yields).toBe(7);
    for (const id of [a, b]) {
      const conv = await m.memory.getConversation(userId, id);
      expect(conv.map((t) => t.index)).toEqual(Array.from({ length: id === a ? 125 : 124 }, (_, i) => i));
      const links = await m.neo4j.read<{ n: number }>('MATCH (:Conversation {id: $id})-[:HAS_TURN]->(t)-[:FOLLOWED_BY]->() RETURN count(*) AS n', { id }, tag);
      expect(links[0]!.n).toBe(conv.length - 1);
    }
    expect(await pgTurnCount(userId)).toBe(249);
    yields = 0;
    m.gate.idle = (ms) => {
      if (ms !== undefined) yields++;
      return idle(ms);
    };
    try {
      await m.memory.storeTurns(batch.slice(0, 100));
    } finally {
      m.gate.idle = idle;
    }
    expect(yields).toBe(0);
  });
});

describe('acting for a principal', () => {
  it('as(principal) shares the stores and puts the tenant into the scope it builds', async () => {
    const userId = uid('acme.u');
    const conversationId = uid('acme.c');
    const acme = m.memory.as(keyPrincipal('acme', 'key-1'));
    await acme.storeTurn({ userId, conversationId, role: 'user', content: 'stored by the tenant view' });
    expect((await m.memory.getConversation(userId, conversationId)).map((t) => t.content)).toEqual(['stored by the tenant view']);
    expect(acme.session({ userId, conversationId }).scope).toMatchObject({ tenantId: 'acme', agentId: null, userId, channel: '_global', conversationId });
    expect(m.memory.session({ userId, conversationId }).scope).toMatchObject({ tenantId: null, agentId: null });
    expect(await acme.session({ userId, conversationId }).recentTurns()).toHaveLength(1);
    expect(acme.semantic).not.toBe(m.memory.semantic);
  });
});

describe('bad input', () => {
  const base = { userId: 'bad-input-user', conversationId: 'c1', role: 'user', content: 'hello' };
  it.each([
    ['empty content', { ...base, content: '   ' }, /content must not be empty/],
    ['unknown role', { ...base, role: 'wizard' }, /role/],
    ['10 MB content', { ...base, content: 'x'.repeat(10 * 1024 * 1024) }, /content must be at most 100000 characters/],
    ['invalid user id', { ...base, userId: 'a:b' }, /userId must be/],
    ['invalid conversation id', { ...base, conversationId: '../etc' }, /conversationId/],
    ['invalid channel', { ...base, channel: 'has space' }, /channel/],
    ['wrong types', { ...base, index: 'three', content: 42 }, /index|content/],
    ['unknown field', { ...base, userid: 'x' }, /Unrecognized key/],
    ['bad timestamp', { ...base, timestamp: 'yesterday' }, /timestamp/],
  ])('%s gets a ValidationError and writes nothing', async (_name, input, message) => {
    const userId = uid('bad');
    const attempt = m.memory.storeTurn({ ...(input as object), ...(input.userId === 'a:b' ? {} : { userId }) } as never);
    await expect(attempt).rejects.toBeInstanceOf(ValidationError);
    await expect(attempt).rejects.toThrow(message);
    expect(await neo4jTurnCount(userId)).toBe(0);
    expect(await pgTurnCount(userId)).toBe(0);
    expect(await redisKeys(userId)).toEqual([]);
  });

  it('refuses a conversation owned by another user, writing nothing', async () => {
    const conversationId = uid('c');
    await m.memory.storeTurn({ userId: uid('owner'), conversationId, role: 'user', content: 'mine' });
    const intruder = uid('intruder');
    await expect(m.memory.storeTurn({ userId: intruder, conversationId, role: 'user', content: 'theirs' })).rejects.toThrow(/belongs to another user or channel/);
    expect(await neo4jTurnCount(intruder)).toBe(0);
    expect(await pgTurnCount(intruder)).toBe(0);
    expect(await m.memory.getConversation(intruder, conversationId)).toEqual([]);
  });

  it('rejects a whole batch when one turn is bad', async () => {
    const userId = uid('u');
    const good = { userId, conversationId: uid('c'), role: 'user' as const, content: 'fine' };
    await expect(m.memory.storeTurns([good, { ...good, content: '' }])).rejects.toThrow(/\[1\]\.content|1\.content/);
    expect(await neo4jTurnCount(userId)).toBe(0);
  });
});

describe('audit', () => {
  it('records writes and reads at level reads, with a config snapshot', async () => {
    const userId = uid('u');
    const { turn } = await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'audited' });
    await m.memory.getRecentTurns({ userId, hours: 1 });
    await m.audit.flush();
    const rows = await eventually(async () => {
      const r = await m.pg.primary.query('SELECT operation, memory_type, affected_ids, result_count, config_snapshot FROM memory_audit_log WHERE user_id = $1 ORDER BY id', [userId]);
      return r.rows.length >= 2 ? r.rows : undefined;
    }, 'audit rows');
    expect(rows.map((r) => r.operation)).toEqual(['store', 'getRecentTurns']);
    expect(rows[0].affected_ids).toEqual([turn.id]);
    expect(rows[1].result_count).toBe(1);
    // At `reads`, a read lists the items it returned (seed 000's context log).
    expect(rows[1].affected_ids).toEqual([turn.id]);
    expect(rows[0].config_snapshot).toMatchObject({ audit_level: 'reads', embedding: { model: testConfig().embedding.model, dimensions: testConfig().embedding.dimensions } });
  });
});
