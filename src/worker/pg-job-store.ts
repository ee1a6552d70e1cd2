import { createHash } from 'node:crypto';
import type { Queryable } from '../infra/postgres';
import type { ConsolidationLedger, JobLastRun, JobRecentRuns, JobRunLog, JobStats } from './contract';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';

// $1 keys -> the keys already applied
const APPLIED = 'SELECT item_key FROM consolidation_ledger WHERE item_key = ANY($1)';
// $1 key, $2 user, $3 source -> records one applied item (a repeat is a no-op)
const MARK = 'INSERT INTO consolidation_ledger (item_key, user_id, source_id) VALUES ($1, $2, $3) ON CONFLICT (item_key) DO NOTHING';
// $1 cutoff -> deletes rows applied before it
const PRUNE = 'DELETE FROM consolidation_ledger WHERE applied_at < $1';

// $1 job, $2 worker, $3 started -> {id}
const START_RUN = `INSERT INTO worker_job_runs (job, worker_id, started_at, status) VALUES ($1, $2, $3, 'running') RETURNING id`;
// $1 id, $2 status, $3 stats, $4 error -> finishes the row
const FINISH_RUN = `UPDATE worker_job_runs SET finished_at = NOW(), status = $2, stats = $3, error = $4 WHERE id = $1`;
// -> {job, stat, total}: every numeric counter of every finished job run, summed (grows only, as rows are never deleted)
const JOB_ITEM_TOTALS = `SELECT job, key AS stat, sum(value::numeric) AS total
  FROM worker_job_runs, jsonb_each_text(stats)
  WHERE finished_at IS NOT NULL AND jsonb_typeof(stats -> key) = 'number'
  GROUP BY job, key`;
// -> {job, last_success, last_finished, last_status, last_error}: per job, its last success and its last finished run
const JOB_LAST_RUNS = `SELECT DISTINCT ON (job) job,
    date_part('epoch', max(finished_at) FILTER (WHERE status = 'succeeded') OVER (PARTITION BY job)) AS last_success,
    date_part('epoch', finished_at) AS last_finished, status AS last_status, error AS last_error
  FROM worker_job_runs WHERE finished_at IS NOT NULL
  ORDER BY job, finished_at DESC`;

// $1 since (timestamptz) -> per job that ran since then: its last run (status, start, finish), runs and failures since,
// and when it last succeeded (ever). No stats and no error text: jobs work across tenants.
const JOB_RECENT_RUNS = `SELECT job, status AS last_status, date_part('epoch', started_at) AS last_started, date_part('epoch', finished_at) AS last_finished,
    runs, failures, (SELECT date_part('epoch', max(finished_at)) FROM worker_job_runs s WHERE s.job = last.job AND s.status = 'succeeded') AS last_success
  FROM (SELECT DISTINCT ON (job) job, status, started_at, finished_at,
      count(*) OVER (PARTITION BY job) AS runs, count(*) FILTER (WHERE status = 'failed') OVER (PARTITION BY job) AS failures
    FROM worker_job_runs WHERE started_at >= $1 ORDER BY job, started_at DESC) last
  ORDER BY job`;

/**
 * The worker's own tables: `consolidation_ledger` (which knowledge items a consolidation
 * already wrote, so a rerun after a crash skips them instead of reinforcing them twice)
 * and `worker_job_runs` (one row per job run). The ledger is written outside any Postgres
 * transaction of the caller: it mirrors Neo4j writes, which no Postgres rollback undoes.
 */
export class PgJobStore implements ConsolidationLedger, JobRunLog {
  constructor(private readonly pg: Queryable) {}

  async applied(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    return new Set((await this.pg.query<{ item_key: string }>(APPLIED, [keys])).rows.map((r) => r.item_key));
  }

  async mark(key: string, userId: string, sourceId: string): Promise<void> {
    await this.pg.query(MARK, [key, userId, sourceId]);
  }

  async prune(before: Date): Promise<number> {
    return (await this.pg.query(PRUNE, [before])).rowCount ?? 0;
  }

  async startRun(job: string, workerId: string, startedAt: Date): Promise<number | null> {
    return (await this.pg.query<{ id: number }>(START_RUN, [job, workerId, startedAt])).rows[0]?.id ?? null;
  }

  async finishRun(id: number, status: 'succeeded' | 'failed', stats: JobStats, error: string | null): Promise<void> {
    await this.pg.query(FINISH_RUN, [id, status, JSON.stringify(stats), error]);
  }

  async itemTotals(): Promise<Array<{ job: string; stat: string; total: number }>> {
    return (await this.pg.query<{ job: string; stat: string; total: string }>(JOB_ITEM_TOTALS)).rows.map((r) => ({ job: r.job, stat: r.stat, total: Number(r.total) }));
  }

  async recentRuns(since: Date): Promise<JobRecentRuns[]> {
    type Row = { job: string; last_status: JobRecentRuns['lastStatus']; last_started: string; last_finished: string | null; runs: string; failures: string; last_success: string | null };
    const at = (s: string | null) => (s === null ? null : new Date(Number(s) * 1000).toISOString());
    return (await this.pg.query<Row>(JOB_RECENT_RUNS, [since])).rows.map((r) => ({
      job: r.job,
      lastStatus: r.last_status,
      lastStartedAt: at(r.last_started)!,
      lastFinishedAt: at(r.last_finished),
      lastDurationMs: r.last_finished === null ? null : Math.round((Number(r.last_finished) - Number(r.last_started)) * 1000),
      runs: Number(r.runs),
      failures: Number(r.failures),
      lastSuccessAt: at(r.last_success),
    }));
  }

  async lastRuns(): Promise<JobLastRun[]> {
    const rows = (await this.pg.query<{ job: string; last_success: string | null; last_finished: string; last_status: JobLastRun['lastStatus']; last_error: string | null }>(JOB_LAST_RUNS)).rows;
    return rows.map((r) => ({
      job: r.job,
      lastSuccess: r.last_success === null ? null : new Date(Number(r.last_success) * 1000),
      lastFinished: new Date(Number(r.last_finished) * 1000),
      lastStatus: r.last_status,
      lastError: r.last_error,
    }));
  }

  /** The user's rows of `consolidation_ledger`, for whole-user export, import and erasure. */
  userData(): UserDataPart {
    return new PgUserRows(this.pg, 'worker', ['consolidation_ledger']);
  }
}

/** A stable key (and id-safe hash) for one item of one source. */
export function itemKey(parts: Array<string | undefined>): string {
  return createHash('sha256')
    .update(parts.map((p) => (p ?? '').toLowerCase().trim()).join('\u0000'))
    .digest('hex')
    .slice(0, 32);
}
