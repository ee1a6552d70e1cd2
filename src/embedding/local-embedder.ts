import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { MnemographError } from '../errors';
import type { EmbedOptions, Embedder } from './contract';
import { DEFAULT_ONNX_BATCHING, assertUseLiteInstalled, type LocalModelSpec, type OnnxBatching } from './local-models';
import { BACKGROUND_NICE, type LaneReport } from '../infra/thread-priority';
import { laneReport, startWorkerThread } from '../infra/worker-thread';

interface Job {
  texts: string[];
  resolve: (v: number[][]) => void;
  reject: (e: Error) => void;
}

interface Lane {
  worker: Worker;
  /** The interactive lane takes queries only; background lanes take background texts, and queries when it is busy. */
  interactiveOnly: boolean;
  busy: boolean;
  pending?: Job;
}

/** How long closing waits for a lane to finish its text and exit before terminating it. */
const CLOSE_GRACE_MS = 5_000;
/** Background texts per message to a worker thread (a query waits for at most one such piece). */
const BACKGROUND_PIECE = 4;

/**
 * The offline embedder: a local model (see local-models.ts) in worker threads, so embedding
 * never blocks request handling. `threads` background lanes embed stored texts at a lower CPU
 * priority (BACKGROUND_NICE steps below the process), so a backlog being embedded does not
 * take the cores from requests; one interactive lane at normal priority embeds queries, which
 * jump the queue of background batches and go to a background lane only while the interactive
 * one is busy. Background batches reach the lanes BACKGROUND_PIECE texts at a time.
 */
export class LocalEmbedder implements Embedder {
  readonly provider = 'local';
  readonly model: string;
  readonly dimensions: number;
  private readonly lanes: Lane[] = [];
  private readonly interactive: Job[] = [];
  private readonly background: Job[] = [];
  private nextId = 0;
  /** The close under way or done (undefined while open). */
  private closed: Promise<void> | undefined;
  private readonly reported: Promise<LaneReport[]>;

  constructor(
    private readonly spec: LocalModelSpec,
    opts: { modelDir: string; mavenUrl: string; threads?: number; batching?: OnnxBatching },
  ) {
    this.model = spec.id;
    this.dimensions = spec.dimensions;
    if (spec.runtime === 'use-lite') assertUseLiteInstalled();
    const name = spec.runtime === 'onnx' ? 'onnx-worker' : 'use-lite-worker';
    const reports: Array<Promise<LaneReport>> = [];
    // The interactive lane first: queries look for a free lane in this order.
    for (let i = 0; i <= Math.max(1, opts.threads ?? 2); i++) {
      const interactiveOnly = i === 0;
      const workerData = { spec, modelDir: opts.modelDir, mavenUrl: opts.mavenUrl, batching: opts.batching ?? DEFAULT_ONNX_BATCHING, niceSteps: interactiveOnly ? 0 : BACKGROUND_NICE };
      const worker = startWorkerThread(__dirname, name, workerData);
      worker.unref();
      const lane: Lane = { worker, interactiveOnly, busy: false };
      reports.push(laneReport(worker));
      worker.on('message', (msg: { lane?: LaneReport; vectors?: number[][]; error?: string }) => {
        if (msg.lane) return;
        const job = lane.pending;
        lane.pending = undefined;
        lane.busy = false;
        if (job) {
          if (msg.error !== undefined || !msg.vectors) job.reject(new MnemographError('EMBEDDING_FAILED', 'upstream', `local embedding failed: ${msg.error}`));
          else job.resolve(msg.vectors);
        }
        this.pump();
      });
      worker.on('error', (err) => {
        lane.pending?.reject(new MnemographError('EMBEDDING_FAILED', 'upstream', `local embedding worker crashed: ${err.message}`));
        lane.pending = undefined;
        lane.busy = false;
      });
      this.lanes.push(lane);
    }
    this.reported = Promise.all(reports);
  }

  /** The lanes' threads as they reported themselves: the interactive lane first, then the background lanes. */
  laneReports(): Promise<Array<LaneReport & { lane: 'interactive' | 'background' }>> {
    return this.reported.then((reports) => reports.map((r, i) => ({ ...r, lane: this.lanes[i]!.interactiveOnly ? 'interactive' : 'background' })));
  }

  embed(texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return Promise.resolve([]);
    if (this.closed !== undefined) return Promise.reject(closedError());
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
    if (this.closed !== undefined) return;
    for (const lane of this.lanes) {
      if (lane.busy) continue;
      const job = this.interactive.shift() ?? (lane.interactiveOnly ? undefined : this.background.shift());
      if (!job) continue;
      lane.busy = true;
      lane.pending = job;
      lane.worker.ref();
      lane.worker.postMessage({ id: this.nextId++, texts: job.texts });
    }
    for (const lane of this.lanes) if (!lane.busy) lane.worker.unref();
  }

  /**
   * Rejects what is still queued, then lets every lane finish the text under way and exit (a
   * thread terminated while the model runs natively aborts the process); a lane that has not
   * exited after CLOSE_GRACE_MS is terminated. Closing again answers the first close (a lane
   * that has exited sends no second 'exit': waiting for one held every later close 5 s).
   */
  close(): Promise<void> {
    this.closed ??= this.closeLanes();
    return this.closed;
  }

  private async closeLanes(): Promise<void> {
    for (const job of this.interactive.splice(0).concat(this.background.splice(0))) job.reject(closedError());
    await Promise.all(
      this.lanes.map(async (lane) => {
        // A crashed lane ('error') is gone too.
        const exited = once(lane.worker, 'exit').then(
          () => true,
          () => true,
        );
        lane.worker.ref(); // the process waits for the lane to leave
        lane.worker.postMessage({ close: true });
        const grace = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), CLOSE_GRACE_MS).unref());
        if (!(await Promise.race([exited, grace]))) await lane.worker.terminate();
      }),
    );
  }
}

function closedError(): MnemographError {
  return new MnemographError('EMBEDDING_FAILED', 'upstream', 'the local embedder was closed');
}
