import type pg from 'pg';
import { SchemaError } from '../errors';
import type { MigrationFile } from './files';
import type { MigrateOptions, MigrationReport } from './types';

const LOCK_KEY = 'mnemograph.migrate';
// The ledger of seed 003, with a checksum so edited migrations show up as drift.
const ENSURE_LEDGER = `CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER PRIMARY KEY, description TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT NOW())`;
// -> {version, description, checksum}
const READ_LEDGER = 'SELECT version, description, checksum FROM schema_version ORDER BY version';
// $1 name -> {found}: a table, index, function or trigger of that name in the current schema
const OBJECT_EXISTS = `SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = $1 AND relnamespace = current_schema()::regnamespace)
  OR EXISTS (SELECT 1 FROM pg_proc WHERE proname = $1 AND pronamespace = current_schema()::regnamespace)
  OR EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE t.tgname = $1 AND c.relnamespace = current_schema()::regnamespace) AS found`;
// $1 days ahead -> {created}
const ENSURE_PARTITIONS = "SELECT ensure_audit_partitions((now() AT TIME ZONE 'UTC')::date, $1::int + 1) AS created";

/**
 * Applies pending SQL migrations in one transaction under an advisory lock, so two
 * migrators never interleave and a failure leaves the database as it was. Refuses a
 * database whose ledger is ahead of this code. `check` only reports.
 */
export async function migratePostgres(pool: pg.Pool, files: MigrationFile[], opts: MigrateOptions & { partitionDaysAhead: number }): Promise<MigrationReport> {
  const report: MigrationReport = { store: 'postgres', applied: [], pending: [], missing: [], changed: [], notes: [] };
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [LOCK_KEY]);
    const hasLedger = (await client.query<{ t: string | null }>("SELECT to_regclass('schema_version')::text AS t")).rows[0]?.t != null;
    if (!hasLedger && !opts.check) await client.query(ENSURE_LEDGER);
    const ledgerRows = hasLedger || !opts.check ? (await client.query<{ version: number; checksum: string }>(READ_LEDGER)).rows : [];
    const ledger = new Map(ledgerRows.map((r) => [r.version, r]));

    const newest = Math.max(0, ...files.map((f) => f.version));
    const ahead = [...ledger.keys()].filter((v) => v > newest);
    if (ahead.length > 0) {
      throw new SchemaError(`the PostgreSQL schema is newer than this code (migration ${Math.max(...ahead)} > ${newest}); upgrade Mnemograph before starting it against this database`);
    }

    for (const file of files) {
      const label = `${String(file.version).padStart(3, '0')}_${file.name}`;
      const row = ledger.get(file.version);
      if (row) {
        if (row.checksum !== file.checksum) report.changed.push(label);
        if (opts.check && opts.ledgerOnly) continue;
        for (const object of file.objects) {
          const found = (await client.query<{ found: boolean }>(OBJECT_EXISTS, [object])).rows[0]?.found;
          if (!found) report.missing.push(object);
        }
        continue;
      }
      if (opts.check) {
        report.pending.push(label);
        continue;
      }
      for (const statement of file.statements) await client.query(statement);
      await client.query('INSERT INTO schema_version (version, description, checksum) VALUES ($1, $2, $3)', [file.version, file.name, file.checksum]);
      report.applied.push(label);
    }

    if (!opts.check && ledger.size + report.applied.length > 0) {
      const created = (await client.query<{ created: number }>(ENSURE_PARTITIONS, [opts.partitionDaysAhead])).rows[0]?.created ?? 0;
      if (created > 0) report.notes.push(`created ${created} audit partitions`);
    }
    await client.query(opts.check ? 'ROLLBACK' : 'COMMIT');
    return report;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
