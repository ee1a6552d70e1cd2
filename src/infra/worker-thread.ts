import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { LaneReport } from './thread-priority';

/**
 * Starts the worker thread whose entry is `<dir>/<name>.js` (compiled) or, running from the
 * TypeScript sources (tsx, ts-jest), `<dir>/<name>.ts` through tsx's require hook. The hook is
 * resolved here: an eval worker resolves from the working directory, which may be anywhere.
 */
export function startWorkerThread(dir: string, name: string, workerData: unknown): Worker {
  const js = join(dir, `${name}.js`);
  if (existsSync(js)) return new Worker(js, { workerData });
  const ts = join(dir, `${name}.ts`);
  return new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(ts)});`, { eval: true, workerData });
}

/**
 * What a worker thread reported of its scheduling: the `{lane}` message its entry posts first
 * (`lowerThreadPriority`'s report), or why it has none when the thread fails or exits before.
 */
export function laneReport(worker: Worker): Promise<LaneReport> {
  return new Promise((resolve) => {
    const onMessage = (msg: { lane?: LaneReport }) => {
      if (msg.lane) resolve(msg.lane);
    };
    worker.on('message', onMessage);
    worker.once('error', (err) => resolve({ nice: 0, error: err.message }));
    worker.once('exit', (code) => resolve({ nice: 0, error: `exit code ${code}` }));
  });
}
