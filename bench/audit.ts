/**
 * `npm run bench:audit [-- --rows N --days D --runs R --refill]`: the audit log's read side
 * at scale. A scratch database (BENCH_AUDIT_DATABASE_URL, else DATABASE_URL's with
 * `_bench_audit` appended; created and migrated here, never the service's own) is filled
 * with N audit rows (default 1M) over D daily partitions (default 30) by one SQL statement,
 * and kept for the next run (--refill regenerates). Then:
 * - export: every row of the log as CSV through the export path the HTTP route uses
 *   (PgAuditReader.stream, a server-side cursor, into exportStream's csv-stringify, into a
 *   byte-counting sink; without the HTTP hop), R runs: rows/s, MB/s, and the process's
 *   memory while it runs (RSS and heap high-water, sampled every 20 ms; also
 *   process.resourceUsage().maxRSS for the whole process). Memory must stay bounded: the run
 *   fails if the heap grows by more than 256 MB or RSS passes 512 MB while hundreds of MB of
 *   CSV go through.
 * - query: p50/p95 of GET /v1/audit's reader (PgAuditReader.page, 100 rows) for filter shapes
 *   a reviewer uses, on the same data.
 * Writes bench/results/audit.json; the `writePath` section is left to bench/audit-write.ts
 * (the hash chain's cost on the write path), which this script keeps when it rewrites the file.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { parseArgs } from 'node:util';
import { applyEnvFile, loadConfig } from '../src/config';
import { runPostgresMigrations } from '../src/migrate';
import { withDatabase } from '../src/stack/services';
import { exportStream, PgAuditReader, type AuditFilter, type AuditScope } from '../src/audit';
import { percentiles } from './recall-metrics';

const RESULTS = join(__dirname, 'results', 'audit.json');
const TENANTS = 10;
// Retaining the rows would take well over 1 GB (1M row objects); the streams' buffers and
// uncollected garbage stay far below these.
const HEAP_GROWTH_LIMIT = 256 * 1024 * 1024;
const RSS_LIMIT = 512 * 1024 * 1024;

// -> {n}: rows in the scratch log
const COUNT = 'SELECT count(*)::int AS n FROM memory_audit_log';
// $1 first day, $2 days -> partitions created
const PARTITIONS = 'SELECT ensure_audit_partitions($1::date, $2::int)';
// $1 rows, $2 days: N rows spread evenly over the last D days (newest a minute ago) across
// 10 tenants of 100 users, 3 keys each, 7 agents (a third of rows without one), 4 surfaces,
// 5 channels; 30% reads (a query, 2 channels searched, returned ids), 1% failures.
const FILL = `INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id, conversation_id, source_channel, target_channels,
  affected_ids, query_text, result_count, latency_ms, success, error_message, tenant_id, key_id, agent_id, surface, request_id, metadata)
SELECT now() - interval '1 minute' - (i * ($2::float8 * 86400 / $1::int)) * interval '1 second',
  CASE WHEN (i / 10) % 10 < 3 THEN 'remember' ELSE (ARRAY['store_turn','store_fact','upsert_entity','retract_fact','add_goal','store_turn','store_turn'])[1 + i % 7] END,
  (ARRAY['episodic','semantic','procedural','working'])[1 + (i / 3) % 4],
  'bench-t' || (i % ${TENANTS}) || '.user-' || (i / ${TENANTS}) % 100,
  'bench-t' || (i % ${TENANTS}) || '.conv-' || (i / ${TENANTS}) % 5000,
  (ARRAY['support','sales','ops','dev','_global'])[1 + (i / 7) % 5],
  CASE WHEN (i / 10) % 10 < 3 THEN ARRAY[(ARRAY['support','sales','ops','dev','_global'])[1 + (i / 7) % 5], '_global'] ELSE ARRAY[(ARRAY['support','sales','ops','dev','_global'])[1 + (i / 7) % 5]] END,
  ARRAY['bench-t' || (i % ${TENANTS}) || '.conv-' || (i / ${TENANTS}) % 5000 || ':' || i % 40, 'fact-' || i % 100000],
  CASE WHEN (i / 10) % 10 < 3 THEN 'what did the user say about lisbon, ' || i END,
  CASE WHEN (i / 10) % 10 < 3 THEN i % 12 END,
  i % 300,
  i % 97 <> 0,
  CASE WHEN i % 97 = 0 THEN 'PostgreSQL at 127.0.0.1 is unreachable' END,
  'bench-t' || (i % ${TENANTS}),
  'bench' || (i % ${TENANTS}) || 'key' || (i / ${TENANTS}) % 3,
  CASE WHEN (i / 3) % 3 <> 0 THEN 'agent-' || (i / 13) % 7 END,
  (ARRAY['http','mcp','cli','worker'])[1 + (i / 11) % 4],
  'req-' || i,
  jsonb_build_object('kind', 'bench', 'n', i)
FROM generate_series(1, $1::int) i`;

interface Args {
  rows: number;
  days: number;
  runs: number;
  refill: boolean;
}

function args(): Args {
  const { values } = parseArgs({ options: { rows: { type: 'string' }, days: { type: 'string' }, runs: { type: 'string' }, refill: { type: 'boolean' } } });
  return { rows: Number(values.rows ?? 1_000_000), days: Number(values.days ?? 30), runs: Number(values.runs ?? 3), refill: Boolean(values.refill) };
}

/** The scratch database's URL; created and migrated if needed. */
async function scratchDatabase(): Promise<{ url: string; config: ReturnType<typeof loadConfig> }> {
  applyEnvFile(process.env);
  const base = loadConfig(process.env);
  const url = process.env.BENCH_AUDIT_DATABASE_URL ?? withDatabase(base.postgres.url, `${decodeURIComponent(new URL(base.postgres.url).pathname.slice(1)) || 'mnemograph'}_bench_audit`);
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (!exists) await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  return { url, config: loadConfig({ ...process.env, DATABASE_URL: url, DATABASE_READ_URL: url }) };
}

async function fill(pool: pg.Pool, a: Args): Promise<{ rows: number; seconds: number | null; partitions: number }> {
  const have = (await pool.query<{ n: number }>(COUNT)).rows[0]!.n;
  let seconds: number | null = null;
  if (a.refill || have !== a.rows) {
    console.log(`filling ${a.rows} audit rows over ${a.days} days (had ${have}) ...`);
    const t0 = performance.now();
    await pool.query('TRUNCATE memory_audit_log');
    const first = new Date(Date.now() - (a.days + 1) * 86_400_000).toISOString().slice(0, 10);
    await pool.query(PARTITIONS, [first, a.days + 3]);
    await pool.query(FILL, [a.rows, a.days]);
    await pool.query('ANALYZE memory_audit_log');
    seconds = (performance.now() - t0) / 1000;
    console.log(`filled in ${seconds.toFixed(0)} s`);
  }
  const partitions = (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'memory_audit_log'::regclass")).rows[0]!.n;
  return { rows: (await pool.query<{ n: number }>(COUNT)).rows[0]!.n, seconds, partitions };
}

/** Counts bytes and throws them away, at the pace a fast client reads. */
function sink(counter: { bytes: number }): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      counter.bytes += chunk.length;
      done();
    },
  });
}

interface ExportRun {
  rows: number;
  bytes: number;
  seconds: number;
  rowsPerSecond: number;
  mbPerSecond: number;
  peakRssMb: number;
  peakHeapMb: number;
  heapGrowthMb: number;
}

async function exportOnce(reader: PgAuditReader): Promise<ExportRun> {
  globalThis.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  let peakRss = 0;
  let peakHeap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const timer = setInterval(sample, 20);
  const counter = { bytes: 0 };
  let rows = 0;
  const t0 = performance.now();
  const counted = (async function* () {
    for await (const r of reader.stream({ allTenants: true }, {})) {
      rows++;
      yield r;
    }
  })();
  await pipeline(exportStream(counted, 'csv'), sink(counter));
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  sample();
  const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
  return {
    rows,
    bytes: counter.bytes,
    seconds: Math.round(seconds * 100) / 100,
    rowsPerSecond: Math.round(rows / seconds),
    mbPerSecond: mb(counter.bytes / seconds),
    peakRssMb: mb(peakRss),
    peakHeapMb: mb(peakHeap),
    heapGrowthMb: mb(peakHeap - heap0),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Filter shapes a reviewer uses; `since` relative to now. */
function shapes(days: number): { name: string; scope: AuditScope; filter: () => AuditFilter; cursorPages?: number }[] {
  const t: AuditScope = { tenantId: 'bench-t3' };
  const ago = (d: number) => new Date(Date.now() - d * 86_400_000);
  return [
    { name: 'tenant, newest page', scope: t, filter: () => ({}) },
    { name: 'tenant, page 20 (cursor)', scope: t, filter: () => ({}), cursorPages: 20 },
    { name: 'tenant + user', scope: t, filter: () => ({ userId: 'bench-t3.user-42' }) },
    { name: 'tenant + user + agent, last 7 days (agent X read about user Y)', scope: t, filter: () => ({ userId: 'bench-t3.user-42', agentId: 'agent-2', operation: 'remember', since: ago(7) }) },
    { name: 'tenant + key, yesterday', scope: t, filter: () => ({ keyId: 'bench3key1', since: ago(2), until: ago(1) }) },
    { name: 'tenant + operation retract_fact', scope: t, filter: () => ({ operation: 'retract_fact' }) },
    { name: 'tenant + channel ops', scope: t, filter: () => ({ channel: 'ops' }) },
    { name: 'tenant + surface mcp + failed', scope: t, filter: () => ({ surface: 'mcp', success: false }) },
    { name: 'tenant + forget_user (no match)', scope: t, filter: () => ({ operation: 'forget_user' }) },
    { name: `tenant, whole range since ${days} days`, scope: t, filter: () => ({ since: ago(days) }) },
  ];
}

async function queryLatencies(reader: PgAuditReader, days: number, iterations: number): Promise<Record<string, { p50Ms: number; p95Ms: number; rows: number }>> {
  const out: Record<string, { p50Ms: number; p95Ms: number; rows: number }> = {};
  for (const s of shapes(days)) {
    let cursor: string | undefined;
    for (let p = 0; p < (s.cursorPages ?? 0); p++) cursor = (await reader.page(s.scope, s.filter(), { cursor, limit: 100 })).nextCursor ?? undefined;
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < iterations; i++) {
      const t0 = performance.now();
      rows = (await reader.page(s.scope, s.filter(), { cursor, limit: 100 })).rows.length;
      times.push(performance.now() - t0);
    }
    const p = percentiles(times);
    out[s.name] = { p50Ms: p.p50, p95Ms: p.p95, rows };
    console.log(`${s.name.padEnd(70)} p50 ${out[s.name]!.p50Ms} ms  p95 ${out[s.name]!.p95Ms} ms  (${rows} rows)`);
  }
  return out;
}

async function main(): Promise<number> {
  const a = args();
  const { url, config } = await scratchDatabase();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    await runPostgresMigrations(pool, config, { check: false });
    const data = await fill(pool, a);
    const reader = new PgAuditReader(pool);
    const runs: ExportRun[] = [];
    for (let i = 0; i < a.runs; i++) {
      const r = await exportOnce(reader);
      console.log(
        `export run ${i + 1}: ${r.rows} rows, ${(r.bytes / 1e6).toFixed(0)} MB in ${r.seconds} s = ${r.rowsPerSecond} rows/s; peak RSS ${r.peakRssMb} MB, heap ${r.peakHeapMb} MB (+${r.heapGrowthMb})`,
      );
      runs.push(r);
    }
    const bounded = runs.every((r) => r.heapGrowthMb * 1024 * 1024 < HEAP_GROWTH_LIMIT && r.peakRssMb * 1024 * 1024 < RSS_LIMIT);
    const queries = await queryLatencies(reader, a.days, 20);
    const previous = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>) : {};
    const result = {
      benchmark: 'audit',
      date: new Date().toISOString(),
      machine: { node: process.version, cpus: cpus().length, loadAverageAtEnd: loadavg().map((l) => Math.round(l * 10) / 10) },
      data: { rows: data.rows, days: a.days, partitions: data.partitions, tenants: TENANTS, fillSeconds: data.seconds },
      export: {
        path: 'PgAuditReader.stream (pg-query-stream cursor, 1000-row batches) -> exportStream csv (csv-stringify) -> byte-counting sink; the same functions GET /v1/audit/export runs, without the HTTP hop',
        format: 'csv',
        runs,
        median: {
          rowsPerSecond: median(runs.map((r) => r.rowsPerSecond)),
          mbPerSecond: median(runs.map((r) => r.mbPerSecond)),
          seconds: median(runs.map((r) => r.seconds)),
          peakRssMb: median(runs.map((r) => r.peakRssMb)),
          peakHeapMb: median(runs.map((r) => r.peakHeapMb)),
        },
        processMaxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
        bounded: { ok: bounded, heapGrowthLimitMb: HEAP_GROWTH_LIMIT / 1024 / 1024, rssLimitMb: RSS_LIMIT / 1024 / 1024 },
      },
      query: { path: 'PgAuditReader.page, limit 100, 20 iterations per shape, one tenant of 10 (bench-t3)', shapes: queries },
      // The write path (rows/s with and without the hash chain) is measured by bench/audit-write.ts
      // and merged here under this key; this script keeps whatever it finds.
      writePath: previous.writePath ?? { pending: 'bench/audit-write.ts writes its figures here' },
    };
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    writeFileSync(RESULTS, JSON.stringify(result, null, 2) + '\n');
    console.log(`wrote ${RESULTS}`);
    if (!bounded) console.error('export memory was not bounded: see export.runs');
    return bounded ? 0 : 1;
  } finally {
    await pool.end();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
