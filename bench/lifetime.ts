/**
 * "A year in a day" (issue #47 part 6): `npm run bench:lifetime` (full), `npm run
 * bench:lifetime -- --short` (smoke). Writes bench/results/lifetime.json and a summary.
 *
 * 1. Year pass. LoCoMo (one user per conversation) and the LongMemEval dev sample (one user
 *    per question) are ingested through storeTurns with their real dates, as bench:recall
 *    does (recall-ingest.ts). The worker's consolidate job then runs until it has nothing left
 *    (the knowledge a worker that kept up would hold), and every question is asked through
 *    remember() and scored with bench:recall's metrics: "before". Then the worker's jobs run
 *    for a simulated year on a fake clock (the JobContext's clock), starting at the first UTC
 *    midnight after both the datasets' last date and the wall clock (the knowledge the bench
 *    writes carries wall-clock timestamps, and a clock behind them would never age it): each
 *    enabled job (WORKER_JOBS) at its own cron time (DEFAULT_SCHEDULES; lifetime-schedule.ts
 *    says how sub-hourly jobs are run once an hour), through the container's Worker
 *    (`createWorker({clock}).runJob`, scoped to the bench's users), so the jobs, stores and
 *    settings are the real ones. Every question is asked again, at the same moment as before:
 *    "after". The goal (in the results, not asserted): after ≥ before - 0.005 on turn
 *    recall@10 and session recall@10, per dataset. Facts and entities active before and after
 *    are counted (lifetime-year.ts: memoryCounts says what "active" is).
 *
 * 2. Deletion pass, on the LoCoMo users after the year, all through the public HTTP API (the
 *    API started in-process over the same container, MCP mounted, one tenant and admin key):
 *    a deterministic sample (lifetime-deletion.ts `choose`, items in id order, evenly spread)
 *    of turns is deleted (DELETE …/turns/:index), of sessions (DELETE …/conversations/:id),
 *    and of active facts (POST …/facts/:id/retract). Every deleted item and a sample of
 *    survivors is asked about, before and after the deletions, on every surface
 *    (lifetime-probe.ts): POST /v1/recall, /v1/recall/context, /v1/search/vector,
 *    /v1/facts/search-text, /v1/facts/search, MCP's search_memory over streamable HTTP (the
 *    MCP SDK client), each with the item's own text as the query (a turn's content, a fact's
 *    claim, a conversation's longest turn), top 10; and per user GET /v1/users/:u/export and
 *    the studio listings (conversations, the turns of every conversation involved, current
 *    facts, entities).
 *
 *    A surface "returns" an item when an id in its answer is the item's (a conversation: its
 *    id or any of its turns' ids), or when its prose contains the item's text (a turn's
 *    content, a fact's claim) and that text is unique to the item among its user's turns or
 *    facts and at least 30 characters long. Prose: recall/context's block, MCP's lines, the
 *    profile in /v1/recall's answer, and the export's rows other than the turn log (the
 *    profile, observations...). The export returns a turn by its Turn node or its turn-log
 *    row, a conversation by its node, a fact by id only as an active Fact node (the export
 *    keeps retracted and superseded facts as history by design).
 *
 *    Leak: a pair (deleted item, surface) such that, after the deletions, the surface returns
 *    the item to any probe of its user, or in its user's export or listings. Deleted items
 *    are the deleted turns, the deleted conversations and each of their turns, the retracted
 *    facts, and the facts learned only from deleted content: active facts none of whose
 *    source turns (DERIVED_FROM, source_turn_id) survives the deletions (read before them).
 *    Wrong removal: a pair (survivor, surface) such that the surface returned the survivor
 *    to its own probe (or in its user's export or listings) before the deletions and does not
 *    after. Survivors are turns and conversations not deleted and facts not retracted with at
 *    least one surviving source turn.
 *
 * 3. Delete cost at scale: a user of 10k and one of 100k synthetic turns (lifetime-scale.ts;
 *    real embeddings of LoCoMo texts from the disk cache), turn deletes and conversation
 *    deletes timed through the HTTP API (p50/p95).
 *
 * Embeddings go through bench:recall's disk cache (recall-embedding-cache.ts), so reruns skip
 * the model. The bench's data is removed afterwards unless --keep.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { applyEnvFile, loadConfig } from '../src/config';
import { createMnemograph, type Mnemograph } from '../src/container';
import { createEmbedder } from '../src/embedding';
import { startServer, type RunningServer } from '../src/api/server';
import { mountMcp } from '../src/mcp/http';
import { DEFAULT_SCHEDULES, type JobName } from '../src/worker';
import { CachingEmbedder } from './recall-embedding-cache';
import { defaultLocomoPath, defaultLongMemEvalPath, loadLocomo, loadLongMemEval, type BenchDataset } from './recall-datasets';
import { ingestDataset, RunIds } from './recall-ingest';
import { deleteUsers } from './recall-cleanup';
import { jobTimetable } from './lifetime-schedule';
import { askQuestions, consolidateAll, difference, FakeClock, memoryCounts, runYear, type JobTotals, type RecallFigures } from './lifetime-year';
import { runDeletionPass, type DeletionPlan } from './lifetime-deletion';
import { ApiClient } from './lifetime-probe';
import { runScale } from './lifetime-scale';

const ROOT = resolve(__dirname, '..');
const DAY_MS = 86_400_000;
/** The year's goal: after at most this much below before. */
const GOAL_DROP = 0.005;
const GOAL_METRICS = ['turn_recall_at_10', 'session_recall_at_10'] as const;

export interface LifetimeOptions {
  datasets: Array<'locomo' | 'longmemeval'>;
  locomoPath: string;
  longMemEvalPath: string;
  /** LoCoMo conversations kept (all when absent), and the first sessions of each. */
  conversations?: number;
  sessions?: number;
  /** Questions per dataset (all when absent; LongMemEval: also its users, one per question). */
  questions: Partial<Record<'locomo' | 'longmemeval', number>>;
  depth: number;
  days: number;
  /** Hourly jobs run every this many hours of the year (1: as scheduled). */
  tickHours: number;
  deletion: DeletionPlan;
  /** User sizes of the delete-cost part; empty: skipped. */
  scale: number[];
  keep: boolean;
  quiet?: boolean;
  /** Called with the result so far after each part (the CLI writes it out). */
  checkpoint?: (partial: Record<string, unknown>) => void;
}

/** The datasets as the options bound them. */
export function loadDatasets(o: LifetimeOptions): BenchDataset[] {
  const out: BenchDataset[] = [];
  if (o.datasets.includes('locomo')) {
    const ds = loadLocomo(o.locomoPath);
    const conversations = ds.conversations.slice(0, o.conversations ?? ds.conversations.length).map((c) => ({ ...c, sessions: c.sessions.slice(0, o.sessions ?? c.sessions.length) }));
    const kept = new Set(conversations.map((c) => c.key));
    out.push({ ...ds, conversations, questions: ds.questions.filter((q) => kept.has(q.conversationKey)).slice(0, o.questions.locomo) });
  }
  if (o.datasets.includes('longmemeval')) {
    const ds = loadLongMemEval(o.longMemEvalPath);
    const questions = ds.questions.slice(0, o.questions.longmemeval);
    const users = new Set(questions.map((q) => q.conversationKey));
    out.push({ name: 'longmemeval', conversations: ds.conversations.filter((c) => users.has(c.key)), questions });
  }
  return out;
}

/** The year's first instant: the first UTC midnight after the datasets' last session and after `now`. */
export function yearStart(datasets: BenchDataset[], now: Date): Date {
  const last = Math.max(now.getTime(), ...datasets.flatMap((d) => d.conversations.flatMap((c) => c.sessions.map((s) => Date.parse(s.date)))));
  return new Date((Math.floor(last / DAY_MS) + 1) * DAY_MS);
}

const seconds = (t0: number) => Math.round((performance.now() - t0) / 100) / 10;

/** Whether each dataset's "after" is within GOAL_DROP of its "before" on the goal's metrics. */
function goal(before: RecallFigures, after: RecallFigures): Record<string, boolean> {
  return Object.fromEntries(GOAL_METRICS.filter((k) => before.overall[k] !== undefined).map((k) => [k, (after.overall[k] ?? 0) >= before.overall[k]! - GOAL_DROP]));
}

/**
 * The whole bench over a container whose short-term clock is `clock` and an API server over
 * it (MCP mounted). Returns the result document.
 */
export async function runLifetime(m: Mnemograph, srv: RunningServer, clock: FakeClock, o: LifetimeOptions): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const log = (msg: string) => (o.quiet ? undefined : console.log(`[${seconds(t0)} s] ${msg}`));
  const tenantId = `lt${Date.now().toString(36)}`;
  const { key } = await srv.api.tenants.createKey(tenantId, { name: 'bench-lifetime' });
  const api = new ApiClient(srv.url, key, `${tenantId}.`);
  const ids = new RunIds(`${tenantId}.r`);
  const datasets = loadDatasets(o);
  const usersOf = (ds: BenchDataset) => ds.conversations.map((c) => ids.user(c.key));
  const allUsers = datasets.flatMap(usersOf);
  const schedules = Object.fromEntries((m.config.worker.jobs as JobName[]).map((j) => [j, DEFAULT_SCHEDULES[j]]));
  // Filled part by part; each part is handed to `checkpoint` once done (a long run that fails late keeps the rest).
  const r: Record<string, unknown> = { benchmark: 'lifetime', setup: setupOf(m, o, datasets, schedules, tenantId) };
  const done = (part: string, value: unknown) => {
    r[part] = value;
    r.seconds = seconds(t0);
    o.checkpoint?.(r);
  };
  try {
    const ingestT0 = performance.now();
    for (const ds of datasets) await ingestDataset(m, ds, ids);
    (r.setup as Record<string, unknown>).ingest_seconds = seconds(ingestT0);
    log(`ingested ${datasets.map((d) => `${d.name} ${d.conversations.length} users`).join(', ')}`);
    const start = yearStart(datasets, new Date());
    clock.set(start);
    const worker = m.createWorker({ clock, workerId: `bench-lifetime-${tenantId}` });
    const consolidation: JobTotals = {};
    const consolidateT0 = performance.now();
    await consolidateAll(worker, allUsers, consolidation);
    const consolidationBefore = { seconds: seconds(consolidateT0), ...consolidation.consolidate };
    log(`consolidated: ${JSON.stringify(consolidation.consolidate?.stats)}`);
    const countsBefore = await memoryCounts(m, allUsers);
    const ask = async () => {
      const out: Record<string, RecallFigures> = {};
      for (const ds of datasets) out[ds.name] = await askQuestions(m, ds, ds.questions, ids, o.depth);
      await m.reinforcer.flush();
      return out;
    };
    const before = await ask();
    done('memory', { before: countsBefore });
    done('recall', Object.fromEntries(datasets.map((d) => [d.name, { before: before[d.name] }])));
    log('asked before the year');

    const timetable = jobTimetable(schedules, start, o.days, o.tickHours);
    const jobs: JobTotals = {};
    const yearT0 = performance.now();
    await runYear(worker, clock, timetable, allUsers, jobs);
    await worker.stop();
    const end = new Date(start.getTime() + o.days * DAY_MS).toISOString();
    const year = { start: start.toISOString(), end, days: o.days, tick_hours: o.tickHours, job_runs: timetable.length, seconds: seconds(yearT0), jobs, consolidation_before: consolidationBefore };
    log(`year: ${timetable.length} job runs`);
    const after = await ask();
    done('year', year);
    done('memory', { before: countsBefore, after: await memoryCounts(m, allUsers) });
    done('recall', Object.fromEntries(datasets.map((d) => [d.name, compare(before[d.name]!, after[d.name]!)])));

    const locomo = datasets.find((d) => d.name === 'locomo');
    if (locomo) {
      await srv.api.tenants.registerUsers(
        tenantId,
        usersOf(locomo).map((u) => api.external(u)),
      );
      done('deletion', await runDeletionPass(m, api, usersOf(locomo), o.deletion));
      log('deletion pass done');
    } else done('deletion', null);
    const scale =
      o.scale.length > 0
        ? await runScale(m, api, {
            sizes: o.scale,
            deletes: 5,
            internalUser: (size) => `${tenantId}.scale-${size}`,
            register: (u) => srv.api.tenants.registerUsers(tenantId, [u]),
            cleanup: (u) => (o.keep ? Promise.resolve() : deleteUsers(m, [u])),
            onSize: (size, figures) => done('scale', { ...(r.scale as object), [size]: figures }),
          })
        : { skipped: true };
    done('scale', scale);
    return r;
  } finally {
    if (!o.keep) await deleteUsers(m, allUsers);
  }
}

/** Before and after of one dataset, their difference and whether the goal holds. */
function compare(before: RecallFigures, after: RecallFigures) {
  return { before, after, difference: difference(before.overall, after.overall), goal_met: goal(before, after) };
}

function setupOf(m: Mnemograph, o: LifetimeOptions, datasets: BenchDataset[], schedules: Record<string, string>, tenantId: string): Record<string, unknown> {
  return {
    datasets: datasets.map((d) => ({
      name: d.name,
      users: d.conversations.length,
      sessions: d.conversations.reduce((n, c) => n + c.sessions.length, 0),
      turns: d.conversations.reduce((n, c) => n + c.sessions.reduce((k, s) => k + s.turns.length, 0), 0),
      questions: d.questions.length,
    })),
    options: { ...o, locomoPath: undefined, longMemEvalPath: undefined, quiet: undefined, checkpoint: undefined },
    embedding: `${m.embedder.provider}/${m.embedder.model}`,
    extractor: m.extractor.model,
    worker: {
      jobs: m.config.worker.jobs,
      schedules,
      archive_days: m.config.worker.archiveDays,
      decay_rate: m.config.worker.decayRate,
      retention_delete_days: m.config.worker.deleteDays ?? null,
    },
    tenant: tenantId,
  };
}

interface CliOptions {
  short?: boolean;
  datasets?: string;
  questions?: string;
  conversations?: string;
  sessions?: string;
  days?: string;
  tickHours: string;
  depth: string;
  skipScale?: boolean;
  scale: string;
  keep?: boolean;
  out?: string;
  longmemeval: string;
}

/** `--questions`: "N" for every dataset, or "locomo=N,longmemeval=M". */
export function questionLimits(spec: string | undefined): LifetimeOptions['questions'] {
  if (spec === undefined) return {};
  if (/^\d+$/.test(spec)) return { locomo: Number(spec), longmemeval: Number(spec) };
  return Object.fromEntries(
    spec.split(',').map((part) => {
      const [name, n] = part.split('=');
      if ((name !== 'locomo' && name !== 'longmemeval') || !/^\d+$/.test(n ?? '')) throw new Error(`--questions: "${part}" is not N or locomo=N / longmemeval=N`);
      return [name, Number(n)];
    }),
  );
}

/** The command line: the short form's defaults under the given options. */
export function optionsFrom(c: CliOptions): LifetimeOptions {
  const num = (v: string | undefined, short: number | undefined, full: number | undefined) => (v !== undefined ? Number(v) : c.short ? short : full);
  return {
    datasets: (c.datasets ?? (c.short ? 'locomo' : 'locomo,longmemeval')).split(',').map((d) => d.trim()) as LifetimeOptions['datasets'],
    locomoPath: defaultLocomoPath(),
    longMemEvalPath: resolve(c.longmemeval),
    conversations: num(c.conversations, 2, undefined),
    sessions: num(c.sessions, 6, undefined),
    questions: questionLimits(c.questions ?? (c.short ? '40' : undefined)),
    depth: Number(c.depth),
    days: num(c.days, 30, 365)!,
    tickHours: Number(c.tickHours),
    deletion: c.short ? { turns: 10, conversations: 2, facts: 5, survivors: 10, topK: 10 } : { turns: 50, conversations: 10, facts: 30, survivors: 50, topK: 10 },
    scale: c.skipScale || c.short ? [] : c.scale.split(',').map(Number),
    keep: c.keep === true,
  };
}

async function main(): Promise<void> {
  const c = new Command()
    .option('--short', 'the smoke form: 2 LoCoMo conversations (6 sessions each), 40 questions, a 30-day year, smaller deletion sample, no scale part')
    .option('--datasets <list>', 'locomo,longmemeval')
    .option('--questions <n>', 'questions per dataset, or per named one (locomo=100,longmemeval=8); LongMemEval: also its users, one per question')
    .option('--conversations <n>', 'LoCoMo conversations (users) kept')
    .option('--sessions <n>', 'first sessions of each LoCoMo conversation')
    .option('--days <n>', 'length of the simulated year in days (365; short form 30)')
    .option('--tick-hours <n>', 'hourly jobs run every n hours of the simulated time (1: as scheduled)', '1')
    .option('--depth <n>', 'turns asked of remember() per question, as bench:recall', '50')
    .option('--scale <sizes>', 'turns of the users of the delete-cost part', '10000,100000')
    .option('--skip-scale', 'skip the delete-cost part')
    .option('--keep', 'keep the bench users instead of deleting them')
    .option('--longmemeval <file>', 'LongMemEval sample', defaultLongMemEvalPath())
    .option('--out <file>', 'result file', join(ROOT, 'bench/results/lifetime.json'))
    .parse()
    .opts<CliOptions>();
  const o = optionsFrom(c);
  // config/mnemograph.env (or MNEMOGRAPH_ENV_FILE), as every `mnemograph` command reads it: the worktree's own stack.
  applyEnvFile(process.env);
  // The deletion pass is the API's only client and asks thousands of questions a minute: no rate limit in its way.
  const config = loadConfig({ ...process.env, EMBEDDING_MODE: 'inline', MIGRATE_ON_START: 'true', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', API_RATE_LIMIT_PER_MINUTE: '1000000' });
  const embedder = new CachingEmbedder(
    createEmbedder(config.embedding),
    process.env.BENCH_EMBEDDING_CACHE ?? join(ROOT, 'bench/cache', `embeddings-${config.embedding.provider}-${config.embedding.model}.bin`),
  );
  const clock = new FakeClock(new Date());
  const m = await createMnemograph(config, { embedder, backgroundEmbedding: false, clock });
  const srv = await startServer(m, { port: 0, host: '127.0.0.1', mount: mountMcp });
  try {
    const out = c.out ?? join(ROOT, 'bench/results/lifetime.json');
    mkdirSync(resolve(out, '..'), { recursive: true });
    const write = (result: Record<string, unknown>) => {
      result.command = `npm run bench:lifetime -- ${process.argv.slice(2).join(' ')}`.trim();
      result.embedding_cache = { hits: embedder.hits, misses: embedder.misses };
      writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    };
    const result = await runLifetime(m, srv, clock, { ...o, checkpoint: write });
    write(result);
    console.log(summary(result));
    console.log(`wrote ${out}`);
  } finally {
    await srv.close();
    await m.close();
    await embedder.close();
  }
}

/** The stdout summary: recall before/after per dataset, counts, leaks, wrong removals, delete times. */
export function summary(r: Record<string, unknown>): string {
  const lines: string[] = [];
  for (const [name, d] of Object.entries(r.recall as Record<string, { before: RecallFigures; after: RecallFigures; difference: Record<string, number>; goal_met: Record<string, boolean> }>)) {
    for (const k of GOAL_METRICS)
      lines.push(`${name} ${k}: before ${d.before.overall[k]} after ${d.after.overall[k]} (${d.difference[k]! >= 0 ? '+' : ''}${d.difference[k]}) goal ${d.goal_met[k] ? 'met' : 'MISSED'}`);
  }
  const mem = r.memory as { before: Record<string, number>; after: Record<string, number> };
  lines.push(
    `facts active ${mem.before.factsActive} -> ${mem.after.factsActive}, entities active ${mem.before.entitiesActive} -> ${mem.after.entitiesActive}, turns archived ${mem.before.turnsArchived} -> ${mem.after.turnsArchived} of ${mem.after.turns}`,
  );
  const del = r.deletion as { leaks: { total: number; per_surface: object }; wrong_removals: { total: number; per_surface: object }; delete_ms: object } | null;
  if (del) {
    lines.push(`leaks ${del.leaks.total} ${JSON.stringify(del.leaks.per_surface)}`);
    lines.push(`wrong removals ${del.wrong_removals.total} ${JSON.stringify(del.wrong_removals.per_surface)}`);
    lines.push(`delete ms ${JSON.stringify(del.delete_ms)}`);
  }
  if (r.scale && !(r.scale as { skipped?: boolean }).skipped) lines.push(`scale ${JSON.stringify(r.scale)}`);
  lines.push(`${String(r.seconds)} s`);
  return lines.join('\n');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
