import type { Config } from '../config';
import { createMnemograph } from '../container';
import { JOB_NAMES, type JobName } from '../worker';
import { exitAfter, settlesBy, shutdownSignal } from '../infra/shutdown';

/**
 * `mnemograph worker`: schedules the enabled jobs (WORKER_JOBS) with node-cron until
 * SIGINT/SIGTERM, then stops gracefully: running jobs finish their current item, for at most
 * SHUTDOWN_TIMEOUT_MS (after it they are left to resume from their checkpoints next run).
 */
export async function workerCommand(config: Config): Promise<number> {
  const m = await createMnemograph(config);
  const worker = m.createWorker();
  worker.start();
  console.log(`worker ${worker.workerId}: ${worker.state}; jobs ${config.worker.jobs.join(', ')} (Ctrl-C to stop)`);
  await shutdownSignal();
  console.log(`worker ${worker.workerId}: stopping`);
  const deadline = config.shutdownTimeoutMs;
  let step = 'waiting for running jobs';
  exitAfter(deadline + 5_000, () => step);
  if (!(await settlesBy(worker.stop(), Date.now() + deadline)))
    console.log(`worker ${worker.workerId}: jobs still running at the deadline are left (each resumes from its checkpoint on the next run)`);
  step = 'closing the stores';
  await m.close();
  console.log(`worker ${worker.workerId}: ${worker.state}`);
  return 0;
}

/** `mnemograph run-job NAME [--user ID...]`: runs one job now and prints its outcome as JSON. */
export async function runJobCommand(config: Config, name: string, userIds: string[] | undefined): Promise<number> {
  if (!(JOB_NAMES as readonly string[]).includes(name)) {
    console.error(`mnemograph: unknown job "${name}"; one of ${JOB_NAMES.join(', ')}`);
    return 2;
  }
  const m = await createMnemograph(config, { backgroundEmbedding: false });
  try {
    const result = await m.memory.runJob(name as JobName, { userIds });
    console.log(JSON.stringify(result, null, 2));
    return result.status === 'failed' ? 1 : 0;
  } finally {
    await m.close();
  }
}
