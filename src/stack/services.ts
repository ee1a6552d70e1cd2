import pg from 'pg';
import { Redis } from 'ioredis';
import type { Config } from '../config';
import { StackError } from '../errors';
import { redactPgUrl } from '../infra/postgres';
import { isLocalHost, run, waitFor } from './process';

// The machine's own services (see ENVIRONMENT.md): started when they do not answer.
const PG_START = ['bash', ['-c', 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql | head -1) main start']] as const;
const REDIS_START = [
  'redis-server',
  ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', '6379', '--save', '', '--appendonly', 'no', '--dir', '/var/lib/redis', '--logfile', '/var/log/redis/ci.log'],
] as const;

/** Connects to the maintenance database of the server DATABASE_URL names; resolves its latency. */
export async function pingPostgres(url: string): Promise<number> {
  const t0 = performance.now();
  await withPostgres(url, (client) => client.query('SELECT 1'));
  return performance.now() - t0;
}

/** The server version of the PostgreSQL at `url`, e.g. "15.10 (Debian 15.10-0+deb12u1)". */
export async function postgresVersion(url: string): Promise<string> {
  return withPostgres(url, async (client) => (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown');
}

/** One short-lived connection (2 s to connect), closed after `work`. */
async function withPostgres<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function pingRedis(url: string): Promise<number> {
  const t0 = performance.now();
  await withRedis(url, (client) => client.ping());
  return performance.now() - t0;
}

/** The version of the Redis at `url` (INFO server's redis_version). */
export async function redisVersion(url: string): Promise<string> {
  return withRedis(url, async (client) => /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown');
}

/** One connection without retries (1.5 s to connect), closed after `work`. */
async function withRedis<T>(url: string, work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1_500, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}

/** `url` with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Runs one statement on the server of `url`, in its `postgres` database (CREATE / DROP DATABASE). */
export async function onServer(url: string, sql: string): Promise<void> {
  await withPostgres(withDatabase(url, 'postgres'), (c) => c.query(sql));
}

/** Makes sure PostgreSQL answers (starting the local cluster if needed) and the project's database exists. */
export async function postgresUp(config: Config): Promise<'running' | 'started'> {
  const url = new URL(config.postgres.url);
  const database = decodeURIComponent(url.pathname.slice(1)) || 'postgres';
  const admin = withDatabase(config.postgres.url, 'postgres');
  let state: 'running' | 'started' = 'running';
  if (
    !(await pingPostgres(admin).then(
      () => true,
      () => false,
    ))
  ) {
    if (!isLocalHost(url.hostname)) throw new StackError(`PostgreSQL at ${redactPgUrl(admin)} does not answer and is not local; start it or fix DATABASE_URL`);
    run(PG_START[0], [...PG_START[1]], 'starting PostgreSQL', { missingHint: 'install PostgreSQL (apt-get install postgresql)' });
    if (!(await waitFor(() => pingPostgres(admin).then(() => true), 30_000))) {
      throw new StackError(`PostgreSQL was started but does not answer at ${redactPgUrl(admin)}; see /var/log/postgresql`);
    }
    state = 'started';
  }
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
  return state;
}

export async function redisUp(config: Config): Promise<'running' | 'started'> {
  if (config.redis.clusterNodes) return 'running';
  if (
    await pingRedis(config.redis.url).then(
      () => true,
      () => false,
    )
  )
    return 'running';
  const url = new URL(config.redis.url);
  if (!isLocalHost(url.hostname)) throw new StackError(`Redis at ${config.redis.url} does not answer and is not local; start it or fix REDIS_URL`);
  run(REDIS_START[0], [...REDIS_START[1]], 'starting Redis', { missingHint: 'install Redis (apt-get install redis-server)' });
  if (!(await waitFor(() => pingRedis(config.redis.url).then(() => true), 15_000))) {
    throw new StackError(`Redis was started but does not answer at ${config.redis.url}; see /var/log/redis/ci.log`);
  }
  return 'started';
}
