import type { CypherRunner } from '../infra/neo4j';
import { SchemaError } from '../errors';
import { NEO4J_BACKFILLS, type Backfill } from './backfills';
import { cypherObjects, retired, type MigrationFile } from './files';
import type { MigrateOptions, MigrationReport } from './types';

const TAG = { subsystem: 'migrate', op: 'neo4j' };

export interface EmbeddingIdentity {
  provider: string;
  model: string;
  dimensions: number;
}

// Bootstrap of the ledger itself: (:SchemaMigration {version, name, checksum, applied_at}).
const ENSURE_LEDGER = 'CREATE CONSTRAINT schema_migration_version IF NOT EXISTS FOR (m:SchemaMigration) REQUIRE m.version IS UNIQUE';
// -> {version, name, checksum}
const READ_LEDGER = 'MATCH (m:SchemaMigration) RETURN m.version AS version, m.name AS name, m.checksum AS checksum ORDER BY version';
// $version, $name, $checksum -> nothing
const RECORD_MIGRATION = 'MERGE (m:SchemaMigration {version: $version}) SET m.name = $name, m.checksum = $checksum, m.applied_at = datetime()';
// -> {name} (SHOW commands cannot be combined with UNION, hence two)
const INDEX_NAMES = 'SHOW INDEXES YIELD name RETURN name';
const CONSTRAINT_NAMES = 'SHOW CONSTRAINTS YIELD name RETURN name';
// -> {name, dims}
const VECTOR_DIMS = "SHOW VECTOR INDEXES YIELD name, options RETURN name, options.indexConfig['vector.dimensions'] AS dims";
// -> {provider, model, dimensions}
const READ_EMBEDDING_LOCK = "MATCH (m:EmbeddingModel {id: 'active'}) RETURN m.provider AS provider, m.model AS model, m.dimensions AS dimensions";
// $provider, $model, $dimensions -> nothing
const WRITE_EMBEDDING_LOCK = "MERGE (m:EmbeddingModel {id: 'active'}) SET m.provider = $provider, m.model = $model, m.dimensions = $dimensions, m.recorded_at = datetime()";

/**
 * Applies pending Cypher migrations in order (each with its backfill, if it has one) and
 * records each in the ledger. Every statement is `IF NOT EXISTS` / `IF EXISTS`, so a run
 * interrupted midway is finished by the next one, and objects dropped by hand are recreated
 * by re-running the statement that creates them (unless `check` is set, which only reports).
 */
export async function migrateNeo4j(
  runner: CypherRunner,
  files: MigrationFile[],
  embedding: EmbeddingIdentity,
  opts: MigrateOptions,
  backfills: Record<number, Backfill> = NEO4J_BACKFILLS,
): Promise<MigrationReport> {
  const report: MigrationReport = { store: 'neo4j', applied: [], pending: [], missing: [], changed: [], notes: [] };
  if (!opts.check) await runner.write(ENSURE_LEDGER, {}, TAG);
  const ledger = new Map((await runner.read<{ version: number; name: string; checksum: string }>(READ_LEDGER, {}, TAG)).map((r) => [r.version, r]));

  const newest = Math.max(0, ...files.map((f) => f.version));
  const ahead = [...ledger.keys()].filter((v) => v > newest);
  if (ahead.length > 0) {
    throw new SchemaError(`the Neo4j schema is newer than this code (migration ${Math.max(...ahead)} > ${newest}); upgrade Mnemograph before starting it against this database`);
  }

  await checkEmbeddingLock(runner, embedding);

  for (const file of files) {
    const row = ledger.get(file.version);
    const label = `${String(file.version).padStart(3, '0')}_${file.name}`;
    if (row) {
      if (row.checksum !== file.checksum) report.changed.push(label);
      continue;
    }
    if (opts.check) {
      report.pending.push(label);
      continue;
    }
    for (const statement of file.statements) await runner.write(statement, {}, { ...TAG, op: label });
    await backfills[file.version]?.(runner);
    await runner.write(RECORD_MIGRATION, { version: file.version, name: file.name, checksum: file.checksum }, TAG);
    report.applied.push(label);
  }

  // An object a later file dropped is not missing; a missing one is recreated by the statement
  // that creates it (not its whole file, which would bring back what a later file dropped).
  if (opts.check && opts.ledgerOnly) return report;
  const dropped = retired(files);
  const existing = new Set([...(await runner.read<{ name: string }>(INDEX_NAMES, {}, TAG)), ...(await runner.read<{ name: string }>(CONSTRAINT_NAMES, {}, TAG))].map((r) => r.name));
  for (const file of files) {
    if (!ledger.has(file.version)) continue; // pending (check mode) or just applied
    const missing = file.objects.filter((o) => !existing.has(o) && !dropped.has(o));
    if (missing.length === 0) continue;
    if (opts.check) {
      report.missing.push(...missing);
      continue;
    }
    for (const statement of file.statements) {
      if (cypherObjects(statement).some((o) => missing.includes(o))) await runner.write(statement, {}, { ...TAG, op: `repair_${file.name}` });
    }
    report.notes.push(`recreated ${missing.join(', ')}`);
  }

  if (!opts.check) {
    await runner.write(WRITE_EMBEDDING_LOCK, { ...embedding }, TAG);
  }
  return report;
}

/**
 * The embedding-dimension lock: vectors of one model only. Refuses a configured model or
 * dimension that differs from the one the data was embedded with.
 */
export async function checkEmbeddingLock(runner: CypherRunner, embedding: EmbeddingIdentity): Promise<void> {
  const lock = await readEmbeddingLock(runner);
  if (lock && (lock.model !== embedding.model || lock.dimensions !== embedding.dimensions)) {
    throw new SchemaError(
      `Neo4j holds embeddings from ${lock.provider}/${lock.model} (${lock.dimensions}-d) but ${embedding.provider}/${embedding.model} (${embedding.dimensions}-d) is configured; ` +
        `set EMBEDDING_PROVIDER/EMBEDDING_MODEL back, or run \`mnemograph reindex\` to re-embed everything with the new model`,
      { stored: lock, configured: embedding },
    );
  }
  const dims = await runner.read<{ name: string; dims: number }>(VECTOR_DIMS, {}, TAG);
  const wrong = dims.filter((d) => Number(d.dims) !== embedding.dimensions);
  if (wrong.length > 0) {
    throw new SchemaError(`vector index ${wrong[0]!.name} has ${wrong[0]!.dims} dimensions but the configured model has ${embedding.dimensions}; run \`mnemograph reindex\``, { indexes: wrong });
  }
}

/** The model the stored embeddings come from, as the lock records it; undefined before the first migration. */
export async function readEmbeddingLock(runner: CypherRunner): Promise<EmbeddingIdentity | undefined> {
  return (await runner.read<EmbeddingIdentity>(READ_EMBEDDING_LOCK, {}, TAG))[0];
}

/** The dimension of every vector index (name, dims), for `mnemograph reindex`'s check. */
export function vectorIndexDimensions(runner: CypherRunner): Promise<Array<{ name: string; dims: number }>> {
  return runner.read<{ name: string; dims: number }>(VECTOR_DIMS, {}, TAG);
}

/** Records `embedding` as the model the data is embedded with (moves the lock; reindex only). */
export async function recordEmbeddingModel(runner: CypherRunner, embedding: EmbeddingIdentity): Promise<void> {
  await runner.write(WRITE_EMBEDDING_LOCK, { provider: embedding.provider, model: embedding.model, dimensions: embedding.dimensions }, TAG);
}
