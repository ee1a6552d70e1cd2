import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPgPool } from '../../src/infra/postgres';
import { runPostgresMigrations } from '../../src/migrate';
import { onServer, withDatabase } from '../../src/stack/services';
import { testConfig } from './stack';

/** A PostgreSQL database of its own, migrated, for a test that breaks what it holds on purpose. */
export interface ScratchDatabase {
  url: string;
  pool: pg.Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * Creates and migrates a fresh database next to the test database. For tests that tamper
 * with rows (the audit chain): the shared test database must stay valid for every other suite.
 * `root`: a folder whose `sql/` holds the migrations to apply (default the repository's).
 */
export async function scratchDatabase(prefix = 'scratch', opts: { root?: string } = {}): Promise<ScratchDatabase> {
  const base = testConfig().postgres.url;
  const name = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = withDatabase(base, name);
  await onServer(base, `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const pool = createPgPool(url, 8);
  await runPostgresMigrations(pool, testConfig({ DATABASE_URL: url, DATABASE_READ_URL: url }), { check: false, root: opts.root });
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      await onServer(base, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    },
  };
}
