import { createHash } from 'node:crypto';
import { createMnemograph, type Mnemograph } from '../../src/container';
import type { Fact } from '../../src/semantic';
import type { Extractor } from '../../src/extraction';
import { createJobs, RedisLockService, type Clock, type JobName, type KnowledgeWriter } from '../../src/worker';
import { testConfig, uid } from '../support/stack';
import { userScope } from '../../src/access';

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'writes', EMBEDDING_MODE: 'deferred', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
});
afterAll(async () => m.close());

const tag = { subsystem: 'test', op: 'check' };

async function say(userId: string, conversationId: string, lines: string[], channel = '_global') {
  for (const content of lines) await m.memory.storeTurn({ userId, conversationId, channel, role: 'user', content, metadata: { speaker: 'Bob' } });
}

async function run(name: JobName, userIds: string[], opts: { clock?: Clock; jobs?: ReturnType<typeof createJobs>; workerId?: string } = {}) {
  const w = m.createWorker({ clock: opts.clock, jobs: opts.jobs, workerId: opts.workerId, locks: opts.workerId ? new RedisLockService(m.redis) : undefined });
  try {
    return await w.runJob(name, { userIds });
  } finally {
    await w.stop();
  }
}

async function facts(userId: string, includeInactive = true): Promise<Fact[]> {
  return m.memory.semantic.findFacts({ userId, channels: ['_global', 'proj'], includeInactive, limit: 1000 });
}
const summary = (fs: Fact[]) => fs.map((f) => `${f.predicate}|${f.claim}|${f.status}|${f.needsReview}`).sort();

/** Jobs whose writes go through `knowledge` (to inject a crash), with another contradiction policy or extractor. */
function jobsWith(opts: { knowledge?: KnowledgeWriter; policy?: 'prefer_new' | 'prefer_old' | 'flag_review'; extractor?: Extractor }) {
  const config = { ...m.config, extraction: { ...m.config.extraction, contradictionPolicy: opts.policy ?? m.config.extraction.contradictionPolicy } };
  return createJobs({ config, stores: m.jobStores, knowledge: opts.knowledge ?? m.knowledge, extractor: opts.extractor ?? m.extractor, observations: m.observations, locks: m.locks, log: m.log });
}

/** The real extractor, held after it has extracted until the test lets it go (a slow LLM). */
function heldExtractor(): { extractor: Extractor; extracting: Promise<void>; release: () => void } {
  let started!: () => void;
  let release!: () => void;
  const extracting = new Promise<void>((r) => (started = r));
  const released = new Promise<void>((r) => (release = r));
  const extractor: Extractor = {
    provider: m.extractor.provider,
    model: m.extractor.model,
    async extract(input) {
      const result = await m.extractor.extract(input);
      started();
      await released;
      return result;
    },
  };
  return { extractor, extracting, release };
}

describe('consolidate', () => {
  it('turns a conversation into entities, facts and a profile, and a later correction supersedes', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await say(userId, conversationId, ['I work at Google.', 'My sister Alice lives in Berlin.', 'I love hiking.']);
    const r = await run('consolidate', [userId]);
    expect(r.status).toBe('succeeded');
    expect(r.stats).toMatchObject({ conversations: 1, conversationsFailed: 0 });

    const fs = await facts(userId);
    expect(fs.map((f) => [f.predicate, f.properties.object, f.status])).toEqual(
      expect.arrayContaining([
        ['works_at', 'Google', 'active'],
        ['sister', 'Alice', 'active'],
        ['likes', 'hiking', 'active'],
      ]),
    );
    expect(fs.find((f) => f.predicate === 'works_at')).toMatchObject({ certainty: 'explicit', confidence: 0.95, sourceTurnId: `${conversationId}:0`, source: 'extraction:rules' });
    const alice = await m.memory.semantic.findEntitiesByName({ userId, name: 'Alice', channels: ['_global'] });
    expect(alice[0]?.type).toBe('person');
    const conv = await m.neo4j.read<{ consolidated: string | null; through: number }>(
      'MATCH (c:Conversation {id: $id}) RETURN toString(c.consolidated) AS consolidated, c.consolidated_through AS through',
      { id: conversationId },
      tag,
    );
    expect(conv[0]!.consolidated).not.toBeNull();
    expect(conv[0]!.through).toBe(2);
    const profile = await m.memory.getUserProfile(userId);
    expect(profile.profile).toMatchObject({ works_at: 'Google', likes: ['hiking'], sister: ['Alice'] });
    expect(profile.narrative).toContain('Google');

    // Nothing new: a rerun does nothing.
    expect((await run('consolidate', [userId])).stats.conversations).toBe(0);

    await say(userId, conversationId, ['Actually, I work at Microsoft now.']);
    await run('consolidate', [userId]);
    const after = await facts(userId);
    const google = after.find((f) => f.properties.object === 'Google')!;
    const microsoft = after.find((f) => f.properties.object === 'Microsoft')!;
    expect(google).toMatchObject({ status: 'superseded', supersededBy: microsoft.id });
    expect(google.validTo).not.toBeNull();
    expect(microsoft).toMatchObject({ status: 'active', predicate: 'works_at' });
    expect((await m.memory.getUserProfile(userId)).profile.works_at).toBe('Microsoft');
    const bob = (await m.memory.semantic.findEntitiesByName({ userId, name: 'Bob', channels: ['_global'] }))[0]!;
    const timeline = await m.memory.getEntityTimeline({ userId, entityId: bob.id });
    expect(timeline.filter((e) => e.kind === 'fact').map((e) => e.fact!.properties.object)).toEqual(expect.arrayContaining(['Google', 'Microsoft']));
  });

  it('yields to an interactive call between the items of one window, and writes the rest after it', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const clean = uid('u');
    const lines = ['I work at Google.', 'My sister Alice lives in Berlin.', 'I love hiking.'];
    await say(userId, conversationId, lines);
    await say(clean, uid('c'), lines);
    await run('consolidate', [clean]);
    // A recall arrives as the window's first item is written, and runs 300 ms.
    let callEnded: number | undefined;
    const writes: Array<{ at: number; during: boolean }> = [];
    const record = () => writes.push({ at: performance.now(), during: callEnded === undefined });
    const knowledge: KnowledgeWriter = {
      ...m.knowledge,
      upsertEntity: async (i) => {
        record();
        if (writes.length === 1) {
          const leave = m.gate.enter();
          setTimeout(() => {
            callEnded = performance.now();
            leave();
          }, 300);
        }
        return m.knowledge.upsertEntity(i);
      },
      learnFact: async (i) => (record(), m.knowledge.learnFact(i)),
      storeFact: async (i) => (record(), m.knowledge.storeFact(i)),
      createRelationship: async (i) => (record(), m.knowledge.createRelationship(i)),
    };
    const r = await run('consolidate', [userId], { jobs: jobsWith({ knowledge }) });
    expect(r.stats).toMatchObject({ conversations: 1, windows: 1, conversationsFailed: 0 });
    expect(writes.length).toBeGreaterThan(3);
    // The first item was under way when the call began; every later one waited for its end.
    expect(writes.slice(1).filter((w) => w.during)).toEqual([]);
    expect(Math.min(...writes.slice(1).map((w) => w.at))).toBeGreaterThanOrEqual(callEnded!);
    // Same knowledge as a window written without waiting.
    expect(summary(await facts(userId))).toEqual(summary(await facts(clean)));
  });

  it('two workers consolidating the same conversation produce one set of facts', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await say(userId, conversationId, ['I work at Acme.', 'I live in Oslo.', 'My boss is Vitaly.', 'I like chess.', 'I hate mornings.']);
    const [a, b] = await Promise.all([run('consolidate', [userId], { workerId: 'w1' }), run('consolidate', [userId], { workerId: 'w2' })]);
    expect([a.status, b.status]).toEqual(['succeeded', 'succeeded']);
    expect((a.stats.conversations ?? 0) + (b.stats.conversations ?? 0)).toBe(1);
    const fs = await facts(userId);
    expect(summary(fs)).toEqual(summary(fs.filter((f, i) => fs.findIndex((g) => g.claim === f.claim) === i)));
    expect(fs.map((f) => f.predicate).sort()).toEqual(['boss', 'likes', 'likes', 'lives_in', 'works_at']);
    const vitaly = await m.memory.semantic.findEntitiesByName({ userId, name: 'Vitaly', channels: ['_global'] });
    expect(vitaly).toHaveLength(1);
  });

  it('a crash mid-job then a rerun gives the same result as one clean run', async () => {
    const lines = ['I work at Initech.', 'My sister Jane lives in Paris.', 'I love jazz.', 'I live in Madrid.', 'I prefer tea.'];
    const clean = uid('u');
    await say(clean, uid('c'), lines);
    await run('consolidate', [clean]);

    const crashed = uid('u');
    const conversationId = uid('c');
    await say(crashed, conversationId, lines);
    let writes = 0;
    const crashing: KnowledgeWriter = {
      ...m.knowledge,
      learnFact: async (i) => {
        if (++writes === 3) throw new Error('worker killed mid-job');
        return m.knowledge.learnFact(i);
      },
    };
    const first = await run('consolidate', [crashed], { jobs: jobsWith({ knowledge: crashing }) });
    expect(first.stats).toMatchObject({ conversations: 0, conversationsFailed: 1 });
    expect((await facts(crashed)).length).toBe(2);
    const conv = await m.neo4j.read<{ consolidated: string | null }>('MATCH (c:Conversation {id: $id}) RETURN toString(c.consolidated) AS consolidated', { id: conversationId }, tag);
    expect(conv[0]!.consolidated).toBeNull();

    await run('consolidate', [crashed]);
    expect(summary(await facts(crashed))).toEqual(summary(await facts(clean)));
    const counts = async (u: string) => (await facts(u)).map((f) => `${f.claim}:${f.accessCount}:${f.confidence}`).sort();
    expect(await counts(crashed)).toEqual(await counts(clean));
    expect((await m.memory.getUserProfile(crashed)).profile).toEqual((await m.memory.getUserProfile(clean)).profile);
  });

  it.each([
    [
      'prefer_new',
      [
        ['Google', 'superseded', false],
        ['Microsoft', 'active', false],
      ],
    ],
    ['prefer_old', [['Google', 'active', false]]],
    [
      'flag_review',
      [
        ['Google', 'active', false],
        ['Microsoft', 'active', true],
      ],
    ],
  ] as const)('resolves a contradiction under %s', async (policy, expected) => {
    const userId = uid('u');
    const conversationId = uid('c');
    const jobs = jobsWith({ policy });
    await say(userId, conversationId, ['I work at Google.']);
    await run('consolidate', [userId], { jobs });
    await say(userId, conversationId, ['I work at Microsoft.', 'I like tea.']);
    await run('consolidate', [userId], { jobs });
    const fs = (await facts(userId)).filter((f) => f.predicate === 'works_at');
    expect(fs.map((f) => [f.properties.object, f.status, f.needsReview]).sort()).toEqual([...expected].map((e) => [...e]).sort());
    if (policy === 'flag_review') {
      const links = await m.neo4j.read<{ n: number }>('MATCH (a:Fact {user_id: $userId})-[:CONTRADICTS]->(b:Fact) RETURN count(*) AS n', { userId }, tag);
      expect(links[0]!.n).toBe(1);
    }
    // A fact about another relation is never retired by it.
    expect((await facts(userId)).find((f) => f.predicate === 'likes')?.status).toBe('active');
  });
});

describe('observations', () => {
  it('are processed exactly once into facts and the profile', async () => {
    const userId = uid('u');
    await m.memory.recordObservation(userId, 'User prefers short emails', 'preference');
    await m.memory.recordObservation(userId, 'The Apollo project ships on Fridays', 'project_details', { id: `${userId}-obs-2` });
    expect((await m.memory.recordObservation(userId, 'The Apollo project ships on Fridays', 'project_details', { id: `${userId}-obs-2` })).created).toBe(false);
    expect(await m.observations.countPending(userId)).toBe(2);

    const [a, b] = await Promise.all([run('consolidate', [userId], { workerId: 'w1' }), run('consolidate', [userId], { workerId: 'w2' })]);
    expect((a.stats.observations ?? 0) + (b.stats.observations ?? 0)).toBe(2);
    expect(await m.observations.countPending(userId)).toBe(0);
    const rows = (await m.pg.primary.query('SELECT attempts, processed_at FROM observations WHERE user_id = $1', [userId])).rows;
    expect(rows.every((r) => r.attempts === 1 && r.processed_at !== null)).toBe(true);

    const fs = await facts(userId);
    expect(fs.map((f) => [f.predicate, f.properties.object ?? null])).toEqual(
      expect.arrayContaining([
        ['prefers', 'short emails'],
        ['project_details', null],
      ]),
    );
    expect(fs).toHaveLength(2);
    const profile = await m.memory.getUserProfile(userId);
    expect(profile.profile).toMatchObject({ prefers: ['short emails'], project_details: ['The Apollo project ships on Fridays'] });
    expect(profile.narrative).toMatch(/short emails/);

    expect((await run('consolidate', [userId])).stats.observations).toBe(0);
    expect(await facts(userId)).toHaveLength(2);
  });

  it('a correction observation supersedes the fact it corrects', async () => {
    const userId = uid('u');
    await m.memory.recordObservation(userId, 'User lives in Rome', 'fact');
    await run('consolidate', [userId]);
    await m.memory.recordObservation(userId, 'User lives in Milan', 'correction');
    await run('consolidate', [userId], { jobs: jobsWith({ policy: 'prefer_old' }) });
    const fs = (await facts(userId)).filter((f) => f.predicate === 'lives_in');
    expect(fs.map((f) => [f.properties.object, f.status]).sort()).toEqual([
      ['Milan', 'active'],
      ['Rome', 'superseded'],
    ]);
  });

  it('rejects bad input before queuing anything', async () => {
    const userId = uid('u');
    await expect(m.memory.recordObservation(userId, '   ', 'fact')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(m.memory.recordObservation(userId, 'x', 'gossip' as 'fact')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await m.observations.countPending(userId)).toBe(0);
  });
});

describe('erasure during consolidation', () => {
  it('a conversation erased while it was being extracted gets nothing written back', async () => {
    const userId = uid('u');
    await say(userId, uid('c'), ['I work at Google.', 'My sister Alice lives in Berlin.']);
    const held = heldExtractor();
    const job = run('consolidate', [userId], { jobs: jobsWith({ extractor: held.extractor }) });
    await held.extracting;
    const report = await m.users.erase(userId);
    expect(report.nodesDeleted).toBeGreaterThan(0);
    held.release();
    expect((await job).stats).toMatchObject({ conversations: 0, conversationsFailed: 0, facts: 0, entities: 0 });
    expect(await m.users.stats(userId)).toEqual({ userId, nodes: {}, rows: {}, workingKeys: 0 });
  });

  it('an observation batch under way when the erasure began is swept after it lands', async () => {
    const userId = uid('u');
    await m.memory.recordObservation(userId, 'User prefers short emails', 'preference');
    const held = heldExtractor();
    const job = run('consolidate', [userId], { jobs: jobsWith({ extractor: held.extractor }) });
    await held.extracting;
    // The batch's transaction holds the observation rows: the erasure's first sweep deletes
    // the user's nodes, then waits on those rows while the batch writes its facts and commits.
    const erasing = m.users.erase(userId);
    await new Promise((r) => setTimeout(r, 300));
    held.release();
    expect((await job).stats.observations).toBe(1);
    await erasing;
    expect(await m.users.stats(userId)).toEqual({ userId, nodes: {}, rows: {}, workingKeys: 0 });
  });
});

describe('promote', () => {
  it('moves a project fact to _global only past every threshold, and audits the thresholds', async () => {
    const userId = uid('u');
    const [c1, c2] = [uid('c'), uid('c')];
    await say(userId, c1, ['We use Postgres 16 for the Apollo project.'], 'proj');
    await say(userId, c2, ['Apollo runs on Postgres 16.'], 'proj');
    const learn = (claim: string, confidence: number, turns: string[]) => m.memory.learnFact({ userId, channel: 'proj', claim, confidence, sourceTurnIds: turns, predicate: 'uses' });
    const good = (await learn('Apollo uses Postgres 16', 0.95, [`${c1}:0`, `${c2}:0`])).fact;
    const lowAccess = (await learn('Apollo uses Redis 7', 0.95, [`${c1}:0`, `${c2}:0`])).fact;
    const oneConversation = (await learn('Apollo uses Neo4j 5', 0.95, [`${c1}:0`])).fact;
    const lowConfidence = (await learn('Apollo uses Kafka', 0.7, [`${c1}:0`, `${c2}:0`])).fact;
    for (let i = 0; i < 5; i++) await m.semanticStore.recordAccess(userScope(userId), { factIds: [good.id, oneConversation.id, lowConfidence.id, ...(i < 4 ? [lowAccess.id] : [])] });

    const r = await run('promote', [userId]);
    expect(r.stats).toMatchObject({ promoted: 1 });
    const global = (await m.memory.semantic.findFacts({ userId, channels: ['_global'], limit: 100 })).filter((f) => f.channel === '_global');
    expect(global.map((f) => [f.claim, f.promotedFrom])).toEqual([['Apollo uses Postgres 16', good.id]]);
    expect((await run('promote', [userId])).stats.promoted).toBe(0);

    await m.audit.flush();
    const audit = (
      await m.pg.primary.query("SELECT promotion_confidence, promotion_access_count, promotion_conversation_count, metadata FROM memory_audit_log WHERE user_id = $1 AND operation = 'promote'", [
        userId,
      ])
    ).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ promotion_confidence: 0.95, promotion_access_count: 5, promotion_conversation_count: 2 });
    expect(audit[0].metadata.thresholds).toEqual({ minConfidence: 0.85, minAccessCount: 5, minConversations: 2 });
  });
});

describe('decay', () => {
  it('applies salience x 0.95^days on a fake clock, idempotently, sparing protected facts', async () => {
    const userId = uid('u');
    const entity = (await m.memory.upsertEntity({ userId, name: 'Zanzibar', type: 'place', salience: 1 })).entity;
    const explicit = (await m.memory.storeFact({ userId, claim: 'Bob visited Zanzibar', certainty: 'explicit', salience: 1, aboutEntityIds: [entity.id] })).fact;
    const inferred = (await m.memory.storeFact({ userId, claim: 'Bob likes islands', certainty: 'inferred', salience: 1, aboutEntityIds: [entity.id] })).fact;
    const confirmed = (await m.memory.storeFact({ userId, claim: 'Bob was born in 1990', certainty: 'inferred', salience: 1 })).fact;
    await m.memory.confirmFact(userId, confirmed.id);
    const t0 = Date.parse('2030-01-01T00:00:00Z');
    await m.neo4j.write('MATCH (n) WHERE n.user_id = $userId AND (n:Entity OR n:Fact) SET n.last_accessed = datetime($t0)', { userId, t0: new Date(t0).toISOString() }, tag);
    const clock = (days: number): Clock => ({ now: () => new Date(t0 + days * 86_400_000) });
    const read = async () =>
      Object.fromEntries(
        (
          await m.neo4j.read<{ id: string; salience: number; confidence: number | null }>(
            'MATCH (n) WHERE n.user_id = $userId AND (n:Entity OR n:Fact) RETURN n.id AS id, n.salience AS salience, n.confidence AS confidence',
            { userId },
            tag,
          )
        ).map((r) => [r.id, r]),
      );

    await run('decay', [userId], { clock: clock(10) });
    let s = await read();
    expect(s[entity.id]!.salience).toBeCloseTo(0.95 ** 10, 6);
    expect(s[explicit.id]).toMatchObject({ confidence: 0.95 });
    expect(s[explicit.id]!.salience).toBeCloseTo(0.95 ** 10, 6);
    expect(s[inferred.id]!.confidence).toBeCloseTo(0.7 * 0.95 ** (10 / 7), 6);
    expect(s[confirmed.id]).toMatchObject({ salience: 1, confidence: 0.7 });

    await run('decay', [userId], { clock: clock(10) });
    expect((await read())[entity.id]!.salience).toBeCloseTo(0.95 ** 10, 6);
    await run('decay', [userId], { clock: clock(12) });
    s = await read();
    expect(s[entity.id]!.salience).toBeCloseTo(0.95 ** 12, 6);
    expect(s[inferred.id]!.confidence).toBeCloseTo(0.7 * 0.95 ** (12 / 7), 6);
  });
});

describe('cleanup and patterns', () => {
  it('merges near-duplicate facts, keeps contradicting ones apart, archives idle conversations', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await say(userId, conversationId, ['hello']);
    const e = (await m.memory.upsertEntity({ userId, name: 'Bob', type: 'person' })).entity;
    const store = (claim: string, object: string, confidence: number) => m.memory.storeFact({ userId, claim, confidence, predicate: 'works_at', aboutEntityIds: [e.id], properties: { object } });
    const a = (await store('Bob works at Google', 'Google', 0.7)).fact;
    const b = (await store('Bob works at Google.', 'Google', 0.95)).fact;
    const c = (await store('Bob works at Microsoft', 'Microsoft', 0.9)).fact;
    const r = await run('cleanup', [userId], { clock: { now: () => new Date(Date.now() + 100 * 86_400_000) } });
    expect(r.stats).toMatchObject({ factsMerged: 1, archived: 1 });
    const fs = await facts(userId);
    expect(fs.find((f) => f.id === a.id)).toMatchObject({ status: 'superseded', supersededBy: b.id });
    expect(fs.find((f) => f.id === b.id)!.status).toBe('active');
    expect(fs.find((f) => f.id === c.id)!.status).toBe('active');
    const conv = await m.neo4j.read<{ archived: boolean }>('MATCH (c:Conversation {id: $id}) RETURN c.archived AS archived', { id: conversationId }, tag);
    expect(conv[0]!.archived).toBe(true);
  });

  it('learns a strategy from a conversation whose tool calls succeeded', async () => {
    const userId = uid('u');
    const ok = uid('c');
    const failed = uid('c');
    await say(userId, ok, ['Please fix the failing CI build for the payments service']);
    await say(userId, failed, ['Deploy the website']);
    for (const [conv, tool, success] of [
      [ok, 'ci_logs', true],
      [ok, 'edit_file', true],
      [failed, 'deploy', false],
    ] as const) {
      await m.memory.recordInvocation({ userId, conversationId: conv, toolName: tool, success, latencyMs: 10 });
    }
    const r = await run('patterns', [userId], { clock: { now: () => new Date(Date.now() + 3_600_000) } });
    expect(r.stats).toMatchObject({ conversations: 2, learned: 1, unsuccessful: 1 });
    const found = await m.memory.findStrategies({ userId, task: 'CI build is failing' });
    expect(found[0]?.strategy.toolSequence).toEqual(['ci_logs', 'edit_file']);
    expect((await run('patterns', [userId], { clock: { now: () => new Date(Date.now() + 3_600_000) } })).stats.conversations).toBe(0);
  });

  it('leaves users with mining off out of pattern learning until it is back on', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await say(userId, conversationId, ['Please rotate the staging database credentials']);
    await m.memory.recordInvocation({ userId, conversationId, toolName: 'vault_rotate', success: true, latencyMs: 10 });
    const later = { clock: { now: () => new Date(Date.now() + 3_600_000) } };
    await m.memory.updateSettings({ userId, autoMine: false });
    expect((await run('patterns', [userId], later)).stats).toMatchObject({ conversations: 0, learned: 0, usersMiningOff: 1 });
    expect(await m.memory.findStrategies({ userId, task: 'rotate staging database credentials' })).toEqual([]);
    // Back on: the conversation that waited is mined (it was not marked as done while off).
    await m.memory.updateSettings({ userId, autoMine: true });
    expect((await run('patterns', [userId], later)).stats).toMatchObject({ conversations: 1, learned: 1, usersMiningOff: 0 });
    expect((await m.memory.findStrategies({ userId, task: 'rotate staging database credentials' }))[0]?.strategy.toolSequence).toEqual(['vault_rotate']);
  });
});

describe('worker lifecycle', () => {
  it('moves INITIALIZED -> RUNNING -> STOPPED, skips a job another worker holds, and refuses work once stopped', async () => {
    const w = m.createWorker({ workerId: 'lifecycle', locks: new RedisLockService(m.redis) });
    expect(w.state).toBe('INITIALIZED');
    w.start();
    expect(w.state).toBe('RUNNING');
    expect(() => w.start()).toThrow(/RUNNING/);
    const userIds = [uid('u')];
    const other = new RedisLockService(m.redis);
    const key = `worker:job:decay:${createHash('sha256').update(userIds.join(',')).digest('hex').slice(0, 16)}`;
    const token = await other.acquire(key, 10_000);
    expect(token).not.toBeNull();
    expect((await w.runJob('decay', { userIds })).status).toBe('skipped');
    expect(await new RedisLockService(m.redis).release(key, 'not-the-owner')).toBe(false);
    await other.release(key, token!);
    expect((await w.runJob('decay', { userIds })).status).toBe('succeeded');
    await w.stop();
    expect(w.state).toBe('STOPPED');
    expect((await w.runJob('decay', { userIds })).status).toBe('skipped');
  });

  it('jobs yield to interactive calls between items: pause() waits while a call holds the gate', async () => {
    const seen: number[] = [];
    const job = async (ctx: Parameters<(typeof m.jobs)['decay']>[0]) => {
      for (let i = 0; i < 3; i++) {
        await ctx.pause();
        seen.push(m.gate.busy);
      }
      return { items: 3 };
    };
    const w = m.createWorker({ jobs: { ...m.jobs, decay: job } });
    const leave = m.gate.enter(); // a recall under way
    const run = w.runJob('decay', { userIds: [uid('u')] });
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual([]);
    leave();
    expect((await run).status).toBe('succeeded');
    expect(seen).toEqual([0, 0, 0]);
    await w.stop();
  });
});
