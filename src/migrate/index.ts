import { join } from 'node:path';
import type pg from 'pg';
import type { Config } from '../config';
import type { CypherRunner } from '../infra/neo4j';
import { SchemaError } from '../errors';
import { mapPgError } from '../infra/postgres';
import { loadMigrations } from './files';
import { migrateNeo4j } from './neo4j-migrator';
import { migratePostgres } from './pg-migrator';
import type { MigrateOptions, MigrationReport } from './types';

export { hasDrift, type MigrationReport } from './types';

export const REPO_ROOT = join(__dirname, '..', '..');

/** Runs (or, with `check`, only verifies) the Neo4j and PostgreSQL migrations. */
export async function runMigrations(deps: { neo4j: CypherRunner; pg: pg.Pool; config: Config }, opts: MigrateOptions & { root?: string }): Promise<MigrationReport[]> {
  const root = opts.root ?? REPO_ROOT;
  const { config } = deps;
  const cypherFiles = loadMigrations(join(root, 'cypher'), 'cypher', { EMBEDDING_DIMENSIONS: config.embedding.dimensions });
  const neo = await migrateNeo4j(deps.neo4j, cypherFiles, { provider: config.embedding.provider, model: config.embedding.model, dimensions: config.embedding.dimensions }, opts);
  return [neo, await runPostgresMigrations(deps.pg, config, { ...opts, root })];
}

/**
 * The PostgreSQL half of `runMigrations` alone, for commands that need only PostgreSQL's
 * tables before Neo4j runs (`mnemograph init` creating the first API key).
 */
export async function runPostgresMigrations(pool: pg.Pool, config: Config, opts: MigrateOptions & { root?: string }): Promise<MigrationReport> {
  const sqlFiles = loadMigrations(join(opts.root ?? REPO_ROOT, 'sql'), 'sql', { AUDIT_PARTITION_DAYS_AHEAD: config.audit.partitionDaysAhead });
  return migratePostgres(pool, sqlFiles, { ...opts, partitionDaysAhead: config.audit.partitionDaysAhead }).catch((err: unknown) => {
    throw mapPgError(err, config.postgres.url);
  });
}

/**
 * Refuses to start against databases that lack a migration this code needs (a fresh
 * database, or an upgrade not yet migrated), naming the command that fixes it, instead of
 * failing later on the first missing table or index. Also checks the embedding-model lock.
 */
export async function assertMigrated(deps: { neo4j: CypherRunner; pg: pg.Pool; config: Config }, root?: string): Promise<void> {
  const pending = (await runMigrations(deps, { check: true, ledgerOnly: true, root })).flatMap((r) => r.pending.map((p) => `${r.store} ${p}`));
  if (pending.length > 0) {
    throw new SchemaError(
      `the databases are not migrated: ${pending.length} migration(s) pending (${pending.join(', ')}); run \`mnemograph migrate\` (npm run migrate), or start with MIGRATE_ON_START=true`,
      { pending },
    );
  }
}
export { Neo4jGraphCensus } from './graph-census';
export { reindexAll } from './reembed';
export { checkEmbeddingLock, readEmbeddingLock, vectorIndexDimensions } from './neo4j-migrator';
