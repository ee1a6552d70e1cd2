import type { Logger } from '../infra/logger';
import type { ProceduralMemory } from '../procedural/procedural-memory';
import type { PromotionThresholds } from '../semantic/contract';
import type { SemanticMemory } from '../semantic/semantic-memory';

/**
 * The consolidation worker: six jobs, each a plain async function of a JobContext, run by
 * `mnemograph run-job NAME` or scheduled by `mnemograph worker` (node-cron only decides
 * when). Jobs are safe to run from several workers at once (Redis locks) and to interrupt
 * (every step is idempotent; progress is checkpointed per conversation).
 */
export const JOB_NAMES = ['consolidate', 'patterns', 'decay', 'cleanup', 'promote', 'audit_partitions', 'pools', 'short_term'] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** Default schedules (seed 003): consolidate 15 min, patterns and promote hourly, the rest daily. */
export const DEFAULT_SCHEDULES: Readonly<Record<JobName, string>> = {
  consolidate: '*/15 * * * *',
  patterns: '7 * * * *',
  promote: '37 * * * *',
  decay: '15 3 * * *',
  cleanup: '45 3 * * *',
  audit_partitions: '5 0 * * *',
  pools: '0 4 * * *',
  short_term: '*/10 * * * *',
};

/** The time source; injected so decay and retention are testable on a fake clock. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export interface JobContext {
  clock: Clock;
  log: Logger;
  /** Aborted when the worker stops: a job finishes its current item and returns. */
  signal: AbortSignal;
  /** Identifies this worker in locks and job-run rows. */
  workerId: string;
  /** Only these users' data (`run-job --user`, and tests sharing one database); all users when absent. */
  userIds?: string[];
  /**
   * Background work yields: resolves once no interactive call (recall, a turn written) is
   * under way in this process, or after a short bound (InteractiveGate.idle). Jobs await it
   * between items, so they slow down while callers are served and are never starved.
   */
  pause(): Promise<void>;
}

/** Counters a job reports (items seen, written, skipped...). */
export type JobStats = Record<string, number>;
export type JobFn = (ctx: JobContext) => Promise<JobStats>;

export type WorkerState = 'INITIALIZED' | 'RUNNING' | 'STOPPING' | 'STOPPED';

/**
 * What consolidation writes through: the AgentMemory facade's validated, embedded,
 * audited semantic and procedural operations, plus the store's cross-user promotion
 * candidate query (the only read the facade does not offer).
 */
export type KnowledgeWriter = Pick<SemanticMemory, 'upsertEntity' | 'findEntitiesByName' | 'storeFact' | 'learnFact' | 'getFact' | 'findFacts' | 'createRelationship' | 'promoteToGlobal'> &
  Pick<ProceduralMemory, 'learnStrategy'> & {
    findPromotionCandidates(thresholds: PromotionThresholds, limit: number): Promise<Array<{ userId: string; factId: string; channel: string }>>;
  };

/** A mutual-exclusion lock with an owner token (Redis SET NX PX; release only by the owner). */
export interface LockService {
  /** The token when acquired, null when someone else holds it. */
  acquire(key: string, ttlMs: number): Promise<string | null>;
  /** Extends the lock if `token` still owns it; false when it was lost (expired and taken). */
  extend(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Releases the lock if `token` still owns it (never someone else's). */
  release(key: string, token: string): Promise<boolean>;
}

/**
 * Which knowledge items a consolidation already wrote (`consolidation_ledger`), so a rerun
 * after a crash skips them instead of reinforcing them twice.
 */
export interface ConsolidationLedger {
  /** The subset of `keys` already applied. */
  applied(keys: string[]): Promise<Set<string>>;
  /** Records one applied item of a user and source; a repeat is a no-op. */
  mark(key: string, userId: string, sourceId: string): Promise<void>;
  /** Forgets items applied before `before`; returns how many. */
  prune(before: Date): Promise<number>;
}

/** The record of job runs (`worker_job_runs`), and the counters metrics read from it. */
export interface JobRunLog {
  /** Records a run as running; resolves with its id. */
  startRun(job: string, workerId: string, startedAt: Date): Promise<number | null>;
  /** Finishes the run `id` with its outcome, stats and error message. */
  finishRun(id: number, status: 'succeeded' | 'failed', stats: JobStats, error: string | null): Promise<void>;
  /**
   * Every numeric stat of every finished run, summed per job and stat: totals that only grow
   * (rows are never deleted), exported as Prometheus counters whichever process ran the jobs.
   */
  itemTotals(): Promise<Array<{ job: string; stat: string; total: number }>>;
  /** Per job that has finished a run: when it last succeeded (null: never) and how its last run ended. */
  lastRuns(): Promise<JobLastRun[]>;
  /** Per job that started a run since `since`: its last run, how many runs and failures since, its last success (the studio's Operations page). */
  recentRuns(since: Date): Promise<JobRecentRuns[]>;
}

/** A job's recent runs, without stats or error text (jobs work across tenants; those stay in the operator's logs). */
export interface JobRecentRuns {
  job: string;
  lastStatus: 'succeeded' | 'failed' | 'skipped' | 'running';
  lastStartedAt: string;
  lastFinishedAt: string | null;
  lastDurationMs: number | null;
  runs: number;
  failures: number;
  lastSuccessAt: string | null;
}

/** How a job's runs ended lately (`mnemograph doctor`, metrics). */
export interface JobLastRun {
  job: string;
  lastSuccess: Date | null;
  lastFinished: Date;
  lastStatus: 'succeeded' | 'failed' | 'skipped' | 'running';
  lastError: string | null;
}
