import type { Mnemograph } from '../src/container';
import type { JobName, JobRunResult, Worker } from '../src/worker';
import type { BenchDataset } from './recall-datasets';
import { askedAt, type RunIds } from './recall-ingest';
import { average, percentiles, scoreQuestion, type QuestionScores } from './recall-metrics';
import type { TickRun } from './lifetime-schedule';

/** A clock the bench moves: the worker's jobs read it (JobContext.clock) as they would the time of day. */
export class FakeClock {
  private t: number;
  constructor(start: Date) {
    this.t = start.getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  set(at: Date): void {
    this.t = at.getTime();
  }
}

/** The year pass's recall figures of one dataset at one moment (before or after the year). */
export interface RecallFigures {
  overall: Record<string, number>;
  by_category: Record<string, Record<string, number>>;
  remember_ms: { p50: number; p95: number };
}

/**
 * Asks every question through remember() as bench:recall does (its default techniques, `depth`
 * turns, asked at the question's own date) and scores the ranked turns with bench:recall's
 * metrics (turn recall@k, session recall...). The same moment is used before and after the
 * year, so the two differ only by what the worker's jobs changed.
 */
export async function askQuestions(m: Mnemograph, ds: BenchDataset, questions: BenchDataset['questions'], ids: RunIds, depth: number, onAsked?: () => void): Promise<RecallFigures> {
  const at = askedAt(ds);
  const scores: Array<{ cat: string; s: QuestionScores }> = [];
  const ms: number[] = [];
  for (const q of questions) {
    const t0 = performance.now();
    const bundle = await m.memory.remember({ userId: ids.user(q.conversationKey), query: q.question, topK: depth, asOf: at(q) });
    ms.push(performance.now() - t0);
    onAsked?.();
    if (q.scored)
      scores.push({
        cat: q.category,
        s: scoreQuestion(
          bundle.turns.map((t) => ids.keyOf(t.turn)),
          q.goldTurns,
          q.goldSessions,
        ),
      });
  }
  const byCat = new Map<string, QuestionScores[]>();
  for (const { cat, s } of scores) byCat.set(cat, [...(byCat.get(cat) ?? []), s]);
  return {
    overall: average(scores.map((x) => x.s)),
    by_category: Object.fromEntries([...byCat].sort(([a], [b]) => a.localeCompare(b)).map(([cat, s]) => [cat, average(s)])),
    remember_ms: percentiles(ms),
  };
}

/** `after - before` of every metric both have (rounded as the metrics are). */
export function difference(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(before)) if (k !== 'n' && typeof after[k] === 'number') out[k] = Math.round((after[k] - v) * 10_000) / 10_000;
  return out;
}

// $userIds -> {factsActive, factsAll, entitiesActive, entitiesAll, conversations, conversationsArchived, turns, turnsArchived}
const KNOWLEDGE_COUNTS = `
CALL () { MATCH (f:Fact) WHERE f.user_id IN $userIds RETURN count(f) AS factsAll, count(CASE WHEN f.status = 'active' THEN 1 END) AS factsActive }
CALL () { MATCH (e:Entity) WHERE e.user_id IN $userIds RETURN count(e) AS entitiesAll, count(CASE WHEN e.valid_to IS NULL THEN 1 END) AS entitiesActive }
CALL () { MATCH (c:Conversation) WHERE c.user_id IN $userIds RETURN count(c) AS conversations, count(CASE WHEN c.archived THEN 1 END) AS conversationsArchived }
CALL () { MATCH (t:Turn) WHERE t.user_id IN $userIds RETURN count(t) AS turns, count(CASE WHEN t.archived THEN 1 END) AS turnsArchived }
RETURN factsActive, factsAll, entitiesActive, entitiesAll, conversations, conversationsArchived, turns, turnsArchived`;

/**
 * What the users hold: facts (active: status `active`; all: also superseded, retracted,
 * merged), entities (active: not closed, i.e. `valid_to` unset, which cleanup's soft delete
 * and merges set), conversations and turns, and how many of those are archived.
 */
export async function memoryCounts(m: Mnemograph, userIds: string[]): Promise<Record<string, number>> {
  const rows = await m.neo4j.read<Record<string, number>>(KNOWLEDGE_COUNTS, { userIds }, { subsystem: 'bench', op: 'lifetimeCounts' });
  return rows[0] ?? {};
}

/** Per job: how many runs, how many failed or were skipped, and its stats summed over the runs. */
export type JobTotals = Record<string, { runs: number; failed: number; skipped: number; seconds: number; stats: Record<string, number>; errors: string[] }>;

function addRun(totals: JobTotals, r: JobRunResult): void {
  const t = (totals[r.job] ??= { runs: 0, failed: 0, skipped: 0, seconds: 0, stats: {}, errors: [] });
  t.runs++;
  t.seconds = Math.round((t.seconds + r.durationMs / 1000) * 10) / 10;
  if (r.status === 'failed') t.failed++;
  if (r.status === 'skipped') t.skipped++;
  if (r.error && t.errors.length < 3 && !t.errors.includes(r.error)) t.errors.push(r.error);
  for (const [k, v] of Object.entries(r.stats)) t.stats[k] = (t.stats[k] ?? 0) + v;
}

/**
 * Runs consolidate at the clock's current instant until it finds nothing left (each run takes
 * a batch of conversations): the knowledge a worker keeping up would have learned while the
 * conversations were written, before the year starts.
 */
export async function consolidateAll(worker: Worker, userIds: string[], totals: JobTotals): Promise<void> {
  for (;;) {
    const r = await worker.runJob('consolidate', { userIds });
    addRun(totals, r);
    const touched = (r.stats.conversations ?? 0) + (r.stats.windows ?? 0);
    if (r.status !== 'succeeded' || touched === 0) return;
  }
}

/** Runs the timetable's jobs in order, each at its own time on the fake clock, scoped to the bench's users. */
export async function runYear(worker: Worker, clock: FakeClock, timetable: TickRun[], userIds: string[], totals: JobTotals, onRun?: (job: JobName) => void): Promise<void> {
  for (const tick of timetable) {
    clock.set(tick.at);
    addRun(totals, await worker.runJob(tick.job, { userIds }));
    onRun?.(tick.job);
  }
}
