import type { Config } from '../config';
import { createNeo4jDriver, Neo4jExecutor, waitForNeo4j } from '../infra/neo4j';
import { createPgPool } from '../infra/postgres';
import { hasDrift, runMigrations } from '../migrate';

/** `mnemograph migrate [--check]`: prints one line per store; returns the exit code. */
export async function migrateCommand(config: Config, check: boolean): Promise<number> {
  const driver = createNeo4jDriver(config.neo4j);
  const pool = createPgPool(config.postgres.url, 2);
  try {
    await waitForNeo4j(driver, { uri: config.neo4j.uri, database: config.neo4j.database }, 5_000);
    const reports = await runMigrations({ neo4j: new Neo4jExecutor(driver, config.neo4j.database, config.neo4j.uri), pg: pool, config }, { check });
    let drift = false;
    for (const r of reports) {
      const parts = [
        r.applied.length ? `applied ${r.applied.join(', ')}` : '',
        r.pending.length ? `pending ${r.pending.join(', ')}` : '',
        r.missing.length ? `missing ${r.missing.join(', ')}` : '',
        r.changed.length ? `changed since applied ${r.changed.join(', ')}` : '',
        ...r.notes,
      ].filter(Boolean);
      console.log(`${r.store}: ${parts.length ? parts.join('; ') : 'up to date'}`);
      drift ||= hasDrift(r);
    }
    return check && drift ? 1 : 0;
  } finally {
    await driver.close();
    await pool.end();
  }
}
