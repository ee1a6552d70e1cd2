import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * A scratch database migrated only with the SQL migrations numbered before `version` (e.g.
 * '011'), for a test of how a migration upgrades what was written before it; `migrateRest`
 * applies the others (the repository's, as `mnemograph migrate` does).
 */
export async function scratchDatabaseBefore(prefix: string, version: string): Promise<ScratchDatabase & { migrateRest(): Promise<void> }> {
  const sql = join(__dirname, '..', '..', 'sql');
  const before = mkdtempSync(join(tmpdir(), 'mnemograph-sql-'));
  mkdirSync(join(before, 'sql'));
  for (const f of readdirSync(sql).filter((f) => f < version)) copyFileSync(join(sql, f), join(before, 'sql', f));
  const db = await scratchDatabase(prefix, { root: before });
  return {
    ...db,
    async migrateRest() {
      await runPostgresMigrations(db.pool, testConfig({ DATABASE_URL: db.url, DATABASE_READ_URL: db.url }), { check: false });
    },
  };
}
