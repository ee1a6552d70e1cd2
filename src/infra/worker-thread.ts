import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

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
