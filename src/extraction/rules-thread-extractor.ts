import type { Worker } from 'node:worker_threads';
import { MnemographError } from '../errors';
import { BACKGROUND_NICE, type LaneReport } from '../infra/thread-priority';
import { laneReport, startWorkerThread } from '../infra/worker-thread';
import type { ExtractionResult, ExtractionWindow, Extractor } from './contract';
import { RULES_MODEL, type RulesExtractorOptions } from './rules-extractor';

interface Pending {
  resolve: (result: ExtractionResult) => void;
  reject: (err: Error) => void;
}

/**
 * The rules extractor on a thread of its own, at background CPU priority. A window's rules
 * (compromise's tagger over ten turns) are 40-110 ms of synchronous work, and `npm start` runs
 * the worker's jobs in the API process: on the main thread each window held the event loop, so
 * a recall or storeTurn that was ready waited behind it (and the first window, which builds the
 * tagger, ~0.5 s). Here the main thread only posts the window and takes the answer, and the
 * kernel gives the cores to requests first. Same results as `RulesExtractor` (the thread runs
 * it). The thread starts on the first window, and again after a crash; it does not keep the
 * process alive while idle.
 */
export class RulesThreadExtractor implements Extractor {
  readonly provider = 'rules' as const;
  readonly model = RULES_MODEL;
  private worker: Worker | undefined;
  private report: Promise<LaneReport> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly options: RulesExtractorOptions = {},
    private readonly niceSteps = BACKGROUND_NICE,
  ) {}

  extract(window: ExtractionWindow): Promise<ExtractionResult> {
    if (this.closed) return Promise.reject(failed('the rules extractor was closed'));
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, window });
    });
  }

  /** The thread's kernel id and nice value, as it reported them (starts it when it is not running). */
  threadReport(): Promise<LaneReport> {
    this.thread();
    return this.report!;
  }

  /** Refuses what is under way and stops the thread (pure JavaScript: terminating it is safe). */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.fail(failed('the rules extractor was closed'));
    await worker?.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorkerThread(__dirname, 'rules-thread', { options: this.options, niceSteps: this.niceSteps });
    worker.unref();
    this.report = laneReport(worker);
    worker.on('message', (msg: { lane?: LaneReport; id?: number; result?: ExtractionResult; error?: string }) => {
      if (msg.lane) return;
      const job = this.pending.get(msg.id!);
      this.pending.delete(msg.id!);
      if (msg.error !== undefined || !msg.result) job?.reject(failed(`rules extraction failed: ${msg.error}`));
      else job?.resolve(msg.result);
      if (this.pending.size === 0) worker.unref();
    });
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.fail(failed(`the rules extractor's thread stopped: ${reason}; the input stays queued`));
    };
    worker.on('error', (err) => lost(err.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  /** Rejects every window under way; the next one starts a new thread. */
  private fail(err: MnemographError): void {
    this.worker = undefined;
    for (const job of this.pending.values()) job.reject(err);
    this.pending.clear();
  }
}

function failed(message: string): MnemographError {
  return new MnemographError('EXTRACTION_FAILED', 'system', message);
}
