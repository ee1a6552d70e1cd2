import pg from 'pg';
import { StoreUnavailableError, MnemographError, errorMessage } from '../errors';

/** The part of pg we use: enough for a Pool, a PoolClient, or a test double. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * A pool whose `query` and `connect` fail with typed errors (mapPgError): an outage is a
 * StoreUnavailableError (503 at the API, retried by the client), never a bare driver error
 * (500). Queries on a checked-out client (transactions) keep pg's errors; their callers
 * roll back and rethrow, and the API maps what reaches it (isPgUnavailable).
 */
export function createPgPool(url: string, poolSize: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, application_name: 'mnemograph' });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  const mapped = (result: unknown) => (result instanceof Promise ? result.catch((err: unknown) => Promise.reject(mapPgError(err, url))) : result);
  // Only the promise forms are mapped; callback forms (unused here) pass through.
  pool.query = ((...args: unknown[]) => mapped(query(...args))) as typeof pool.query;
  pool.connect = ((...args: unknown[]) => mapped(connect(...args))) as typeof pool.connect;
  return pool;
}

// SQLSTATE classes and codes of a server that is unreachable, restarting or full: 08 connection
// exception, 57P01-57P03 admin shutdown / crash shutdown / cannot connect now, 53300 too many connections.
const UNAVAILABLE_STATES = /^(08...|57P0[1-3]|53300)$/;

/** Whether a pg (or socket) error means PostgreSQL is away for now, not that the query is wrong. */
export function isPgUnavailable(err: unknown): boolean {
  const raw = (err as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  const msg = errorMessage(err);
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ENOTFOUND' ||
    code === 'ETIMEDOUT' ||
    code === 'EPIPE' ||
    UNAVAILABLE_STATES.test(code) ||
    /timeout|ECONNREFUSED|ECONNRESET|terminat|Connection ended|not queryable|shutting down|starting up/i.test(msg)
  );
}

/** What the pools are built from (`Config['postgres']`; declared here so drivers do not depend on config). */
export interface PgSettings {
  url: string;
  readUrl?: string;
  poolSize: number;
}

/** Writer pool and, when configured, a read-replica pool for analytical reads. */
export function createPgPools(config: PgSettings): { primary: pg.Pool; replica: pg.Pool } {
  const primary = createPgPool(config.url, config.poolSize);
  const replica = config.readUrl ? createPgPool(config.readUrl, config.poolSize) : primary;
  return { primary, replica };
}

/** Maps a pg error to a typed error with the setting and fix named. */
export function mapPgError(err: unknown, url: string): MnemographError {
  if (err instanceof MnemographError) return err;
  const code = (err as { code?: string }).code ?? '';
  const msg = errorMessage(err);
  const where = redactPgUrl(url);
  if (isPgUnavailable(err)) {
    return new StoreUnavailableError('postgres', `PostgreSQL at ${where} is unreachable (${msg}); start it with \`npm run stack:up\` or fix DATABASE_URL`, { pgCode: code }, err);
  }
  if (code === '3D000') {
    return new StoreUnavailableError('postgres', `PostgreSQL database in ${where} does not exist; run \`npm run stack:up\` (creates it) or fix DATABASE_URL`, { pgCode: code }, err);
  }
  if (code === '28P01' || code === '28000') {
    return new StoreUnavailableError('postgres', `PostgreSQL at ${where} rejected the credentials; fix DATABASE_URL`, { pgCode: code }, err);
  }
  return new MnemographError('POSTGRES_FAILED', 'system', `PostgreSQL query failed: ${msg}`, { pgCode: code }, { cause: err });
}

export function redactPgUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:<redacted>@');
}
