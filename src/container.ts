import { resolve } from 'node:path';
import type { Driver } from 'neo4j-driver';
import type pg from 'pg';
import { PgAuditLogger, PgAuditReader, PgAuditTrail, type AuditLogger, type AuditReader } from './audit';
import type { Config } from './config';
import { createEmbedder, type Embedder } from './embedding';
import { BackgroundEmbedder, Neo4jConversationBrowser, Neo4jConversationUpkeep, Neo4jEpisodicStore, PgTurnLog, turnBacklog } from './episodic';
import { Forgetter, Neo4jDerivedKnowledge } from './forgetting';
import { userScope } from './access';
import { createLogger, type Logger } from './infra/logger';
import { InteractiveGate } from './infra/interactive-gate';
import type { HoldMode } from './infra/owner-vectors';
import { createNeo4jDriver, Neo4jExecutor, waitForNeo4j } from './infra/neo4j';
import { createPgPools } from './infra/postgres';
import { createRedis, type RedisClient } from './infra/redis';
import { dataRoot } from './package-info';
import { AgentMemory } from './memory/agent-memory';
import { assertMigrated, Neo4jGraphCensus, REPO_ROOT, runMigrations } from './migrate';
import { FailoverWorkingStore, MemoryWorkingStore, RedisWorkingStore } from './working';
import { ChatTextGenerator, HttpReranker, HybridRecallEngine, LlmReranker, StoreReinforcer, recallSettingsFrom, type ProfileSource, type RecallSource } from './retrieval';
import { createDefaultSources } from './retrieval/sources';
import { Neo4jKnowledgeCuration, Neo4jSemanticStore, Neo4jSemanticUpkeep } from './semantic';
import { Neo4jProceduralStore, PgToolInvocationLog } from './procedural';
import { Neo4jGoalStore } from './goals';
import { Neo4jPoolStore } from './pools';
import { createExtractor, type Extractor } from './extraction';
import { createChatModel, PgUsageSink } from './llm';
import type { OpsSources } from './ops';
import { PgObservationQueue, PgProfileStore, profileFactOf, type ObservationQueue } from './observations';
import { emptyErasureReport, Neo4jUserGraph, RedisUserKeys, UserDataStore, UserWriteFence, type UserDataPart, type UserStats } from './tenancy';
import { createJobs, PgJobStore, RedisLockService, Worker, type Clock, type JobFn, type JobName, type JobStores, type KnowledgeWriter, type LockService } from './worker';
import type { MetricSources } from './api/metrics';
import { PgShortTermStore, type Clock as ShortTermClock } from './short-term';
import { PgSettingsStore } from './settings';
import { PgLearnedInfoStore } from './observations';
import { longTermCounts, type TierCounter } from './tiers';

/** Everything the service runs on, created once and closed once. */
export interface Mnemograph {
  config: Config;
  memory: AgentMemory;
  log: Logger;
  neo4j: Neo4jExecutor;
  driver: Driver;
  pg: { primary: pg.Pool; replica: pg.Pool };
  redis: RedisClient;
  embedder: Embedder;
  audit: AuditLogger;
  /** The audit log for reviewers (GET /v1/audit, the export, `mnemograph audit`); reads the replica pool. */
  auditReader: AuditReader;
  backgroundEmbedder: BackgroundEmbedder;
  /** Interactive calls hold it; the background embedders and the worker's jobs yield to them. */
  gate: InteractiveGate;
  /** Embeds facts and entities written while the embedder was failing. */
  knowledgeEmbedder: BackgroundEmbedder<{ label: 'Entity' | 'Fact'; id: string; text: string }>;
  working: FailoverWorkingStore;
  /** Batched access-count writer of the read path (flush() in tests). */
  reinforcer: StoreReinforcer;
  /** The semantic store, for jobs that work across users (promotion candidates, pending embeddings). */
  semanticStore: Neo4jSemanticStore;
  /** Extraction, observations and the worker's jobs (src/extraction, src/observations, src/worker). */
  extractor: Extractor;
  observations: ObservationQueue;
  knowledge: KnowledgeWriter;
  locks: LockService;
  jobs: Record<JobName, JobFn>;
  /** The owning stores' operations the jobs run (tests build jobs over them with createJobs). */
  jobStores: JobStores;
  /** Whole-graph counts per label and relationship type (`mnemograph stats`, metrics). */
  census: Neo4jGraphCensus;
  /** What the metrics gauges read (job counters from the replica). */
  metricSources: MetricSources;
  /** What the operations report reads (src/ops), but the store health, which the API probes. */
  opsSources: Omit<OpsSources, 'health'>;
  /** A worker over these jobs (call start() to schedule them); `jobs` replaces them (tests inject faults). */
  createWorker(opts?: { clock?: Clock; workerId?: string; jobs?: Record<JobName, JobFn>; locks?: LockService }): Worker;
  /** Whole-user statistics, export, import and erasure across the stores (src/tenancy). */
  users: UserDataStore;
  /** The per-user erasure fence: the API's and MCP's writes enter it, `users.erase` closes it. */
  fence: UserWriteFence;
  /** Memory pools (src/pools): the store behind `memory.pools`, recall's pool source and the `pools` job. */
  poolStore: Neo4jPoolStore;
  /** The short-term tier's store (jobs, tests). */
  shortTerm: PgShortTermStore;
  /** Per-user memory settings. */
  settings: PgSettingsStore;
  close(): Promise<void>;
}

export interface CreateOptions {
  log?: Logger;
  /**
   * Replace the configured embedder (tests, benchmarks with cached vectors). It stays the
   * caller's: `close()` leaves it open (several instances may share one; the caller closes it).
   */
  embedder?: Embedder;
  /** Skip the embedding-model lock check (only `mnemograph reindex`, which re-embeds and moves the lock). */
  skipEmbeddingLock?: boolean;
  /** Start the background embedder loop (default true). */
  backgroundEmbedding?: boolean;
  /** Share another container's InteractiveGate (two facades standing for one process, as the load benchmarks do). */
  gate?: InteractiveGate;
  /** Replace the default recall sources (facts, entities, strategies, goals over their stores) and the profile source. */
  recallSources?: RecallSource[];
  profileSource?: ProfileSource;
  /** Replace the configured extractor (tests with a scripted LLM). */
  extractor?: Extractor;
  /** The time source of the short-term tier's TTLs (tests run it on a fake clock); default the system clock. */
  clock?: ShortTermClock;
}

/**
 * The composition root: creates the drivers and clients from configuration and wires them
 * into the stores and the facade. Nothing else constructs its own dependencies. Fails fast
 * (with the setting to fix) when a store is unreachable or the embedding model changed.
 */
export async function createMnemograph(config: Config, opts: CreateOptions = {}): Promise<Mnemograph> {
  const log = opts.log ?? createLogger(config.logLevel);
  const driver = createNeo4jDriver(config.neo4j);
  const neo4j = new Neo4jExecutor(driver, config.neo4j.database, config.neo4j.uri);
  const pools = createPgPools(config.postgres);
  const redis = createRedis(config.redis);
  const embedder = opts.embedder ?? createEmbedder(config.embedding);
  const closeAll = async () => {
    redis.disconnect();
    // An embedder the caller gave is the caller's to close (another instance may share it).
    const ownEmbedder = opts.embedder === undefined ? embedder.close() : undefined;
    await Promise.allSettled([driver.close(), pools.primary.end(), pools.replica !== pools.primary ? pools.replica.end() : undefined, ownEmbedder]);
  };

  try {
    await waitForNeo4j(driver, { uri: config.neo4j.uri, database: config.neo4j.database }, 5_000);
    const deps = { neo4j, pg: pools.primary, config };
    if (config.migrateOnStart) await runMigrations(deps, { check: false, root: REPO_ROOT });
    else if (!opts.skipEmbeddingLock) await assertMigrated(deps, REPO_ROOT);
  } catch (err) {
    await closeAll();
    throw err;
  }

  // Interactive calls (remember, storeTurn) ahead of background work: the embedders, and the
  // reads of small users' embeddings into memory for recall.
  const gate = opts.gate ?? new InteractiveGate();
  const heldReads = { idle: () => gate.idle() };
  const episodic = new Neo4jEpisodicStore(neo4j, heldReads);
  const working = new FailoverWorkingStore(
    new RedisWorkingStore(redis, config.working.ttlSeconds, config.working.maxTurns),
    new MemoryWorkingStore(config.working.ttlSeconds, config.working.maxTurns),
    () => redis.status === 'ready',
    log,
  );
  const audit = new PgAuditLogger(
    pools.primary,
    {
      level: config.audit.level,
      spoolDir: resolve(dataRoot(), config.audit.spoolDir),
      database: config.postgres.url,
      configSnapshot: auditSnapshot(config, embedder),
    },
    log,
  );
  const backgroundEmbedder = new BackgroundEmbedder(turnBacklog(episodic), embedder, log, { batchSize: 32, pollMs: 2_000, batchesPerRound: 8, gate });
  if (opts.backgroundEmbedding !== false) backgroundEmbedder.start();

  // The worker's promote job reads candidates straight from the store (across users).
  const semanticStore = new Neo4jSemanticStore(neo4j, heldReads);
  // Facts and entities normally embed on write; this catches those written while it failed.
  type PendingKnowledge = { label: 'Entity' | 'Fact'; id: string; text: string };
  const knowledgeEmbedder = new BackgroundEmbedder<PendingKnowledge>(
    {
      pending: (limit) => semanticStore.pendingEmbeddings(limit),
      text: (p) => p.text,
      save: (rows) => semanticStore.setEmbeddings(rows.map((r) => ({ label: r.item.label, id: r.item.id, embedding: r.embedding }))),
    },
    embedder,
    log,
    { batchSize: 32, pollMs: 30_000, batchesPerRound: 2, gate },
  );
  if (opts.backgroundEmbedding !== false) knowledgeEmbedder.start();
  const proceduralStore = new Neo4jProceduralStore(neo4j);
  const goalStore = new Neo4jGoalStore(neo4j);
  const poolStore = new Neo4jPoolStore(neo4j);
  const toolLog = new PgToolInvocationLog(pools.primary);
  const profileStore = new PgProfileStore(pools.primary);
  const reinforcer = new StoreReinforcer({ episodic, semantic: semanticStore, procedural: proceduralStore, goals: goalStore, pools: poolStore }, log);
  const recallSettings = recallSettingsFrom(config.recall);
  // Every LLM call's tokens and cost (extraction, recall) go to llm_usage.
  const usageSink = new PgUsageSink(pools.primary);
  const generator = config.recallLlm ? new ChatTextGenerator(createChatModel(config.recallLlm), log, usageSink) : undefined;
  // Facts, entities, strategies, goals and the profile come from their stores unless replaced.
  const defaults = createDefaultSources({
    semantic: semanticStore,
    procedural: proceduralStore,
    goals: goalStore,
    pools: poolStore,
    neo4j,
    settings: recallSettings,
    pg: pools.primary,
    profiles: profileStore,
  });
  const recall = new HybridRecallEngine({
    episodic,
    embedder,
    settings: recallSettings,
    audit,
    log,
    sources: opts.recallSources ?? defaults.sources,
    presence: opts.recallSources ? undefined : defaults.presence,
    profile: opts.profileSource ?? defaults.profile,
    reinforcer,
    generator,
    // A cross-encoder when one is configured; otherwise the recall LLM, if any.
    reranker: config.rerank.url
      ? new HttpReranker({ baseUrl: config.rerank.url, model: config.rerank.model, apiKey: config.rerank.apiKey, timeoutMs: config.rerank.timeoutMs })
      : generator && new LlmReranker(generator),
  });

  const observations = new PgObservationQueue(pools.primary);
  const turnLog = new PgTurnLog(pools.primary);
  const shortTerm = new PgShortTermStore(pools.primary);
  const settings = new PgSettingsStore(pools.primary);
  const learnedInfo = new PgLearnedInfoStore(pools.primary);
  const clock = opts.clock ?? { now: () => new Date() };
  const graph = new Neo4jUserGraph(neo4j);
  const redisKeys = new RedisUserKeys(redis, working);
  // One counter per tier (seed 001 router stats), each from the tier's owner.
  const tierCounters: TierCounter[] = [
    { tier: 'working', count: async (scope) => ({ keys: await userStat(redisKeys, scope.userId, (s) => s.workingKeys) }) },
    { tier: 'shortTerm', count: async (scope) => ({ ...(await shortTerm.counts(scope, clock.now())) }) },
    { tier: 'longTerm', count: async (scope) => longTermCounts(await userStat(graph, scope.userId, (s) => s.nodes)) },
    { tier: 'shared', count: async (scope) => poolStore.countShared(scope) },
  ];
  // Every store that holds small users' embeddings in the process (src/infra/owner-vectors.ts):
  // warm-up's rehearsal sets how its user's are held, and an erasure forgets the user's.
  const holdVectors = async (userId: string, mode: HoldMode) => {
    await episodic.holdVectors(userId, mode);
    await semanticStore.holdVectors(userId, mode);
  };
  const conversations = new Neo4jConversationBrowser(neo4j);
  // Deletes take what was learned only from the deleted turns with them (src/forgetting).
  const forgetter = new Forgetter({
    conversations,
    derived: new Neo4jDerivedKnowledge(neo4j),
    turnLog,
    toolLog,
    working,
    profiles: profileStore,
    audit,
    afterDelete: (userId) => holdVectors(userId, 'forget'),
  });
  const memory = new AgentMemory({
    episodic,
    turnLog,
    working,
    embedder,
    backgroundEmbedder,
    audit,
    log,
    embeddingMode: config.embedding.mode,
    gate,
    recall,
    rehearsalGraph: {
      holds: async (userId) => Object.keys((await graph.nodeCounts([userId])).get(userId) ?? {}).length > 0,
      erase: (userId) => graph.erase(userId, emptyErasureReport(userId)),
      holdVectors,
    },
    semantic: semanticStore,
    procedural: proceduralStore,
    toolLog,
    goals: goalStore,
    pools: poolStore,
    poolFusion: recallSettings,
    promotionThresholds: config.worker.promotion,
    entityMatchSimilarity: config.semantic.entityMatchSimilarity,
    observations,
    profiles: {
      get: (userId) => profileStore.get(pools.primary, userId),
      // A retracted or corrected fact's value leaves the profile (a correction's enters it).
      revise: async (userId, gone, added) => {
        await profileStore.forget(
          userId,
          gone.flatMap((f) => profileFactOf(f) ?? []),
          added.flatMap((f) => profileFactOf(f) ?? []),
        );
      },
    },
    // Bound late: the jobs write through this facade, and the facade can run them.
    runJob: (name, o) => jobRunner.runJob(name, o),
    shortTerm,
    clock,
    settings,
    learnedInfo,
    tierCounters,
    conversations,
    curation: new Neo4jKnowledgeCuration(neo4j),
    forgetter,
  });

  const extractor = opts.extractor ?? createExtractor(config.extraction, { log, usage: usageSink });
  const locks = new RedisLockService(redis);
  const knowledge: KnowledgeWriter = {
    upsertEntity: (i) => memory.semantic.upsertEntity(i),
    findEntitiesByName: (q) => memory.semantic.findEntitiesByName(q),
    storeFact: (i) => memory.semantic.storeFact(i),
    learnFact: (i) => memory.semantic.learnFact(i),
    getFact: (u, id) => memory.semantic.getFact(u, id),
    findFacts: (q) => memory.semantic.findFacts(q),
    createRelationship: (i) => memory.semantic.createRelationship(i),
    promoteToGlobal: (i) => memory.semantic.promoteToGlobal(i),
    learnStrategy: (i) => memory.procedural.learnStrategy(i),
    findPromotionCandidates: (t, limit) => semanticStore.findPromotionCandidates(t, limit),
  };
  const conversationUpkeep = new Neo4jConversationUpkeep(neo4j);
  const auditTrail = new PgAuditTrail(pools.primary);
  const jobStore = new PgJobStore(pools.primary);
  const jobStores: JobStores = {
    conversations: conversationUpkeep,
    semantic: new Neo4jSemanticUpkeep(neo4j),
    toolLog,
    profiles: profileStore,
    auditTrail,
    ledger: jobStore,
    pools: poolStore,
    shortTerm,
    settings,
    forget: (userId, conversationId) => forgetter.delete(userScope(userId), { conversationId, keepConfirmed: true, operation: 'retention_delete' }),
  };
  const jobs = createJobs({ config, stores: jobStores, knowledge, extractor, observations, locks, log });
  const census = new Neo4jGraphCensus(neo4j);
  const metricSources: MetricSources = { census, turns: episodic, conversations: conversationUpkeep, jobRuns: new PgJobStore(pools.replica) };
  const opsSources: Omit<OpsSources, 'health'> = { turns: episodic, conversations: conversationUpkeep, jobRuns: new PgJobStore(pools.replica), llm: new PgUsageSink(pools.replica) };
  const createWorker = (o: { clock?: Clock; workerId?: string; jobs?: Record<JobName, JobFn>; locks?: LockService } = {}) =>
    new Worker({
      jobs: o.jobs ?? jobs,
      enabled: config.worker.jobs as JobName[],
      locks: o.locks ?? locks,
      lockTtlMs: config.worker.lockTtlMs,
      log,
      clock: o.clock ?? opts.clock,
      runLog: jobStore,
      workerId: o.workerId,
      interactive: gate,
    });
  const jobRunner: Worker = createWorker({ workerId: 'on-demand' });
  // Every store's share of a user's memory, in import order (the graph before the tables):
  // forget-user, export, import and stats go through this list and nothing else.
  const userData = [
    graph,
    turnLog.userData(),
    toolLog.userData(),
    observations.userData(),
    profileStore.userData(),
    usageSink.userData(),
    jobStore.userData(),
    shortTerm.userData(),
    settings.userData(),
    learnedInfo.userData(),
    redisKeys,
  ];
  const fence = new UserWriteFence(redis);
  const users = new UserDataStore(userData, pools.primary, auditTrail, {
    beforeErase: () => audit.flush(),
    // The user's embeddings this process holds for recall go with them (other processes drop
    // an owner not searched for ten minutes).
    afterErase: (userId) => holdVectors(userId, 'forget'),
    graceMs: config.erasure.graceMs,
    fence,
  });

  return {
    config,
    memory,
    log,
    neo4j,
    driver,
    pg: pools,
    redis,
    embedder,
    audit,
    auditReader: new PgAuditReader(pools.replica),
    backgroundEmbedder,
    gate,
    knowledgeEmbedder,
    working,
    reinforcer,
    semanticStore,
    extractor,
    observations,
    knowledge,
    locks,
    jobs,
    jobStores,
    census,
    metricSources,
    opsSources,
    createWorker,
    users,
    fence,
    poolStore,
    shortTerm,
    settings,
    async close() {
      await jobRunner.stop();
      await Promise.all([backgroundEmbedder.stop(), knowledgeEmbedder.stop()]);
      await reinforcer.close();
      await audit.close();
      await extractor.close?.();
      await closeAll();
    },
  };
}

/** One figure of a user's whole-user stats as one part counts them. */
async function userStat<T>(part: UserDataPart, userId: string, pick: (s: UserStats) => T): Promise<T> {
  const s: UserStats = { userId, nodes: {}, rows: {}, workingKeys: 0 };
  await part.stats(userId, s);
  return pick(s);
}

/** The settings that shape what is stored and recalled, recorded on every audit row. */
function auditSnapshot(config: Config, embedder: Embedder): Record<string, unknown> {
  return {
    audit_level: config.audit.level,
    embedding: { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions, mode: config.embedding.mode },
    working_ttl_seconds: config.working.ttlSeconds,
    extraction: { provider: config.extraction.provider, model: config.extraction.model, contradiction_policy: config.extraction.contradictionPolicy },
    promotion_thresholds: config.worker.promotion,
    decay: { daily_rate: config.worker.decayRate, inferred_weekly_rate: config.worker.inferredDecayRate },
  };
}
