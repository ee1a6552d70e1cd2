/** What a migration run or check found, per database. */
export interface MigrationReport {
  store: 'neo4j' | 'postgres';
  applied: string[];
  pending: string[];
  /** Objects a migration creates that are missing from the database. */
  missing: string[];
  /** Applied migrations whose file changed since (checksum differs). */
  changed: string[];
  notes: string[];
}

export function hasDrift(r: MigrationReport): boolean {
  return r.pending.length + r.missing.length + r.changed.length > 0;
}

export interface MigrateOptions {
  /** Only report (pending, changed, missing); apply nothing. */
  check: boolean;
  /** With `check`: compare the ledgers only, not every object (the start-up check; `migrate --check` looks at objects). */
  ledgerOnly?: boolean;
}
