import { userScope } from '../../src/access';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { OpenAIExtractor, PgUsageSink } from '../../src/extraction';
import type { Observation } from '../../src/observations';
import { createJobs } from '../../src/worker';
import { startOpenAIChatServer, type LlmServer } from '../support/llm-servers';
import { eventually, testConfig, uid } from '../support/stack';

let m: Mnemograph;
let llm: LlmServer;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'writes', EMBEDDING_MODE: 'deferred', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
  llm = await startOpenAIChatServer();
});
afterAll(async () => {
  await llm.close();
  await m.close();
});

const tag = { subsystem: 'test', op: 'check' };
const record = (userId: string, content: string) => m.observations.record(userScope(userId), { id: uid('obs'), category: 'fact', content, sourceMetadata: { source: 'test' } });

describe('observation queue', () => {
  it('hands each pending observation to exactly one of two concurrent batches', async () => {
    const userId = uid('u');
    for (let i = 0; i < 6; i++) await record(userId, `note ${i}`);
    const seen: string[][] = [[], []];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const handler = (k: 0 | 1) => async (batch: Observation[]) => {
      seen[k]!.push(...batch.map((o) => o.content));
      await gate;
    };
    const first = m.observations.processBatch(userId, 4, handler(0));
    await eventually(async () => seen[0]!.length === 4, 'first batch claimed');
    const second = m.observations.processBatch(userId, 4, handler(1));
    await eventually(async () => seen[1]!.length === 2, 'second batch claimed the rest');
    release();
    const [a, b] = await Promise.all([first, second]);
    expect([a.processed, b.processed]).toEqual([4, 2]);
    expect(new Set([...seen[0]!, ...seen[1]!]).size).toBe(6);
    expect(await m.observations.countPending(userId)).toBe(0);
    expect((await m.observations.processBatch(userId, 10, async () => undefined)).claimed).toBe(0);
  });

  it('a failed batch rolls back, stays queued with the error, and succeeds on retry', async () => {
    const userId = uid('u');
    const { observation } = await record(userId, 'User likes tea');
    const failed = await m.observations.processBatch(userId, 10, async (_batch, tx) => {
      await tx.query("INSERT INTO user_profiles (user_id, narrative) VALUES ($1, 'half-written')", [userId]);
      throw new Error('boom');
    });
    expect(failed).toMatchObject({ claimed: 1, processed: 0, error: 'boom' });
    expect(await m.observations.get(userId, observation.id)).toMatchObject({ processedAt: null, attempts: 1, lastError: 'boom' });
    expect((await m.pg.primary.query('SELECT 1 FROM user_profiles WHERE user_id = $1', [userId])).rowCount).toBe(0);
    const ok = await m.observations.processBatch(userId, 10, async () => undefined);
    expect(ok).toMatchObject({ claimed: 1, processed: 1 });
    expect((await m.observations.get(userId, observation.id))!.processedAt).not.toBeNull();
    expect(await m.observations.get(uid('u'), observation.id)).toBeNull();
  });
});

describe('bad LLM output during consolidation', () => {
  it('leaves observations and conversations queued, then applies them once the model answers well', async () => {
    const extractor = new OpenAIExtractor('openai-compatible', {
      model: 'local-model',
      baseUrl: llm.baseUrl,
      timeoutMs: 5000,
      maxOutputTokens: 1000,
      maxRetries: 0,
      usage: new PgUsageSink(m.pg.primary),
      log: m.log,
    });
    const jobs = createJobs({ config: m.config, stores: m.jobStores, knowledge: m.knowledge, extractor, observations: m.observations, locks: m.locks, log: m.log });
    const userId = uid('u');
    const conversationId = uid('c');
    await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'I moved to Lisbon.', metadata: { speaker: 'Ana' } });
    const { observation } = await m.memory.recordObservation(userId, 'User prefers dark mode', 'preference');
    const worker = m.createWorker({ jobs });
    const facts = () => m.memory.semantic.findFacts({ userId, includeInactive: true });

    for (const bad of ['<think>The user moved to', '{"facts": [{"claim": 7}]}', '', 'Sure! Here are the facts: Ana lives in Lisbon.']) {
      llm.reply({ text: bad });
      const r = await worker.runJob('consolidate', { userIds: [userId] });
      expect(r.stats).toMatchObject({ conversationsFailed: 1, observations: 0, observationBatchesFailed: 1 });
    }
    expect(await facts()).toEqual([]);
    expect(await m.observations.get(userId, observation.id)).toMatchObject({ processedAt: null, attempts: 4 });
    expect((await m.observations.get(userId, observation.id))!.lastError).toMatch(/no JSON object/);
    const conv = await m.neo4j.read<{ consolidated: string | null }>('MATCH (c:Conversation {id: $id}) RETURN toString(c.consolidated) AS consolidated', { id: conversationId }, tag);
    expect(conv[0]!.consolidated).toBeNull();
    const usage = (await m.pg.primary.query('SELECT ok FROM llm_usage WHERE user_id = $1', [userId])).rows;
    expect(usage.length).toBe(8);
    expect(usage.every((u) => u.ok === false)).toBe(true);

    llm.reply(
      {
        text: JSON.stringify({
          entities: [{ name: 'Lisbon', type: 'place' }],
          facts: [{ claim: 'Ana lives in Lisbon', subject: 'Ana', relation: 'lives_in', object: 'Lisbon', single_valued: true, certainty: 'implied', source_turn: 'T0' }],
        }),
      },
      { text: JSON.stringify({ facts: [{ claim: 'User prefers dark mode', subject: 'user', relation: 'prefers', object: 'dark mode', certainty: 'explicit', source_turn: 'T0' }] }) },
    );
    const r = await worker.runJob('consolidate', { userIds: [userId] });
    expect(r.stats).toMatchObject({ conversations: 1, observations: 1, conversationsFailed: 0 });
    expect((await facts()).map((f) => [f.claim, f.source, f.confidence]).sort()).toEqual([
      ['Ana lives in Lisbon', 'extraction:openai-compatible', 0.85],
      ['User prefers dark mode', 'extraction:openai-compatible', 0.95],
    ]);
    expect((await m.observations.get(userId, observation.id))!.processedAt).not.toBeNull();
    await worker.stop();
  });
});
