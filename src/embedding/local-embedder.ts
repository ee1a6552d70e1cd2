import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { MnemographError } from '../errors';
import type { EmbedOptions, Embedder } from './contract';
import { DEFAULT_ONNX_BATCHING, assertUseLiteInstalled, type LocalModelSpec, type OnnxBatching } from './local-models';

interface Job {
  texts: string[];
  resolve: (v: number[][]) => void;
  reject: (e: Error) => void;
}

/** Background texts per message to a worker thread (a query waits for at most one such piece). */
const BACKGROUND_PIECE = 4;

/**
 * The offline embedder: a local model (see local-models.ts) in worker threads, so embedding
 * never blocks request handling. Interactive requests (queries) jump the queue of background
 * batches, which reach the workers BACKGROUND_PIECE texts at a time; a query waits at most for
 * one piece in flight.
 */
export class LocalEmbedder implements Embedder {
  readonly provider = 'local';
  readonly model: string;
  readonly dimensions: number;
  private readonly workers: Array<{ worker: Worker; busy: boolean; pending?: Job }> = [];
  private readonly interactive: Job[] = [];
  private readonly background: Job[] = [];
  private nextId = 0;

  constructor(
    private readonly spec: LocalModelSpec,
    opts: { modelDir: string; mavenUrl: string; threads?: number; batching?: OnnxBatching },
  ) {
    this.model = spec.id;
    this.dimensions = spec.dimensions;
    if (spec.runtime === 'use-lite') assertUseLiteInstalled();
    const name = spec.runtime === 'onnx' ? 'onnx-worker' : 'use-lite-worker';
    const js = join(__dirname, `${name}.js`);
    const file = existsSync(js) ? js : join(__dirname, `${name}.ts`);
    const workerData = { spec, modelDir: opts.modelDir, mavenUrl: opts.mavenUrl, batching: opts.batching ?? DEFAULT_ONNX_BATCHING };
    for (let i = 0; i < Math.max(1, opts.threads ?? 2); i++) {
      // Running from TypeScript sources (tsx, ts-jest): load the worker through tsx's require hook
      // (resolved here: an eval worker resolves from the working directory, which may be anywhere).
      const worker = file.endsWith('.ts')
        ? new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(file)});`, { eval: true, workerData })
        : new Worker(file, { workerData });
      worker.unref();
      const slot: { worker: Worker; busy: boolean; pending?: Job } = { worker, busy: false };
      worker.on('message', (msg: { vectors?: number[][]; error?: string }) => {
        const job = slot.pending;
        slot.pending = undefined;
        slot.busy = false;
        if (job) {
          if (msg.error !== undefined || !msg.vectors) job.reject(new MnemographError('EMBEDDING_FAILED', 'upstream', `local embedding failed: ${msg.error}`));
          else job.resolve(msg.vectors);
        }
        this.pump();
      });
      worker.on('error', (err) => {
        slot.pending?.reject(new MnemographError('EMBEDDING_FAILED', 'upstream', `local embedding worker crashed: ${err.message}`));
        slot.pending = undefined;
        slot.busy = false;
      });
      this.workers.push(slot);
    }
  }

  embed(texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return Promise.resolve([]);
    const prefix = (opts.input === 'query' ? this.spec.queryPrefix : this.spec.documentPrefix) ?? '';
    if (prefix) texts = texts.map((t) => prefix + t);
    if (opts.priority === 'interactive') {
      return new Promise((resolve, reject) => {
        this.interactive.push({ texts, resolve, reject });
        this.pump();
      });
    }
    // Background texts go to the workers a few at a time, so a query arriving meanwhile waits
    // for at most one such piece per worker, not for a whole batch.
    const pieces: Array<Promise<number[][]>> = [];
    for (let i = 0; i < texts.length; i += BACKGROUND_PIECE) {
      const piece = texts.slice(i, i + BACKGROUND_PIECE);
      pieces.push(new Promise((resolve, reject) => this.background.push({ texts: piece, resolve, reject })));
    }
    this.pump();
    return Promise.all(pieces).then((parts) => parts.flat());
  }

  private pump(): void {
    for (const slot of this.workers) {
      if (slot.busy) continue;
      const job = this.interactive.shift() ?? this.background.shift();
      if (!job) continue;
      slot.busy = true;
      slot.pending = job;
      slot.worker.ref();
      slot.worker.postMessage({ id: this.nextId++, texts: job.texts });
    }
    for (const slot of this.workers) if (!slot.busy) slot.worker.unref();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}
