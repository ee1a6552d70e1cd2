/**
 * The cost of the audit hash chain (sql/007, sql/011) on the write path: audit rows/s through
 * PgAuditLogger with the chain trigger as it is (days linked, heads sealed), with sql/007's
 * trigger (one chain per day, no seal) put back for the run, and without a trigger, side by
 * side. Runs on a scratch database of its own (created, migrated, dropped), where the trigger
 * is switched between runs; runs alternate (chained, sql/007, unchained, chained, ...) so
 * drift in the machine's load hits all alike. Each run writes the same rows (one writer; then two writers at once, the
 * server and the worker, which contend for the day's chain head).
 * `npx tsx bench/audit-write.ts [--rows N] [--runs N]` writes bench/results/audit-write.json.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PgAuditLogger, withActor } from '../src/audit';
import { applyEnvFile, loadConfig } from '../src/config';
import { createLogger } from '../src/infra/logger';
import { createPgPool } from '../src/infra/postgres';
import { runPostgresMigrations } from '../src/migrate';
import { onServer, withDatabase } from '../src/stack/services';

export interface AuditWriteOptions {
  /** Rows per run (default 20,000). */
  rows?: number;
  /** Runs per mode and writer count (default 3). */
  runs?: number;
  /** The logger's batch size (default 200, the service's). */
  batchSize?: number;
  /** The PostgreSQL server to create the scratch database on (default DATABASE_URL). */
  databaseUrl?: string;
}

const silent = createLogger('silent');
type Mode = 'chained' | 'chained_sql007' | 'unchained';
const MODES: Mode[] = ['chained', 'chained_sql007', 'unchained'];

/** sql/007's audit_chain_link, as that file creates it, to put back for the chained_sql007 runs. */
function sql007Trigger(): string {
  const text = readFileSync(join(__dirname, '..', 'sql', '007_audit_chain.sql'), 'utf8');
  const body = /CREATE FUNCTION audit_chain_link\(\)[\s\S]*?\n\$\$;/.exec(text);
  if (!body) throw new Error('sql/007_audit_chain.sql no longer creates audit_chain_link()');
  return body[0].replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
}

/** Audit rows/s with and without the chain trigger, alternating runs on a scratch database. */
export async function measureAuditWrites(opts: AuditWriteOptions = {}): Promise<Record<string, unknown>> {
  const rows = opts.rows ?? 20_000;
  const runs = opts.runs ?? 3;
  const batchSize = opts.batchSize ?? 200;
  const base = opts.databaseUrl ?? loadConfig(process.env).postgres.url;
  const name = `mnemograph_bench_audit_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  await onServer(base, `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = withDatabase(base, name);
  const pool = createPgPool(url, 8);
  const spool = mkdtempSync(join(tmpdir(), 'mnemograph-bench-audit-'));
  try {
    await runPostgresMigrations(pool, loadConfig({ ...process.env, DATABASE_URL: url, DATABASE_READ_URL: url }), { check: false });
    const runsOf = (): Record<string, number[]> => ({ one_writer: [], two_writers: [] });
    const results: Record<Mode, Record<string, number[]>> = { chained: runsOf(), chained_sql007: runsOf(), unchained: runsOf() };
    const current = (await pool.query<{ def: string }>("SELECT pg_get_functiondef('audit_chain_link'::regproc) AS def")).rows[0]!.def;
    const old = sql007Trigger();
    for (let run = 0; run < runs; run++) {
      for (const mode of MODES) {
        await pool.query(`ALTER TABLE memory_audit_log ${mode === 'unchained' ? 'DISABLE' : 'ENABLE'} TRIGGER audit_zz_chain_link`);
        await pool.query(mode === 'chained_sql007' ? old : current); // today's head exists from the first chained run
        results[mode].one_writer!.push(await rowsPerSecond(url, [rows], batchSize, spool));
        results[mode].two_writers!.push(await rowsPerSecond(url, [rows / 2, rows / 2], batchSize, spool));
      }
    }
    await pool.query(current);
    await pool.query('ALTER TABLE memory_audit_log ENABLE TRIGGER audit_zz_chain_link');
    // The switch must have reached every partition: the unchained runs' rows carry no hash.
    const counted = (await pool.query<{ chained: string; unchained: string }>('SELECT count(row_hash) AS chained, count(*) - count(row_hash) AS unchained FROM memory_audit_log')).rows[0]!;
    if (Number(counted.chained) !== rows * runs * 4 || Number(counted.unchained) !== rows * runs * 2) {
      throw new Error(`expected ${rows * runs * 4} chained and ${rows * runs * 2} unchained rows, found ${counted.chained} and ${counted.unchained}`);
    }
    const summary = (mode: Mode, w: string) => median(results[mode][w]!);
    const cost = (mode: Mode, w: string) => round(1 - summary(mode, w) / summary('unchained', w), 3);
    const perMode = (w: string) => Object.fromEntries(MODES.map((m) => [m, summary(m, w)]));
    return {
      // The load average at the end: other work on the machine slows both modes, and the ratio less than the rates.
      machine: { cores: cpus().length, node: process.version, load_average_1m: round(loadavg()[0]!, 1) },
      rows_per_run: rows,
      runs_per_mode: runs,
      batch_size: batchSize,
      rows_per_second: { one_writer: perMode('one_writer'), two_writers: perMode('two_writers') },
      chain_cost_fraction: {
        one_writer: { chained: cost('chained', 'one_writer'), chained_sql007: cost('chained_sql007', 'one_writer') },
        two_writers: { chained: cost('chained', 'two_writers'), chained_sql007: cost('chained_sql007', 'two_writers') },
      },
      runs: results,
      note: "median of alternating runs; chained = the trigger as migrated (sql/011: days linked, heads sealed), chained_sql007 = sql/007's trigger put back (one chain per day, no seal); rows/s from the first logWrite to the flush that wrote the last row, through PgAuditLogger (batched multi-row INSERTs); two_writers = two loggers on two pools at once",
    };
  } finally {
    await pool.end();
    rmSync(spool, { recursive: true, force: true });
    await onServer(base, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  }
}

/** Writes `counts[i]` rows through writer i (each its own pool and logger), all at once; returns total rows/s. */
async function rowsPerSecond(url: string, counts: number[], batchSize: number, spoolDir: string): Promise<number> {
  const writers = counts.map(() => {
    const pool = createPgPool(url, 2);
    return { pool, log: new PgAuditLogger(pool, { level: 'reads', spoolDir, database: url, configSnapshot: { bench: true }, batchSize, flushIntervalMs: 60_000 }, silent) };
  });
  try {
    const t0 = performance.now();
    await Promise.all(
      writers.map(({ log }, w) =>
        withActor({ tenantId: 'bench', keyId: `k${w}`, agentId: 'planner', surface: 'http', requestId: randomUUID() }, async () => {
          for (let i = 0; i < counts[w]!; i++) {
            const userId = `bench.u${i % 50}`;
            if (i % 2 === 0) log.logWrite({ operation: 'store', memoryType: 'episodic', userId, channel: '_global', conversationId: `c${i % 200}`, affectedIds: [`c${i % 200}:${i}`], latencyMs: 4 });
            else
              log.logRead({
                operation: 'remember',
                memoryType: 'system',
                userId,
                channel: '_global',
                query: `what did I say about topic ${i}?`,
                channelsSearched: ['_global'],
                resultCount: 3,
                affectedIds: [`c1:${i}`, `f${i}`, `e${i}`],
                latencyMs: 12,
              });
            if (i % batchSize === 0) await new Promise((r) => setImmediate(r)); // let batches flush while rows are queued, as a server does
          }
          await log.flush();
        }),
      ),
    );
    return Math.round(counts.reduce((a, b) => a + b, 0) / ((performance.now() - t0) / 1000));
  } finally {
    for (const w of writers) {
      await w.log.close();
      await w.pool.end();
    }
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : Math.round((s[mid - 1]! + s[mid]!) / 2);
}

function round(x: number, digits: number): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

function arg(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? Number(process.argv[i + 1]) : undefined;
}

if (require.main === module) {
  applyEnvFile(process.env);
  measureAuditWrites({ rows: arg('rows'), runs: arg('runs') }).then(
    (result) => {
      mkdirSync(join(__dirname, 'results'), { recursive: true });
      const figures = { generated_at: new Date().toISOString(), ...result };
      writeFileSync(join(__dirname, 'results', 'audit-write.json'), JSON.stringify(figures, null, 2) + '\n');
      // The same figures as the `writePath` section of bench/results/audit.json (bench/audit.ts keeps it on its reruns).
      const auditJson = join(__dirname, 'results', 'audit.json');
      const audit = existsSync(auditJson) ? (JSON.parse(readFileSync(auditJson, 'utf8')) as Record<string, unknown>) : {};
      writeFileSync(auditJson, JSON.stringify({ ...audit, writePath: figures }, null, 2) + '\n');
      console.log(JSON.stringify(result.rows_per_second), JSON.stringify(result.chain_cost_fraction));
      console.log('wrote bench/results/audit-write.json and the writePath section of bench/results/audit.json');
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
