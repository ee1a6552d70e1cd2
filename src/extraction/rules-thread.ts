import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../infra/thread-priority';
import type { ExtractionWindow } from './contract';
import { RulesExtractor, type RulesExtractorOptions } from './rules-extractor';

/**
 * The rules extractor's thread (see rules-thread-extractor.ts). Messages: {id, window} ->
 * {id, result} | {id, error}, answered in order; first, {lane} with the thread's id and nice
 * value (`niceSteps` below the process).
 */
const { options, niceSteps } = workerData as { options: RulesExtractorOptions; niceSteps: number };
parentPort?.postMessage({ lane: lowerThreadPriority(niceSteps) });
const extractor = new RulesExtractor(options);

// compromise builds its tagger on the first text it reads (~0.5 s): here, at the thread's
// priority, rather than inside the first window a job hands over.
void extractor.extract({
  userId: 'warm-up',
  channel: '_global',
  turns: [{ id: 'warm-up', role: 'user', content: 'I moved to Lisbon last May and I work at Acme with my sister Ana.', timestamp: new Date(0).toISOString() }],
});

parentPort?.on('message', (msg: { id: number; window: ExtractionWindow }) => {
  extractor.extract(msg.window).then(
    (result) => parentPort?.postMessage({ id: msg.id, result }),
    (err: unknown) => parentPort?.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
