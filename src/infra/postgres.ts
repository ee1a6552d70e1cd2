import pg from 'pg';
import { StoreUnavailableError, MnemographError, errorMessage } from '../errors';

/** The part of pg we use: enough for a Pool, a PoolClient, or a test double. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

export function createPgPool(url: string, poolSize: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, application_name: 'mnemograph' });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
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
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || /timeout|ECONNREFUSED|terminat/i.test(msg)) {
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
