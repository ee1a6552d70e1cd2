import { createHash, randomUUID } from 'node:crypto';
import cron, { type ScheduledTask } from 'node-cron';
import { MnemographError, errorMessage } from '../errors';
import type { Logger } from '../infra/logger';
import { withActor } from '../audit/actor';
import { DEFAULT_SCHEDULES, systemClock, type Clock, type JobFn, type JobName, type JobRunLog, type JobStats, type LockService, type WorkerState } from './contract';

/** Jobs that coordinate per item (conversation locks, SKIP LOCKED), so several workers may run them at once. */
const PER_ITEM_LOCKING: ReadonlySet<JobName> = new Set(['consolidate', 'patterns']);

export interface JobRunResult {
  job: JobName;
  status: 'succeeded' | 'failed' | 'skipped';
  stats: JobStats;
  error?: string;
  durationMs: number;
}

export interface WorkerOptions {
  jobs: Record<JobName, JobFn>;
  /** Jobs `start()` schedules (all by default). */
  enabled?: JobName[];
  schedules?: Partial<Record<JobName, string>>;
  locks: LockService;
  lockTtlMs: number;
  log: Logger;
  clock?: Clock;
  /** Where job runs are recorded (`worker_job_runs`); not recorded when absent. */
  runLog?: JobRunLog;
  workerId?: string;
  /** What jobs yield to between items (`JobContext.pause`): the process's InteractiveGate; no pause when absent. */
  interactive?: { idle(): Promise<void> };
}

/**
 * Runs the six jobs on their cron schedules. States: INITIALIZED -> RUNNING (start) ->
 * STOPPING (stop: no new runs, running jobs are told to finish their current item) ->
 * STOPPED (every run has returned). A job is also runnable directly (`runJob`), which is
 * what `mnemograph run-job NAME` does; cron only decides when.
 */
export class Worker {
  private _state: WorkerState = 'INITIALIZED';
  private readonly tasks: ScheduledTask[] = [];
  private readonly inFlight = new Set<Promise<JobRunResult>>();
  private readonly abort = new AbortController();
  readonly workerId: string;
  private readonly clock: Clock;

  private readonly pause: () => Promise<void>;

  constructor(private readonly opts: WorkerOptions) {
    const gate = opts.interactive;
    this.pause = gate ? () => gate.idle() : () => Promise.resolve();
    this.workerId = opts.workerId ?? `worker-${randomUUID().slice(0, 8)}`;
    this.clock = opts.clock ?? systemClock;
  }

  get state(): WorkerState {
    return this._state;
  }

  /** Schedules the enabled jobs. Throws unless INITIALIZED. */
  start(): void {
    if (this._state !== 'INITIALIZED') throw new MnemographError('WORKER_STATE', 'system', `cannot start a worker that is ${this._state}; create a new one`);
    const enabled = this.opts.enabled ?? (Object.keys(this.opts.jobs) as JobName[]);
    for (const name of enabled) {
      const expr = this.opts.schedules?.[name] ?? DEFAULT_SCHEDULES[name];
      if (!cron.validate(expr)) throw new MnemographError('WORKER_SCHEDULE', 'user', `invalid cron expression "${expr}" for job ${name}`);
      const task = cron.schedule(
        expr,
        async () => {
          const r = await this.runJob(name);
          if (r.status === 'failed') this.opts.log.error({ subsystem: 'worker', job: name, err: r.error }, 'job failed');
        },
        { name: `mnemograph-${name}`, noOverlap: true },
      );
      this.tasks.push(task);
    }
    this._state = 'RUNNING';
    this.opts.log.info({ subsystem: 'worker', workerId: this.workerId, jobs: enabled }, 'worker running');
  }

  /**
   * Runs one job now and resolves with its outcome (never rejects). `skipped` when the
   * worker is stopping or another worker holds the job's lock.
   */
  runJob(name: JobName, opts: { userIds?: string[] } = {}): Promise<JobRunResult> {
    const run = this.execute(name, opts);
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return run;
  }

  /** Stops scheduling, asks running jobs to finish their current item, and waits for them. Idempotent. */
  async stop(): Promise<void> {
    if (this._state === 'STOPPED') return;
    if (this._state !== 'STOPPING') {
      this._state = 'STOPPING';
      for (const t of this.tasks) await t.destroy();
      this.abort.abort();
    }
    await Promise.allSettled([...this.inFlight]);
    this._state = 'STOPPED';
    this.opts.log.info({ subsystem: 'worker', workerId: this.workerId }, 'worker stopped');
  }

  private async execute(name: JobName, opts: { userIds?: string[] }): Promise<JobRunResult> {
    const t0 = performance.now();
    const done = (status: JobRunResult['status'], stats: JobStats, error?: string): JobRunResult => ({ job: name, status, stats, error, durationMs: performance.now() - t0 });
    if (this._state === 'STOPPING' || this._state === 'STOPPED') return done('skipped', {}, `worker is ${this._state}`);
    const fn = this.opts.jobs[name];
    const scope = opts.userIds ? `:${createHash('sha256').update(opts.userIds.join(',')).digest('hex').slice(0, 16)}` : '';
    const lockKey = `worker:job:${name}${scope}`;
    let token: string | null = null;
    if (!PER_ITEM_LOCKING.has(name)) {
      token = await this.opts.locks.acquire(lockKey, this.opts.lockTtlMs);
      if (token === null) return done('skipped', {}, 'another worker is running this job');
    }
    const runId = await this.startRun(name);
    try {
      // Every audit row the run queues names the job and its run (worker_job_runs.id).
      const actor = { tenantId: null, keyId: null, agentId: null, surface: 'worker', requestId: null, job: name, runId } as const;
      const stats = await withActor(actor, () => fn({ clock: this.clock, log: this.opts.log, signal: this.abort.signal, workerId: this.workerId, userIds: opts.userIds, pause: this.pause }));
      await this.finishRun(runId, 'succeeded', stats);
      return done('succeeded', stats);
    } catch (err) {
      const error = errorMessage(err);
      await this.finishRun(runId, 'failed', {}, error);
      return done('failed', {}, error);
    } finally {
      if (token !== null) await this.opts.locks.release(lockKey, token).catch(() => undefined);
    }
  }

  private async startRun(name: JobName): Promise<number | null> {
    if (!this.opts.runLog) return null;
    try {
      return await this.opts.runLog.startRun(name, this.workerId, this.clock.now());
    } catch (err) {
      this.opts.log.warn({ subsystem: 'worker', err: errorMessage(err) }, 'could not record the job run');
      return null;
    }
  }

  private async finishRun(id: number | null, status: 'succeeded' | 'failed', stats: JobStats, error?: string): Promise<void> {
    if (id === null || !this.opts.runLog) return;
    await this.opts.runLog.finishRun(id, status, stats, error ?? null).catch(() => undefined);
  }
}
