import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgAuditLogger, spoolFolder, withActor } from '../../src/audit';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { createLogger } from '../../src/infra/logger';
import { createPgPool } from '../../src/infra/postgres';
import { createEmbedder } from '../../src/embedding';
import { OpenAIEmbedder } from '../../src/embedding/openai-embedder';
import { startOpenAICompatibleServer } from '../support/openai-compatible-server';
import { TcpProxy } from '../support/tcp-proxy';
import { Neo4jEpisodicStore, PgTurnLog } from '../../src/episodic';
import { prepareTurn } from '../../src/episodic/prepare';
import { TurnInputSchema } from '../../src/episodic/schema';
import { eventually, testConfig, uid } from '../support/stack';

const silent = createLogger('silent');
const embedder = createEmbedder(testConfig().embedding);
afterAll(() => embedder.close());

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** A real redis-server of this test's own, so stopping it disturbs nobody else. */
function startRedis(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
}

async function auditRows(m: Mnemograph, userId: string) {
  await m.audit.flush();
  return (await m.pg.primary.query('SELECT operation, metadata FROM memory_audit_log WHERE user_id = $1 ORDER BY id', [userId])).rows as Array<{
    operation: string;
    metadata: Record<string, unknown>;
  }>;
}

describe('working memory when Redis goes away', () => {
  let redis: ChildProcess;
  let m: Mnemograph;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    redis = startRedis(port);
    m = await createMnemograph(testConfig({ REDIS_URL: `redis://127.0.0.1:${port}` }), { log: silent, embedder, backgroundEmbedding: false });
    await eventually(async () => m.redis.status === 'ready', 'redis ready');
  });
  afterAll(async () => {
    await m.close();
    redis.kill('SIGKILL');
  });

  it('degrades to process memory, keeps TTL semantics, and returns to Redis', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const session = m.memory.session({ userId, conversationId });
    await session.set('topic', 'gardening');
    expect(await m.redis.get(`working:${userId}:_global:${conversationId}:ctx:topic`)).toBe('"gardening"');

    redis.kill('SIGKILL');
    await eventually(async () => m.redis.status !== 'ready', 'redis down');
    // Writes keep working and are readable while Redis is down.
    const stored = await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'while redis is down' });
    expect(stored.created).toBe(true);
    await session.set('mood', 'calm');
    await session.set('short', 'gone soon', 1);
    expect(m.working.isDegraded).toBe(true);
    expect(await session.get('mood')).toBe('calm');
    expect((await session.recentTurns()).map((t) => t.content)).toEqual(['while redis is down']);
    await eventually(async () => (await session.get('short')) === undefined, 'per-key TTL expires in the fallback', 5_000);

    redis = startRedis(port);
    await eventually(async () => m.redis.status === 'ready', 'redis back', 20_000);
    await session.set('after', 'back');
    expect(m.working.isDegraded).toBe(false);
    expect(await m.redis.get(`working:${userId}:_global:${conversationId}:ctx:after`)).toBe('"back"');
  });
});

describe('a Neo4j commit whose acknowledgement is lost (issue #22, finding 4)', () => {
  let proxy: TcpProxy;
  let m: Mnemograph;
  beforeAll(async () => {
    const neo4jUrl = new URL(testConfig().neo4j.uri);
    proxy = new TcpProxy({ host: neo4jUrl.hostname, port: Number(neo4jUrl.port || 7687) });
    await proxy.open();
    m = await createMnemograph(testConfig({ NEO4J_URI: `bolt://127.0.0.1:${proxy.port}` }), { log: silent, embedder, backgroundEmbedding: false });
  });
  afterAll(async () => {
    await m.close();
    await proxy.close();
  });

  it('the driver retry finds its own turn stored and completes it: created, one Postgres row, working memory, one audit row', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const lost = proxy.loseNextCommitAck();
    const stored = await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'my ack was lost', index: 0 });
    await lost; // the commit did land and its answer was dropped: the driver retried
    expect(stored.created).toBe(true);
    expect((await m.pg.primary.query('SELECT content FROM conversation_logs WHERE turn_id = $1', [stored.turn.id])).rows).toEqual([{ content: 'my ack was lost' }]);
    expect((await m.memory.session({ userId, conversationId }).recentTurns()).map((t) => t.content)).toEqual(['my ack was lost']);
    expect((await auditRows(m, userId)).map((r) => r.operation)).toEqual(['store']);

    // Another call storing the same turn is a repeat: not created, nothing audited again.
    const again = await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'my ack was lost', index: 0 });
    expect(again.created).toBe(false);
    expect((await auditRows(m, userId)).map((r) => r.operation)).toEqual(['store']);
  });

  it('a repeat of a turn stored but never acknowledged (the process stopped after the commit) audits it once', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    // What a process that stopped right after the commit leaves: the turn and its row, no audit row.
    const turn = prepareTurn(TurnInputSchema.parse({ userId, conversationId, role: 'user', content: 'never acknowledged', index: 0 }));
    const log = new PgTurnLog(m.pg.primary);
    await new Neo4jEpisodicStore(m.neo4j).storeTurns([turn], { beforeCommit: (stored) => log.append(stored.map((r) => ({ ...turn, id: r.turn.id, index: r.turn.index, created: r.created }))) });
    expect(await auditRows(m, userId)).toEqual([]);

    const retried = await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'never acknowledged', index: 0 });
    expect(retried.created).toBe(false);
    expect((await auditRows(m, userId)).map((r) => r.operation)).toEqual(['store']);
    expect((await m.pg.primary.query('SELECT 1 FROM conversation_logs WHERE turn_id = $1', [retried.turn.id])).rowCount).toBe(1);
    // Once audited, further repeats add nothing.
    await m.memory.storeTurns([{ userId, conversationId, role: 'user', content: 'never acknowledged', index: 0 }]);
    expect((await auditRows(m, userId)).map((r) => r.operation)).toEqual(['store']);
  });

  it('a batch whose commit acknowledgement is lost: every turn created once, a duplicate row in it is not', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const lost = proxy.loseNextCommitAck();
    const turn = (index: number) => ({ userId, conversationId, role: 'user' as const, content: `turn ${index}`, index });
    const stored = await m.memory.storeTurns([turn(0), turn(1), turn(1)]);
    await lost;
    expect(stored.map((r) => r.created)).toEqual([true, true, false]);
    expect((await m.pg.primary.query('SELECT count(*)::int AS n FROM conversation_logs WHERE user_id = $1', [userId])).rows[0].n).toBe(2);
    const rows = await auditRows(m, userId);
    expect(rows.map((r) => r.operation)).toEqual(['import']);
  });
});

describe('an instance given an embedder', () => {
  it("leaves it open when it closes: the embedder is the caller's, and another instance may share it", async () => {
    const m = await createMnemograph(testConfig(), { log: silent, embedder, backgroundEmbedding: false });
    await m.close();
    const [vector] = await embedder.embed(['still open']);
    expect(vector).toHaveLength(embedder.dimensions);
  });
});

describe('audit levels', () => {
  it.each([
    ['off', [], []],
    ['writes', ['store'], []],
    ['reads', ['store', 'getRecentTurns'], []],
    ['verbose', ['store', 'getRecentTurns'], ['payload']],
  ])('level %s records %j', async (level, operations, metadataKeys) => {
    const m = await createMnemograph(testConfig({ AUDIT_LEVEL: level }), { log: silent, embedder, backgroundEmbedding: false });
    try {
      const userId = uid('u');
      await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'audit me' });
      await m.memory.getRecentTurns({ userId });
      const rows = await auditRows(m, userId);
      expect(rows.map((r) => r.operation)).toEqual(operations);
      if (rows[0]) expect(Object.keys(rows[0].metadata)).toEqual(metadataKeys);
    } finally {
      await m.close();
    }
  });

  it('spools audit rows while Postgres is unreachable and replays them into their database only, each once', async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), 'mnemograph-spool-'));
    const deadPort = await freePort();
    // The test database while it is away: the rows are for it (database), its pool reaches nothing.
    const url = testConfig().postgres.url;
    const dead = createPgPool(`postgres://postgres@127.0.0.1:${deadPort}/mnemograph`, 1);
    const userId = uid('u');
    const down = new PgAuditLogger(dead, { level: 'writes', spoolDir, database: url, configSnapshot: {} }, silent);
    // Rows spooled keep the actor they were queued with (src/audit/actor.ts).
    const actor = { tenantId: 'spool-t', keyId: 'k-spool', agentId: 'planner', surface: 'http', requestId: 'req-spooled' } as const;
    withActor(actor, () => {
      for (let i = 0; i < 5; i++) down.logWrite({ operation: 'store', memoryType: 'episodic', userId, channel: '_global', affectedIds: [`t${i}`] });
    });
    await down.close();
    await dead.end();
    const folder = join(spoolDir, spoolFolder(url));
    const spooled = readdirSync(folder).flatMap((f) => readFileSync(join(folder, f), 'utf8').trim().split('\n'));
    expect(spooled).toHaveLength(5);

    const live = createPgPool(url, 2);
    // A process on another database sharing the spool folder (one checkout) leaves them alone.
    const neighbour = new PgAuditLogger(live, { level: 'writes', spoolDir, database: `${url}_other`, configSnapshot: {} }, silent);
    await neighbour.close();
    expect(readdirSync(folder)).toHaveLength(1);
    const up = new PgAuditLogger(live, { level: 'writes', spoolDir, database: url, configSnapshot: {} }, silent);
    try {
      await up.flush();
      await up.flush();
      const rows = await live.query('SELECT affected_ids, tenant_id, key_id, agent_id, surface, request_id FROM memory_audit_log WHERE user_id = $1 ORDER BY id', [userId]);
      expect(rows.rows.map((r) => r.affected_ids[0])).toEqual(['t0', 't1', 't2', 't3', 't4']);
      for (const r of rows.rows) expect(r).toMatchObject({ tenant_id: 'spool-t', key_id: 'k-spool', agent_id: 'planner', surface: 'http', request_id: 'req-spooled' });
      expect(readdirSync(folder)).toEqual([]);
    } finally {
      await up.close();
      await live.end();
    }
  });
});

describe('embedding failures and the model lock', () => {
  it('stores a turn whose inline embedding fails and embeds it later', async () => {
    const { model, dimensions } = testConfig().embedding;
    const server = await startOpenAICompatibleServer(dimensions);
    const remote = new OpenAIEmbedder('openai-compatible', model, dimensions, { baseUrl: server.baseUrl, maxRetries: 0 });
    // Same identity as the locked model, so the lock accepts it.
    Object.assign(remote, { provider: 'local' });
    const m = await createMnemograph(testConfig({ EMBEDDING_MODE: 'inline' }), { log: silent, embedder: remote, backgroundEmbedding: false });
    try {
      const userId = uid('u');
      server.failNext(1);
      const { turn } = await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'embedding will fail first' });
      expect(turn.embedded).toBe(false);
      expect(await m.memory.getConversation(userId, turn.conversationId)).toHaveLength(1);
      await m.backgroundEmbedder.drain();
      const [after] = await m.memory.getConversation(userId, turn.conversationId);
      expect(after!.embedded).toBe(true);
      const { turn: inline } = await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'this one embeds inline' });
      expect(inline.embedded).toBe(true);

      // A fact written while the embedder fails is kept, and embedded by the knowledge backlog later.
      server.failNext(1);
      const { fact } = await m.memory.learnFact({ userId, claim: 'Biscuit is a golden retriever' });
      expect(fact.embedded).toBe(false);
      expect(await m.knowledgeEmbedder.drain()).toBeGreaterThanOrEqual(1);
      expect((await m.memory.semantic.getFact(userId, fact.id))?.embedded).toBe(true);
    } finally {
      await m.close();
      await server.close();
    }
  });

  it('refuses to start with an embedding model of another dimension', async () => {
    const server = await startOpenAICompatibleServer(1536);
    try {
      await expect(createMnemograph(testConfig({ EMBEDDING_PROVIDER: 'openai-compatible', EMBEDDING_BASE_URL: server.baseUrl }), { log: silent })).rejects.toThrow(
        `holds embeddings from local/${testConfig().embedding.model} (${testConfig().embedding.dimensions}-d) but openai-compatible/text-embedding-3-small (1536-d) is configured`,
      );
      expect(server.calls).toBe(0);
    } finally {
      await server.close();
    }
  });
});
