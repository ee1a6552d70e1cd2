import { resolve } from 'node:path';
import type { Driver } from 'neo4j-driver';
import type pg from 'pg';
import { PgAuditLogger, type AuditLogger } from './audit';
import type { Config } from './config';
import { createEmbedder, type Embedder } from './embedding';
import { BackgroundEmbedder, Neo4jEpisodicStore, PgTurnLog } from './episodic';
import { createLogger, type Logger } from './infra/logger';
import { createNeo4jDriver, Neo4jExecutor, waitForNeo4j } from './infra/neo4j';
import { createPgPools } from './infra/postgres';
import { createRedis, type RedisClient } from './infra/redis';
import { AgentMemory } from './memory/agent-memory';
import { checkEmbeddingLock, REPO_ROOT, runMigrations } from './migrate';
import { FailoverWorkingStore, MemoryWorkingStore, RedisWorkingStore } from './working';

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
  backgroundEmbedder: BackgroundEmbedder;
  working: FailoverWorkingStore;
  close(): Promise<void>;
}

export interface CreateOptions {
  log?: Logger;
  /** Replace the configured embedder (tests, benchmarks with cached vectors). */
  embedder?: Embedder;
  /** Start the background embedder loop (default true). */
  backgroundEmbedding?: boolean;
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
    await Promise.allSettled([driver.close(), pools.primary.end(), pools.replica !== pools.primary ? pools.replica.end() : undefined, embedder.close()]);
  };

  try {
    await waitForNeo4j(driver, { uri: config.neo4j.uri, database: config.neo4j.database }, 5_000);
    if (config.migrateOnStart) await runMigrations({ neo4j, pg: pools.primary, config }, { check: false, root: REPO_ROOT });
    await checkEmbeddingLock(neo4j, { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions });
  } catch (err) {
    await closeAll();
    throw err;
  }

  const episodic = new Neo4jEpisodicStore(neo4j);
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
      spoolDir: resolve(REPO_ROOT, config.audit.spoolDir),
      configSnapshot: auditSnapshot(config, embedder),
    },
    log,
  );
  const backgroundEmbedder = new BackgroundEmbedder(episodic, embedder, log);
  if (opts.backgroundEmbedding !== false) backgroundEmbedder.start();

  const memory = new AgentMemory({
    episodic,
    turnLog: new PgTurnLog(pools.primary),
    working,
    embedder,
    backgroundEmbedder,
    audit,
    log,
    embeddingMode: config.embedding.mode,
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
    backgroundEmbedder,
    working,
    async close() {
      await backgroundEmbedder.stop();
      await audit.close();
      await closeAll();
    },
  };
}

/** The settings that shape what is stored and recalled, recorded on every audit row. */
function auditSnapshot(config: Config, embedder: Embedder): Record<string, unknown> {
  return {
    audit_level: config.audit.level,
    embedding: { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions, mode: config.embedding.mode },
    working_ttl_seconds: config.working.ttlSeconds,
  };
}
