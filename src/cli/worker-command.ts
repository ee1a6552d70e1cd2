import type { Config } from '../config';
import { createMnemograph } from '../container';
import { JOB_NAMES, type JobName } from '../worker';

/**
 * `mnemograph worker`: schedules the enabled jobs (WORKER_JOBS) with node-cron until
 * SIGINT/SIGTERM, then stops gracefully (running jobs finish their current item).
 */
export async function workerCommand(config: Config): Promise<number> {
  const m = await createMnemograph(config);
  const worker = m.createWorker();
  worker.start();
  console.log(`worker ${worker.workerId}: ${worker.state}; jobs ${config.worker.jobs.join(', ')} (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  console.log(`worker ${worker.workerId}: stopping`);
  await worker.stop();
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
