import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer/cjs/encoding/o200k_base';
import { createMnemograph, type Mnemograph } from '../../src/container';
import type { Embedder } from '../../src/embedding';
import { userScope } from '../../src/access';
import { Neo4jEpisodicStore } from '../../src/episodic';
import { NEO4J_BACKFILLS } from '../../src/migrate/backfills';
import { MnemographError, ValidationError } from '../../src/errors';
import {
  HybridRecallEngine,
  RecallQuerySchema,
  TURN_GENERATORS,
  TURN_STAGES,
  recallSettingsFrom,
  type CandidateGenerator,
  type MemoryBundle,
  type Techniques,
  type TurnStage,
} from '../../src/retrieval';
import { startAnthropicServer, startOpenAIChatServer, type LlmServer } from '../support/llm-servers';
import { eventually, expectSameRanking, recordingReads, testConfig, uid } from '../support/stack';

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'reads', EMBEDDING_MODE: 'inline', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
});
afterAll(async () => m.close());

/** Only the two base signals, so the expected order follows from RRF alone. */
const PLAIN: Techniques = { neighbours: false, speakerBoost: false, timeAnswerBoost: false, recency: false, selfQuery: 'off' };
const KEYWORDS_ONLY: Techniques = { ...PLAIN, vector: false };
const contents = (b: MemoryBundle) => b.turns.map((t) => t.turn.content);
/** The shared embedder for a second instance, which must not close it; `embedded` records the texts. */
const borrowed = (embedded: string[] = [], onEmbed?: () => void): Embedder => ({
  provider: m.embedder.provider,
  model: m.embedder.model,
  dimensions: m.embedder.dimensions,
  embed: (texts, opts) => (embedded.push(...texts), onEmbed?.(), m.embedder.embed(texts, opts)),
  close: () => Promise.resolve(),
});

/** Runs `fn` on a second instance with `env` settings, sharing the embedder; closes it after. */
async function withInstance(env: Record<string, string>, fn: (r: Mnemograph) => Promise<void>, embedder: Embedder = borrowed()): Promise<void> {
  const r = await createMnemograph(testConfig({ LOG_LEVEL: 'silent', ...env }), { embedder, backgroundEmbedding: false });
  try {
    await fn(r);
  } finally {
    await r.close();
  }
}

async function store(userId: string, content: string, extra: Partial<Parameters<typeof m.memory.storeTurn>[0]> = {}) {
  return (await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content, ...extra })).turn;
}

describe('remember', () => {
  it('covers the active channel and _global, not other channels, and audits cross-channel hits', async () => {
    const userId = uid('u');
    await store(userId, 'The quarterly budget review is on Friday', { channel: 'proj-a' });
    await store(userId, 'My favourite budget spreadsheet template is the blue one');
    await store(userId, 'The budget for project B is secret', { channel: 'proj-b' });
    const b = await m.memory.remember({ userId, query: 'budget', channels: ['proj-a'], techniques: PLAIN });
    expect(b.channels.sort()).toEqual(['_global', 'proj-a']);
    expect(b.turns.map((t) => t.turn.channel).sort()).toEqual(['_global', 'proj-a']);
    expect(contents(b)).not.toContain('The budget for project B is secret');
    // Deduplicated: one entry per turn even though both signals found them.
    expect(new Set(b.turns.map((t) => t.turn.id)).size).toBe(b.turns.length);

    await m.audit.flush();
    const rows = await eventually(async () => {
      const r = await m.pg.primary.query("SELECT metadata, target_channels FROM memory_audit_log WHERE user_id = $1 AND operation = 'remember'", [userId]);
      return r.rows.length > 0 ? r.rows : undefined;
    }, 'remember audit row');
    expect(rows[0].metadata.crossChannelHits).toEqual({ _global: 1 });
    expect([...rows[0].target_channels].sort()).toEqual(['_global', 'proj-a']);
  });

  it('never returns another user\u2019s turns, even with identical text', async () => {
    const [alice, bob] = [uid('alice'), uid('bob')];
    const text = 'The launch code for project Falcon is 4921';
    const mine = await store(alice, text);
    await store(bob, text);
    await store(bob, 'Falcon launch code launch code Falcon 4921');
    const b = await m.memory.remember({ userId: alice, query: 'What is the launch code for project Falcon?' });
    expect(b.turns.map((t) => t.turn.id)).toEqual([mine.id]);
    expect(b.turns[0]!.signals.fulltext?.rank).toBe(1);
    expect(b.turns[0]!.signals.vector?.rank).toBe(1);
  });

  it('narrows by metadata filters and time windows', async () => {
    const userId = uid('u');
    const conversationId = uid('c'); // one conversation, so the turns are each other's neighbours
    const old = new Date(Date.now() - 72 * 3_600_000).toISOString();
    await store(userId, 'Deploy notes: the staging cluster was rebuilt', { conversationId, metadata: { source: 'slack', connectionId: 'conn-1', contextType: 'ops' } });
    await store(userId, 'Deploy notes: the production cluster was upgraded', { conversationId, metadata: { source: 'email', connectionId: 'conn-2', contextType: 'ops' } });
    await store(userId, 'Deploy notes: the old cluster was retired', { conversationId, timestamp: old, metadata: { source: 'slack', connectionId: 'conn-1', contextType: 'history' } });
    const ask = async (extra: Partial<Parameters<typeof m.memory.remember>[0]>) => contents(await m.memory.remember({ userId, query: 'deploy notes cluster', techniques: PLAIN, ...extra })).sort();

    expect(await ask({})).toHaveLength(3);
    expect(await ask({ filters: { source: 'slack' } })).toEqual(['Deploy notes: the old cluster was retired', 'Deploy notes: the staging cluster was rebuilt']);
    expect(await ask({ filters: { connectionId: 'conn-2' } })).toEqual(['Deploy notes: the production cluster was upgraded']);
    expect(await ask({ filters: { contextType: 'history' } })).toEqual(['Deploy notes: the old cluster was retired']);
    expect(await ask({ timeWindowHours: 24 })).toEqual(['Deploy notes: the production cluster was upgraded', 'Deploy notes: the staging cluster was rebuilt']);
    expect(await ask({ filters: { until: new Date(Date.now() - 24 * 3_600_000).toISOString() } })).toEqual(['Deploy notes: the old cluster was retired']);
    // Neighbour expansion must not smuggle in a turn outside the filters.
    expect(await ask({ filters: { source: 'email' }, techniques: { neighbours: true } })).toEqual(['Deploy notes: the production cluster was upgraded']);
  });

  it('turns a time expression into a filter (self-query) when asked to', async () => {
    const userId = uid('u');
    await store(userId, 'We talked about the garden fence', { timestamp: '2023-05-10T10:00:00Z' });
    await store(userId, 'We talked about the garden shed', { timestamp: '2023-07-02T10:00:00Z' });
    const b = await m.memory.remember({ userId, query: 'What did we say about the garden in May 2023?', techniques: { ...PLAIN, selfQuery: 'filter' } });
    expect(contents(b)).toEqual(['We talked about the garden fence']);
    expect(b.time).toMatchObject({ from: 'self-query', mode: 'filter' });
    const boosted = await m.memory.remember({ userId, query: 'What did we say about the garden in July 2023?', techniques: { ...PLAIN, selfQuery: 'boost' } });
    expect(contents(boosted)[0]).toBe('We talked about the garden shed');
    expect(boosted.turns[0]!.signals.time).toBeDefined();
  });

  it('orders by reciprocal rank fusion of the full-text and vector ranks it reports', async () => {
    const userId = uid('u');
    for (const content of [
      'Remind me to water the tomato plants every morning',
      'Tomato tomato tomato soup recipe with basil',
      'The garden needs watering when it is hot',
      'I bought a new bicycle helmet yesterday',
      'Plants on the balcony need water in summer',
    ]) {
      await store(userId, content);
    }
    await withInstance({ RECALL_FUSION: 'rrf', RECALL_VECTOR_WEIGHT: '0.5' }, async (rrf) => {
      const b = await rrf.memory.remember({ userId, query: 'water the tomato plants', topK: 5, techniques: PLAIN });
      const k = rrf.config.recall.rrfK;
      const w = rrf.config.recall.vectorWeight;
      const expected = b.turns.map((t) => (t.signals.fulltext?.rank ? 1 / (k + t.signals.fulltext.rank) : 0) + (t.signals.vector?.rank ? w / (k + t.signals.vector.rank) : 0));
      for (let i = 1; i < expected.length; i++) expect(expected[i - 1]!).toBeGreaterThanOrEqual(expected[i]!);
      b.turns.forEach((t, i) => expect(t.score).toBeCloseTo(expected[i]!, 5));
      // Found by both signals, ranked first by both: first.
      expect(b.turns[0]!.turn.content).toBe('Remind me to water the tomato plants every morning');
      // A turn only the vector signal finds still makes the list, below the keyword matches.
      const vectorOnly = b.turns.filter((t) => !t.signals.fulltext);
      expect(vectorOnly.length).toBeGreaterThan(0);
    });
  });

  it('fuses by normalised score by default: the best of both lists scores the full weight of each', async () => {
    const userId = uid('u');
    for (const content of ['Remind me to water the tomato plants every morning', 'I bought a new bicycle helmet yesterday', 'The garden needs watering when it is hot']) {
      await store(userId, content);
    }
    const b = await m.memory.remember({ userId, query: 'water the tomato plants', topK: 5, techniques: PLAIN });
    expect(m.config.recall.fusion).toBe('score');
    const top = b.turns[0]!;
    expect(top.turn.content).toBe('Remind me to water the tomato plants every morning');
    expect(top.signals.fulltext?.rank).toBe(1);
    expect(top.signals.vector?.rank).toBe(1);
    // Min-max normalised: the top of each list counts 1 x its weight (full-text 1, vector 1).
    expect(top.score).toBeCloseTo(1 + m.config.recall.vectorWeight, 5);
    // The last of the vector list, which no keyword matched, scores nothing at all.
    const helmet = b.turns.find((t) => t.turn.content.includes('helmet'));
    expect(helmet?.signals).toMatchObject({ vector: { rank: 3 } });
    expect(helmet?.signals.fulltext).toBeUndefined();
    expect(helmet?.score).toBeCloseTo(0, 5);
  });

  it('scores neighbouring turns together and explains it', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    // Two named people talking (the conversation shape the neighbour weights are for).
    await m.memory.storeTurns([
      { userId, conversationId, role: 'user', content: 'What did you paint last weekend?', metadata: { speaker: 'Caroline' } },
      { userId, conversationId, role: 'assistant', content: 'A sunrise over the lake, in oils.', metadata: { speaker: 'Melanie' } },
      { userId, conversationId, role: 'user', content: 'Lovely. I need to buy groceries later.', metadata: { speaker: 'Caroline' } },
    ]);
    const b = await m.memory.remember({ userId, query: 'Which painting did they make?', techniques: { ...PLAIN, vector: false, neighbours: true } });
    const answer = b.turns.find((t) => t.turn.content.startsWith('A sunrise'));
    expect(answer?.signals.neighbour?.turnId).toBe(`${conversationId}:0`);
    expect(answer?.signals.fulltext).toBeUndefined();
    // The question gives way to its reply: the reply ranks first, the question after it.
    expect(contents(b).slice(0, 2)).toEqual(['A sunrise over the lake, in oils.', 'What did you paint last weekend?']);
    await withInstance({ RECALL_QUESTION_WEIGHT: '1', RECALL_ANSWER_BOOST: '1', RECALL_NEIGHBOUR_BACKWARD: '1' }, async (noDirection) => {
      const flat = await noDirection.memory.remember({ userId, query: 'Which painting did they make?', techniques: { ...PLAIN, vector: false, neighbours: true } });
      expect(contents(flat)[0]).toBe('What did you paint last weekend?');
    });

    const plain = await m.memory.remember({ userId, query: 'Which painting did they make?', techniques: { ...PLAIN, vector: false, neighbours: false } });
    expect(contents(plain)).toEqual(['What did you paint last weekend?']);
  });

  it('in a user–assistant chat (no speaker names) a turn passes only the chat share to the adjacent turns', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await m.memory.storeTurns([
      { userId, conversationId, role: 'user', content: 'What did you paint last weekend?' },
      { userId, conversationId, role: 'assistant', content: 'A sunrise over the lake, in oils.' },
      { userId, conversationId, role: 'user', content: 'Lovely. I need to buy groceries later.' },
    ]);
    const b = await m.memory.remember({ userId, query: 'Which painting did they make?', techniques: { ...PLAIN, vector: false, neighbours: true } });
    expect(contents(b).slice(0, 2)).toEqual(['What did you paint last weekend?', 'A sunrise over the lake, in oils.']);
    const [question, reply] = b.turns;
    expect(reply!.signals.neighbour?.turnId).toBe(`${conversationId}:0`);
    expect(reply!.score).toBeCloseTo(question!.score * m.config.recall.chatNeighbourWeight, 5);
    // Two turns away: nothing passes in a chat.
    expect(b.turns.find((t) => t.turn.content.startsWith('Lovely'))).toBeUndefined();
  });

  it('embeds a question in statement form when told to, and as asked by default with e5-small', async () => {
    const embedded: string[] = [];
    await withInstance(
      {},
      async (r) => {
        const userId = uid('u');
        await r.memory.remember({ userId, query: 'What did Ann paint last weekend?', techniques: { statementQuery: true } });
        await r.memory.remember({ userId, query: 'What did Ann paint last weekend?', techniques: { statementQuery: false } });
        await r.memory.remember({ userId, query: 'What did Ann paint last weekend?' });
        // The default follows the model: e5-small embeds questions better as asked.
        expect(embedded).toEqual(['Ann paint last weekend', 'What did Ann paint last weekend?', 'What did Ann paint last weekend?']);
      },
      borrowed(embedded),
    );
  });

  it('prefers the turns of a speaker the query names, not the turns that greet them', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await m.memory.storeTurns([
      { userId, conversationId, role: 'user', content: 'Thanks Bob! Bob, your boat trip sounds great, Bob.', metadata: { speaker: 'Alice' } },
      { userId, conversationId, role: 'assistant', content: 'I repainted the boat blue last spring.', metadata: { speaker: 'Bob' } },
      { userId, conversationId, role: 'user', content: 'We should plan a picnic soon.', metadata: { speaker: 'Alice' } },
    ]);
    const b = await m.memory.remember({ userId, query: 'What colour did Bob paint the boat?', techniques: { ...PLAIN, vector: false, speakerBoost: true } });
    expect(b.turns[0]!.turn.metadata.speaker).toBe('Bob');
    expect(b.turns[0]!.signals.speaker?.note).toBe('Bob');
  });

  it("leaves known speaker names out of the query's vector, and finds facts and entities with it", async () => {
    const embedded: string[] = [];
    await withInstance(
      {},
      async (r) => {
        const userId = uid('u');
        const conversationId = uid('c');
        await r.memory.storeTurns([
          { userId, conversationId, role: 'user', content: 'I went swimming with the kids.', metadata: { speaker: 'Melanie' } },
          { userId, conversationId, role: 'assistant', content: 'Sounds fun, Melanie!', metadata: { speaker: 'Caroline' } },
        ]);
        // Another user's speakers are not this user's.
        await r.memory.storeTurns([{ userId: uid('other'), conversationId: uid('c'), role: 'user', content: 'Hi.', metadata: { speaker: 'Zed' } }]);
        expect((await new Neo4jEpisodicStore(r.neo4j).speakers(userScope(userId))).sort()).toEqual(['Caroline', 'Melanie']);
        embedded.length = 0;
        // The user's speakers are read from their conversations: the first recall of this
        // instance already leaves the name out.
        await r.memory.remember({ userId, query: 'What does Melanie do with the kids?' });
        expect(embedded.splice(0)).toEqual(['What does do with the kids?']);
        // No facts or entities yet: only the turn search embeds, without the name.
        await r.memory.remember({ userId, query: "What is Melanie's favourite sport?" });
        expect(embedded.splice(0)).toEqual(['What is favourite sport?']);
        // With a fact to find, the sources search with the same vector (one embedding per
        // recall); the name still reaches the fact through its full-text search.
        await r.memory.semantic.learnFact({ userId, channel: '_global', claim: 'Melanie loves swimming' });
        embedded.length = 0;
        const b = await r.memory.remember({ userId, query: "What is Melanie's favourite sport?" });
        expect(embedded.splice(0)).toEqual(['What is favourite sport?']);
        expect(b.facts.map((f) => f.text)).toContain('Melanie loves swimming');
      },
      borrowed(embedded),
    );
  });

  it('gives conversations and users stored before they kept speakers the lists from their turns (migrations 007, 008)', async () => {
    const userId = uid('old');
    const conversationId = uid('c');
    await m.memory.storeTurns([
      { userId, conversationId, role: 'user', content: 'I went swimming with the kids.', metadata: { speaker: 'Melanie' } },
      { userId, conversationId, role: 'assistant', content: 'Sounds fun!', metadata: { speaker: 'Caroline' } },
      { userId, conversationId: uid('c'), role: 'user', content: 'No speaker here.' },
    ]);
    await m.neo4j.write('MATCH (c:Conversation) WHERE c.user_id = $userId REMOVE c.speakers', { userId }, { subsystem: 'test', op: 'age' });
    await m.neo4j.write('MATCH (u:User {id: $userId}) REMOVE u.speakers', { userId }, { subsystem: 'test', op: 'age' });
    const episodic = new Neo4jEpisodicStore(m.neo4j);
    expect(await episodic.speakers(userScope(userId))).toEqual([]);
    await NEO4J_BACKFILLS[7]!(m.neo4j);
    const lists = await m.neo4j.read<{ speakers: string[] }>(
      'MATCH (c:Conversation) WHERE c.user_id = $userId RETURN c.speakers AS speakers ORDER BY size(c.speakers)',
      { userId },
      { subsystem: 'test', op: 'read' },
    );
    expect(lists.map((l) => l.speakers.length)).toEqual([0, 2]);
    // A user without its own list is read from the conversations' lists, until 008 fills it.
    expect((await episodic.speakers(userScope(userId))).sort()).toEqual(['Caroline', 'Melanie']);
    await NEO4J_BACKFILLS[8]!(m.neo4j);
    const [user] = await m.neo4j.read<{ speakers: string[] }>('MATCH (u:User {id: $userId}) RETURN u.speakers AS speakers', { userId }, { subsystem: 'test', op: 'read' });
    expect([...user!.speakers].sort()).toEqual(['Caroline', 'Melanie']);
    expect((await episodic.speakers(userScope(userId))).sort()).toEqual(['Caroline', 'Melanie']);
  });

  it("keeps a user's speakers on the User node as turns arrive, each once, from writers at once", async () => {
    const userId = uid('u');
    const names = Array.from({ length: 8 }, (_, i) => `Speaker${i}`);
    const conversations = names.map(() => uid('c'));
    await m.memory.storeTurns(conversations.map((conversationId) => ({ userId, conversationId, role: 'user' as const, content: 'Start.' })));
    // Eight writers to existing conversations at once, each bringing a new speaker and one they share.
    await Promise.all(
      names.map((name, i) =>
        m.memory.storeTurns([
          { userId, conversationId: conversations[i]!, role: 'user', content: 'Hello there.', metadata: { speaker: name } },
          { userId, conversationId: conversations[i]!, role: 'assistant', content: 'Hi!', metadata: { speaker: 'Ann' } },
        ]),
      ),
    );
    // A batch naming one new speaker twice adds it once; another user's speakers stay theirs.
    await m.memory.storeTurns([
      { userId, conversationId: uid('c'), role: 'user', content: 'One.', metadata: { speaker: 'Bo' } },
      { userId, conversationId: uid('c'), role: 'user', content: 'Two.', metadata: { speaker: 'Bo' } },
    ]);
    await m.memory.storeTurns([{ userId: uid('other'), conversationId: uid('c'), role: 'user', content: 'Hi.', metadata: { speaker: 'Zed' } }]);
    expect([...(await new Neo4jEpisodicStore(m.neo4j).speakers(userScope(userId)))].sort()).toEqual(['Ann', 'Bo', ...names].sort());
  });

  it("answers a first-person question from the user's own turns before the assistant's", async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await m.memory.storeTurns([
      { userId, conversationId, role: 'assistant', content: 'A Honda Fit is cheap to run: a small car, about 6 litres per 100 km.' },
      { userId, conversationId, role: 'user', content: 'Insurance on my Honda Fit is 95 a month.' },
    ]);
    // Two keyword hits: under the default min-max score fusion the second of a list scores 0,
    // which no boost can lift, so this constructed case ranks by RRF.
    await withInstance({ RECALL_FUSION: 'rrf' }, async (rrf) => {
      const plain = await rrf.memory.remember({ userId, query: 'Which car do I drive, a Honda?', techniques: KEYWORDS_ONLY });
      expect(plain.turns[0]!.turn.role).toBe('assistant');
      const b = await rrf.memory.remember({ userId, query: 'Which car do I drive, a Honda?', techniques: { ...KEYWORDS_ONLY, speakerBoost: true } });
      expect(b.turns[0]!.turn.role).toBe('user');
      expect(b.turns[0]!.signals.speaker?.note).toBe('user (first person)');
      // Asked about someone else, the user's turns get no boost.
      const third = await rrf.memory.remember({ userId, query: 'Which car does Sam drive, a Honda?', techniques: { ...KEYWORDS_ONLY, speakerBoost: true } });
      expect(third.turns.every((t) => t.signals.speaker === undefined)).toBe(true);
    });
  });

  it('answers a "when" question from a turn that says when', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await m.memory.storeTurns([
      { userId, conversationId, role: 'user', content: 'My dentist is great, the best dentist in town.' },
      { userId, conversationId, role: 'user', content: 'I was at the dentist yesterday for a filling.' },
    ]);
    await withInstance({ RECALL_FUSION: 'rrf' }, async (rrf) => {
      const plain = await rrf.memory.remember({ userId, query: 'When was I at the dentist?', techniques: KEYWORDS_ONLY });
      expect(plain.turns[0]!.turn.content).toMatch(/best dentist/);
      const b = await rrf.memory.remember({ userId, query: 'When was I at the dentist?', techniques: { ...KEYWORDS_ONLY, timeAnswerBoost: true } });
      expect(b.turns[0]!.turn.content).toMatch(/yesterday/);
      expect(b.turns[0]!.signals.timeAnswer?.note).toBe('says when');
      // A question that does not ask when boosts nothing.
      const other = await rrf.memory.remember({ userId, query: 'Is my dentist good?', techniques: { ...KEYWORDS_ONLY, timeAnswerBoost: true } });
      expect(other.turns.every((t) => t.signals.timeAnswer === undefined)).toBe(true);
      // The flag is stored with the turn and read from there; a turn without it (stored
      // before it was kept) is judged from its content by the same rule.
      const flags = () => m.neo4j.read<{ dated: boolean | null }>('MATCH (t:Turn) WHERE t.user_id = $userId RETURN t.dated AS dated ORDER BY t.index', { userId }, { subsystem: 'test', op: 'flags' });
      expect((await flags()).map((r) => r.dated)).toEqual([false, true]);
      const asked = async () =>
        (await rrf.memory.remember({ userId, query: 'When was I at the dentist?', techniques: { ...KEYWORDS_ONLY, timeAnswerBoost: true } })).turns.find((t) => /yesterday/.test(t.turn.content))!;
      await m.neo4j.write('MATCH (t:Turn) WHERE t.user_id = $userId SET t.dated = false', { userId }, { subsystem: 'test', op: 'flags' });
      expect((await asked()).signals.timeAnswer).toBeUndefined();
      await m.neo4j.write('MATCH (t:Turn) WHERE t.user_id = $userId REMOVE t.dated, t.asks', { userId }, { subsystem: 'test', op: 'flags' });
      expect((await asked()).signals.timeAnswer?.note).toBe('says when');
    });
  });

  it("scans a small user's turns exactly, and asks the index (again, wider, when other users crowd them out) for a larger one", async () => {
    const userId = uid('u');
    const crowd = uid('u');
    try {
      const turns = (owner: string, n: number, text: (i: number) => string) =>
        Array.from({ length: n }, (_, i) => ({ userId: owner, conversationId: uid('c'), role: 'user' as const, content: text(i) }));
      // Another user's near-copies fill the index's nearest neighbours of the query.
      await m.memory.storeTurns(turns(crowd, 120, (i) => `The harbour ferry leaves at ${(i % 12) + 1} o'clock`));
      await m.memory.storeTurns(turns(userId, 40, (i) => (i % 2 ? `The harbour ferry timetable changed again, version ${i}` : `A note about gardening, number ${i}`)));
      const [embedding] = await m.embedder.embed(['When does the harbour ferry leave?'], { input: 'query' });
      const search = async (scanMaxTurns?: number) => {
        const ops: string[] = [];
        const recording = recordingReads(m.neo4j, ops);
        // Held vectors off: this is about the scan and the index, not memory's ranking of the scan.
        const store = new Neo4jEpisodicStore(recording, { scanMaxTurns, heldVectors: 0 });
        const found: number[] = [];
        for (let round = 0; round < 2; round++) found.push((await store.similarTurns(embedding!, userScope(userId), { limit: 10 })).length);
        return { ops, found };
      };
      // 40 turns: small. Counted on the first search, once, and the user's turns are scanned
      // exactly (and completely), up to twice the limit, without asking the index.
      expect(await search()).toEqual({ ops: ['countUserTurns', 'similarTurnsExact', 'similarTurnsExact'], found: [20, 20] });
      // Counted as large (over 10 turns), it never gets the scan: the index, and again 8× wider
      // when the other user's turns crowd the first answer out.
      const large = await search(10);
      expect(large.ops[0]).toBe('countUserTurns');
      expect(new Set(large.ops.slice(1))).toEqual(new Set(['similarTurns']));
      expect(large.found.every((n) => n > 0)).toBe(true);
    } finally {
      // The crowd's near-copies would crowd the next run's user out of the shared index.
      for (const u of [crowd, userId]) await m.users.erase(u);
    }
  });

  it("ranks a small user's turns from their embeddings held in memory as the exact scan does, and Neo4j still has the last word", async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const tag = { subsystem: 'test', op: 'age' };
    try {
      await m.memory.storeTurns(
        Array.from({ length: 40 }, (_, i) => ({
          userId,
          conversationId,
          channel: 'work',
          role: 'user' as const,
          content: i % 2 ? `The harbour ferry timetable changed again, version ${i}` : `A note about gardening, number ${i}`,
        })),
      );
      // Embedded two minutes ago: memory is trusted for them (the statement rescores only the
      // turns embedded after the oldest transaction open at its latest read began).
      await m.neo4j.write('MATCH (t:Turn) WHERE t.user_id = $userId SET t.embedded_at = t.embedded_at - 120000', { userId }, tag);
      const [embedding] = await m.embedder.embed(['When does the harbour ferry leave?'], { input: 'query' });
      const ops: string[] = [];
      const held = new Neo4jEpisodicStore(recordingReads(m.neo4j, ops));
      const exact = new Neo4jEpisodicStore(m.neo4j, { heldVectors: 0 });
      const scope = userScope(userId, { channel: 'work' });
      const q = { limit: 8 };
      const same = async (vector = embedding!) => {
        const [a, b] = [await held.similarTurns(vector, scope, q), await exact.similarTurns(vector, scope, q)];
        expectSameRanking(a, b, (h) => h.id);
        return a;
      };
      // Not held yet: the scan answers; on the user's second search their embeddings are read
      // in the background (a second later).
      await same();
      await same();
      await held.heldVectorsSettled();
      expect(ops).toEqual(['countUserTurns', 'similarTurnsExact', 'similarTurnsExact', 'openTransactions', 'heldVectors']);
      const first = await same();
      expect(ops.at(-1)).toBe('similarTurnsHeld');
      expect(first).toHaveLength(16);

      // A turn stored (and embedded) after the read is found at once: the statement scores it.
      const said = 'The harbour ferry leaves at nine every morning';
      const fresh = (await m.memory.storeTurns([{ userId, conversationId, channel: 'work', role: 'user', content: said }]))[0]!.turn;
      const [asked] = await m.embedder.embed([said], { input: 'query' });
      expect((await same(asked))[0]!.id).toBe(fresh.id);
      expect(ops.at(-1)).toBe('similarTurnsHeld');
      // A deleted turn that memory still ranks is dropped by Neo4j's filter; an archived one stays (archiving is not forgetting).
      const [top, second] = first;
      await m.neo4j.write('MATCH (t:Turn {id: $id}) SET t.archived = true', { id: top!.id }, tag);
      await m.neo4j.write('MATCH (t:Turn {id: $id}) DETACH DELETE t', { id: second!.id }, tag);
      const after = await same();
      expect(after.map((h) => h.id)).toContain(top!.id);
      expect(after.map((h) => h.id)).not.toContain(second!.id);
      // Another channel's scope sees none of them; a time window before them, none either.
      expect(await held.similarTurns(embedding!, userScope(userId, { channel: 'elsewhere' }), q)).toHaveLength(0);
      expect(await held.similarTurns(embedding!, scope, { ...q, until: '2000-01-01T00:00:00Z' })).toHaveLength(0);
      expect(ops.filter((o) => o === 'similarTurnsExact')).toHaveLength(2); // only before the user was held
    } finally {
      await m.users.erase(userId);
    }
  });

  it('counts access on returned turns, in batches off the request path', async () => {
    const userId = uid('u');
    const t = await store(userId, 'The wifi password at the cabin is moose-lake-77');
    await m.memory.remember({ userId, query: 'cabin wifi password' });
    await m.memory.remember({ userId, query: 'cabin wifi password' });
    await m.reinforcer.flush();
    const row = await m.neo4j.read<{ n: number; at: string | null }>(
      'MATCH (t:Turn {id: $id}) RETURN t.access_count AS n, toString(t.last_accessed) AS at',
      { id: t.id },
      { subsystem: 'test', op: 'check' },
    );
    expect(row[0]).toMatchObject({ n: 2 });
    expect(row[0]!.at).not.toBeNull();
  });

  it('renders a context block within the token budget, and nothing for an empty bundle', async () => {
    const userId = uid('u');
    const empty = await m.memory.remember({ userId, query: 'anything at all?' });
    expect(empty.turns).toEqual([]);
    expect(m.memory.formatContext(empty, { tokenBudget: 500 })).toBe('');

    const conversationId = uid('c');
    await m.memory.storeTurns(
      Array.from({ length: 12 }, (_, i) => ({
        userId,
        conversationId,
        role: 'user' as const,
        content: `Hiking trip note ${i}: the trail to the ridge took ${i + 2} hours and the views were wide open.`,
      })),
    );
    const b = await m.memory.remember({ userId, query: 'hiking trail ridge', topK: 12 });
    expect(b.turns).toHaveLength(12);
    const full = m.memory.formatContext(b, { tokenBudget: 5_000 });
    expect(full).toContain(`[turn:${b.turns[0]!.turn.id}]`);
    expect(full.indexOf(`[turn:${b.turns[0]!.turn.id}]`)).toBeLessThan(full.indexOf(`[turn:${b.turns[1]!.turn.id}]`));
    for (const budget of [80, 150, 300]) {
      const block = m.memory.formatContext(b, { tokenBudget: budget });
      expect(countTokens(block)).toBeLessThanOrEqual(budget);
      expect(block).toContain(`[turn:${b.turns[0]!.turn.id}]`);
    }
    expect(m.memory.formatContext(b, { tokenBudget: 150 }).split('\n').length).toBeLessThan(full.split('\n').length);
    // Too small for even one citeable memory: nothing rather than a broken block.
    expect(m.memory.formatContext(b, { tokenBudget: 10 })).toBe('');
  });

  it('rejects invalid input without reading anything', async () => {
    await expect(m.memory.remember({ userId: 'bad id!', query: 'x' })).rejects.toThrow(ValidationError);
    await expect(m.memory.remember({ userId: uid('u'), query: '   ' })).rejects.toThrow(ValidationError);
    await expect(m.memory.remember({ userId: uid('u'), query: 'x', topK: 0 })).rejects.toThrow(ValidationError);
    await expect(m.memory.remember({ userId: uid('u'), query: 'x', filters: { since: 'yesterday' } })).rejects.toThrow(ValidationError);
  });
});

describe('remember degrades instead of failing', () => {
  it('answers from full-text when the embedder fails', async () => {
    const userId = uid('u');
    await store(userId, 'Our dentist appointment moved to Tuesday at 3pm');
    const failing: Embedder = {
      provider: m.embedder.provider,
      model: m.embedder.model,
      dimensions: m.embedder.dimensions,
      embed: () => Promise.reject(new MnemographError('EMBEDDING_FAILED', 'upstream', 'model exploded')),
      close: () => Promise.resolve(),
    };
    const broken = await createMnemograph(testConfig({ LOG_LEVEL: 'silent' }), { embedder: failing, backgroundEmbedding: false });
    try {
      const b = await broken.memory.remember({ userId, query: 'When is the dentist appointment?' });
      expect(contents(b)).toEqual(['Our dentist appointment moved to Tuesday at 3pm']);
      expect(b.degraded.some((d) => d.startsWith('embed:'))).toBe(true);
    } finally {
      await broken.close();
    }
  });

  it('answers from full-text when no turn of the user is embedded yet', async () => {
    const deferred = await createMnemograph(testConfig({ LOG_LEVEL: 'silent', EMBEDDING_MODE: 'deferred' }), { backgroundEmbedding: false });
    try {
      const userId = uid('u');
      const { turn } = await deferred.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'The spare key is under the blue flowerpot' });
      // Background embedders of other processes share this database: take the turn out of
      // their queue and drop any vector one of them managed to write, so none is searchable.
      const tag = { subsystem: 'test', op: 'unembed' };
      await eventually(async () => {
        await deferred.neo4j.write('MATCH (t:Turn {id: $id}) REMOVE t.embedding, t.embedding_pending', { id: turn.id }, tag);
        const rows = await deferred.neo4j.read<{ e: boolean }>('MATCH (t:Turn {id: $id}) RETURN t.embedding IS NULL AS e', { id: turn.id }, tag);
        return rows[0]?.e === true;
      }, 'turn without embedding');
      const b = await deferred.memory.remember({ userId, query: 'Where is the spare key?' });
      expect(contents(b)).toEqual(['The spare key is under the blue flowerpot']);
      expect(b.turns[0]!.signals.vector).toBeUndefined();
    } finally {
      await deferred.close();
    }
  });

  it('answers from Neo4j when Redis is down', async () => {
    const noRedis = await createMnemograph(testConfig({ LOG_LEVEL: 'silent', REDIS_URL: 'redis://127.0.0.1:6399' }), { backgroundEmbedding: false });
    try {
      expect(noRedis.redis.status).not.toBe('ready');
      const userId = uid('u');
      await noRedis.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'The boiler service is booked for March' });
      const b = await noRedis.memory.remember({ userId, query: 'When is the boiler service?' });
      expect(contents(b)).toEqual(['The boiler service is booked for March']);
    } finally {
      await noRedis.close();
    }
  });
});

describe('reranking through a Cohere-compatible rerank API', () => {
  let server: Server;
  let url: string;
  const requests: Array<{ model: string; query: string; documents: string[]; top_n: number }> = [];
  let mode: 'ok' | 'fail' | 'hang' = 'ok';

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/rerank') return void res.writeHead(404).end();
        const body = JSON.parse(raw) as (typeof requests)[number];
        requests.push(body);
        if (mode === 'fail') return void res.writeHead(500).end('model not loaded');
        if (mode === 'hang') return; // never answers
        // A stand-in cross-encoder with an opinion of its own: the helmet turn is what matters.
        const results = body.documents.map((d, index) => ({ index, relevance_score: d.includes('helmet') ? 0.9 : 0.1 / (index + 1) }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: results.reverse() }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  async function seeded(): Promise<{ r: Mnemograph; userId: string }> {
    const r = await createMnemograph(
      testConfig({ LOG_LEVEL: 'silent', RERANK_URL: url, RERANK_MODEL: 'test-cross-encoder', RECALL_RERANK: 'true', RECALL_RERANK_DEPTH: '4', RERANK_TIMEOUT_MS: '300' }),
      { embedder: borrowed(), backgroundEmbedding: false },
    );
    const userId = uid('u');
    for (const content of ['Water the tomato plants every morning', 'Tomato soup with basil', 'Tomato seeds go in the greenhouse', 'A new bicycle helmet for the tomato market trip']) {
      await r.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content });
    }
    await r.backgroundEmbedder.drain();
    return { r, userId };
  }

  it('reorders the fused head by the cross-encoder and explains it', async () => {
    mode = 'ok';
    const { r, userId } = await seeded();
    try {
      const fused = await r.memory.remember({ userId, query: 'tomato plants', topK: 4, techniques: { ...PLAIN, rerank: false } });
      expect(fused.turns[0]!.turn.content).not.toContain('helmet');
      requests.length = 0;
      const b = await r.memory.remember({ userId, query: 'tomato plants', topK: 2, techniques: PLAIN });
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ model: 'test-cross-encoder', query: 'tomato plants', top_n: 4 });
      expect([...requests[0]!.documents].sort()).toEqual(fused.turns.map((t) => t.turn.content).sort());
      expect(b.turns).toHaveLength(2);
      expect(b.turns[0]!.turn.content).toContain('helmet');
      expect(b.turns[0]!.signals.rerank).toEqual({ rank: 1, score: 0.9 });
      expect(b.turns[0]!.signals.fulltext).toBeDefined();
      expect(b.degraded).toEqual([]);
    } finally {
      await r.close();
    }
  });

  it.each(['fail', 'hang'] as const)('keeps the fused order when the reranker %ss, and says so', async (how) => {
    const { r, userId } = await seeded();
    try {
      mode = 'ok';
      const fused = await r.memory.remember({ userId, query: 'tomato plants', topK: 3, techniques: { ...PLAIN, rerank: false } });
      mode = how;
      const b = await r.memory.remember({ userId, query: 'tomato plants', topK: 3, techniques: PLAIN });
      expect(contents(b)).toEqual(contents(fused));
      expect(b.turns.every((t) => t.signals.rerank === undefined)).toBe(true);
      expect(b.degraded).toEqual([
        expect.stringMatching(how === 'fail' ? /^rerank: reranker at .*HTTP 500: model not loaded; fused order kept$/ : /^rerank: reranker at .*(abort|timeout|timed out).*; fused order kept$/i),
      ]);
    } finally {
      mode = 'ok';
      await r.close();
    }
  });
});

describe('LLM techniques through the real SDKs (a local server speaking each protocol)', () => {
  let openai: LlmServer;
  let anthropic: LlmServer;
  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startOpenAIChatServer(), startAnthropicServer()]);
  });
  afterAll(async () => Promise.all([openai.close(), anthropic.close()]));

  const settings = (provider: 'openai-compatible' | 'anthropic'): Record<string, string> =>
    provider === 'anthropic'
      ? { RECALL_LLM_PROVIDER: 'anthropic', RECALL_LLM_BASE_URL: anthropic.baseUrl, ANTHROPIC_API_KEY: 'sk-ant-test' }
      : { RECALL_LLM_PROVIDER: 'openai-compatible', RECALL_LLM_BASE_URL: openai.baseUrl, RECALL_LLM_MODEL: 'local-model' };
  const server = (provider: 'openai-compatible' | 'anthropic') => (provider === 'anthropic' ? anthropic : openai);

  async function pet(r: Mnemograph): Promise<string> {
    const userId = uid('u');
    await r.memory.storeTurns([
      { userId, conversationId: uid('c'), role: 'user', content: 'We adopted a golden retriever puppy called Biscuit.' },
      { userId, conversationId: uid('c'), role: 'user', content: 'The lake trip with my parents was lovely.' },
    ]);
    await r.backgroundEmbedder.drain();
    return userId;
  }

  it.each(['openai-compatible', 'anthropic'] as const)('query expansion with %s finds what the question words cannot, and its cost is recorded', async (provider) => {
    await withInstance(settings(provider), async (r) => {
      const userId = await pet(r);
      // No word of the question is in either turn: keywords alone, and feedback from their hits, find nothing.
      const offline = await r.memory.remember({ userId, query: 'Which pet does the family have?', techniques: { ...KEYWORDS_ONLY, queryExpansion: 'feedback' } });
      expect(contents(offline)).toEqual([]);
      server(provider).reply({ text: 'dog, puppy, retriever, cat, kitten', inputTokens: 60, outputTokens: 12 });
      const before = server(provider).requests.length;
      const b = await r.memory.remember({ userId, query: 'Which pet does the family have?', techniques: { ...KEYWORDS_ONLY, queryExpansion: 'llm' } });
      expect(server(provider).requests.length).toBe(before + 1);
      expect(JSON.stringify(server(provider).requests.at(-1))).toContain('Which pet does the family have?');
      expect(contents(b)).toEqual(['We adopted a golden retriever puppy called Biscuit.']);
      expect(b.degraded).toEqual([]);
      const usage = await eventually(
        async () => (await r.pg.primary.query('SELECT purpose, input_tokens, output_tokens, ok FROM llm_usage WHERE user_id = $1', [userId])).rows[0],
        'the recall LLM call in llm_usage',
      );
      expect(usage).toEqual({ purpose: 'recall', input_tokens: 60, output_tokens: 12, ok: true });
    });
  });

  it("HyDE embeds the question with the LLM's hypothetical answer", async () => {
    const embedded: string[] = [];
    await withInstance(
      settings('openai-compatible'),
      async (r) => {
        const userId = await pet(r);
        openai.reply({ text: 'They have a dog, a golden retriever.' });
        embedded.length = 0;
        const b = await r.memory.remember({ userId, query: 'Which pet does the family have?', techniques: { ...PLAIN, fulltext: false, hyde: true } });
        expect(embedded).toEqual(['Which pet does the family have?\nThey have a dog, a golden retriever.']);
        expect(contents(b)[0]).toContain('golden retriever');
        expect(b.degraded).toEqual([]);
      },
      borrowed(embedded),
    );
  });

  it('reranks with the LLM when no cross-encoder is configured; an answer naming no candidate keeps the fused order', async () => {
    await withInstance({ ...settings('openai-compatible'), RECALL_RERANK: 'true', RECALL_RERANK_DEPTH: '3' }, async (r) => {
      const userId = uid('u');
      for (const content of ['Water the tomato plants every morning', 'Tomato soup with basil', 'A bicycle helmet for the tomato market trip']) {
        await r.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content });
      }
      const fused = await r.memory.remember({ userId, query: 'tomato plants', topK: 3, techniques: { ...KEYWORDS_ONLY, rerank: false } });
      const helmet = contents(fused).findIndex((c) => c.includes('helmet'));
      expect(helmet).toBeGreaterThan(0);
      openai.reply({ text: `${helmet + 1}, 1` });
      const b = await r.memory.remember({ userId, query: 'tomato plants', topK: 3, techniques: KEYWORDS_ONLY });
      const prompt = JSON.stringify(openai.requests.at(-1));
      for (const c of contents(fused)) expect(prompt).toContain(c);
      expect(contents(b)).toEqual([contents(fused)[helmet], contents(fused)[0], ...contents(fused).filter((_, i) => i !== helmet && i !== 0)]);
      expect(b.turns[0]!.signals.rerank).toEqual({ rank: 1, score: 1 });
      expect(b.degraded).toEqual([]);

      openai.reply({ text: 'I cannot tell.' });
      const kept = await r.memory.remember({ userId, query: 'tomato plants', topK: 3, techniques: KEYWORDS_ONLY });
      expect(contents(kept)).toEqual(contents(fused));
      expect(kept.degraded).toEqual([expect.stringMatching(/^rerank: the recall LLM named no candidate.*; fused order kept$/)]);
    });
  });

  it('asks the LLM for the period a question names when the rules find none (self-query)', async () => {
    await withInstance(settings('openai-compatible'), async (r) => {
      const userId = uid('u');
      const conversationId = uid('c');
      await r.memory.storeTurn({ userId, conversationId, role: 'user', content: 'We talked about the garden fence', timestamp: '2023-05-10T10:00:00Z' });
      await r.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'We talked about the garden shed', timestamp: '2023-12-27T10:00:00Z' });
      const query = 'What did we say about the garden around the holidays?';
      const rules = await r.memory.remember({ userId, query, techniques: { ...KEYWORDS_ONLY, selfQuery: 'filter' } });
      expect(rules.time).toBeUndefined();
      openai.reply({ text: '{"since": "2023-12-20", "until": "2024-01-02"}' });
      const before = openai.requests.length;
      const b = await r.memory.remember({ userId, query, asOf: '2024-02-01T00:00:00Z', techniques: { ...KEYWORDS_ONLY, selfQuery: 'filter', selfQueryLlm: true } });
      expect(openai.requests.length).toBe(before + 1);
      expect(JSON.stringify(openai.requests.at(-1))).toContain('Today is 2024-02-01');
      expect(b.time).toEqual({ since: '2023-12-20T00:00:00.000Z', until: '2024-01-02T23:59:59.999Z', from: 'self-query (llm)', mode: 'filter' });
      expect(contents(b)).toEqual(['We talked about the garden shed']);
      // A question with no time cue is not sent; an answer that is no period object is a degraded signal.
      await r.memory.remember({ userId, query: 'What did we say about the garden?', techniques: { ...KEYWORDS_ONLY, selfQuery: 'boost', selfQueryLlm: true } });
      expect(openai.requests.length).toBe(before + 1);
      openai.reply({ text: 'Sorry, no idea.' });
      const bad = await r.memory.remember({ userId, query, techniques: { ...KEYWORDS_ONLY, selfQuery: 'boost', selfQueryLlm: true } });
      expect(bad.time).toBeUndefined();
      expect(contents(bad).sort()).toEqual(['We talked about the garden fence', 'We talked about the garden shed']);
      expect(bad.degraded).toEqual([expect.stringMatching(/^selfQuery: the LLM answered no period object/)]);
    });
  });

  it("in boost mode, recall does not wait for the LLM's period before it searches", async () => {
    // The LLM answers only once recall has embedded the query: waiting for the period before
    // the searches would stall until the LLM call times out.
    let armed = false;
    let started!: () => void;
    const embedding = new Promise<void>((resolve) => (started = resolve));
    await withInstance(
      settings('openai-compatible'),
      async (r) => {
        const userId = uid('u');
        await r.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'We talked about the garden shed', timestamp: '2023-12-27T10:00:00Z' });
        await r.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'We talked about the garden fence', timestamp: '2023-05-10T10:00:00Z' });
        openai.reply({ text: '{"since": "2023-12-20", "until": "2024-01-02"}', after: embedding });
        const query = 'What did we say about the garden around the holidays?';
        armed = true;
        const b = await r.memory.remember({ userId, query, asOf: '2024-02-01T00:00:00Z', techniques: { ...PLAIN, selfQuery: 'boost', selfQueryLlm: true } });
        expect(b.degraded).toEqual([]);
        expect(b.time).toEqual({ since: '2023-12-20T00:00:00.000Z', until: '2024-01-02T23:59:59.999Z', from: 'self-query (llm)', mode: 'boost' });
        expect(contents(b)[0]).toBe('We talked about the garden shed');
        expect(b.turns[0]!.signals.time).toEqual({ note: '2023-12-20..2024-01-02' });
      },
      borrowed([], () => armed && started()),
    );
  });

  it('answers from the offline path when the LLM fails, and says so', async () => {
    const embedded: string[] = [];
    await withInstance(
      settings('openai-compatible'),
      async (r) => {
        const userId = await pet(r);
        openai.reply({ status: 500, message: 'model not loaded' });
        embedded.length = 0;
        const b = await r.memory.remember({ userId, query: 'Which pet does the family have?', techniques: { ...PLAIN, hyde: true, queryExpansion: 'llm' } });
        expect(b.turns.length).toBeGreaterThan(0);
        expect(embedded).toEqual(['Which pet does the family have?']);
        expect(b.degraded).toEqual([expect.stringMatching(/^hyde: .*500.*; embedding the question itself$/), expect.stringMatching(/^expansion: .*500/)]);
      },
      borrowed(embedded),
    );
  });
});

describe('the turn pipeline', () => {
  it('takes a new candidate list and a new stage from its lists, each with its signal, timing and failure', async () => {
    const userId = uid('u');
    const [kayak, later] = [await store(userId, 'We rented a kayak at the lake'), await store(userId, 'Unrelated note about taxes')];
    // A generator that finds the taxes turn by id (a list the keywords cannot produce), and one that fails.
    const byId: CandidateGenerator = {
      signal: 'pinned',
      enabled: () => true,
      weight: () => 1,
      search: async (r) => (await new Neo4jEpisodicStore(m.neo4j).getTurnsByIds([later.id], r.scope, r.window)).map((t) => ({ ...t, speaker: null, asks: false, dated: false, score: 1 })),
    };
    const broken: CandidateGenerator = { signal: 'broken', enabled: () => true, weight: () => 1, search: () => Promise.reject(new Error('offline')) };
    const pinnedFirst: TurnStage = {
      name: 'pinnedFirst',
      phase: 'score',
      enabled: () => true,
      apply: (cs) => cs.map((c) => (c.signals.pinned ? { ...c, score: c.score * 10, signals: { ...c.signals, pinnedFirst: { note: 'pinned' } } } : c)),
    };
    const engine = new HybridRecallEngine({
      episodic: new Neo4jEpisodicStore(m.neo4j),
      embedder: m.embedder,
      settings: recallSettingsFrom(m.config.recall),
      audit: m.audit,
      log: m.log,
      generators: [...TURN_GENERATORS, byId, broken],
      stages: [...TURN_STAGES, pinnedFirst],
    });
    const b = await engine.recall(RecallQuerySchema.parse({ userId, query: 'kayak lake', techniques: KEYWORDS_ONLY }));
    expect(b.turns.map((t) => t.turn.id)).toEqual([later.id, kayak.id]);
    expect(b.turns[0]!.signals).toEqual({ pinned: { rank: 1, score: 1 }, pinnedFirst: { note: 'pinned' } });
    expect(Object.keys(b.turns[1]!.signals)).toEqual(['fulltext']);
    expect(b.degraded).toEqual(['broken: offline']);
    expect(Object.keys(b.timings)).toEqual(expect.arrayContaining(['fulltext', 'pinned', 'broken', 'fuse', 'total']));
  });
});
