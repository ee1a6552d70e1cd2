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
