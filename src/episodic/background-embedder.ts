import type { Embedder } from '../embedding';
import type { Logger } from '../infra/logger';
import type { InteractiveGate } from '../infra/interactive-gate';
import type { EpisodicStore } from './contract';

/**
 * Items waiting for an embedding, in any store: what to fetch, what text to embed, where
 * to save. An item stays pending until `save` has written its vector.
 */
export interface EmbeddingBacklog<T> {
  pending(limit: number): Promise<T[]>;
  text(item: T): string;
  save(rows: Array<{ item: T; embedding: number[] }>): Promise<number>;
}

/** The backlog of turns stored without an embedding (deferred mode, or a failed inline embed). */
export function turnBacklog(store: Pick<EpisodicStore, 'pendingEmbeddings' | 'setEmbeddings'>): EmbeddingBacklog<{ id: string; content: string }> {
  return {
    pending: (limit) => store.pendingEmbeddings(limit),
    text: (p) => p.content,
    save: (rows) => store.setEmbeddings(rows.map((r) => ({ id: r.item.id, embedding: r.embedding }))),
  };
}

/**
 * Catches up on a backlog of unembedded items: turns stored with deferred embedding (or
 * whose inline embedding failed), and facts or entities written while the embedder was
 * failing. Runs while there is work, then sleeps until `kick()` or the poll interval.
 * A batch that fails stays pending and is retried after a back-off; nothing is lost.
 */
export class BackgroundEmbedder<T = { id: string; content: string }> {
  private running = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** Items embedded since start, for metrics. */
  embedded = 0;

  constructor(
    private readonly backlog: EmbeddingBacklog<T>,
    private readonly embedder: Embedder,
    private readonly log: Logger,
    private readonly opts: { batchSize: number; pollMs: number; batchesPerRound: number; gate?: InteractiveGate } = { batchSize: 32, pollMs: 2_000, batchesPerRound: 8 },
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    this.loop = this.run();
  }

  /** New work arrived: stop sleeping. */
  kick(): void {
    this.wake?.();
  }

  /** Processes until nothing is pending (for tests and `reindex`). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.step();
      total += n;
      if (n === 0) return total;
    }
  }

  private async run(): Promise<void> {
    let backoff = 0;
    while (!this.stopped) {
      let n = 0;
      try {
        n = await this.step();
        backoff = 0;
      } catch (err) {
        backoff = Math.min(backoff ? backoff * 2 : 500, 30_000);
        this.log.warn({ subsystem: 'episodic', err: (err as Error).message, retryInMs: backoff }, 'background embedding failed; turns stay pending');
      }
      // stop() during a step finds no sleep to cut short: check again before sleeping a whole poll.
      if ((n === 0 || backoff > 0) && !this.stopped) await this.sleep(backoff || this.opts.pollMs);
    }
  }

  /**
   * Embeds up to `batchSize × batchesPerRound` pending items; returns how many. All batches
   * are handed to the embedder at once, so its workers stay busy while finished batches are
   * written; the only idle time is one read per round.
   */
  private async step(): Promise<number> {
    // Interactive calls first: wait (bounded) until none is under way before reading the backlog.
    await this.opts.gate?.idle();
    const pending = await this.backlog.pending(this.opts.batchSize * this.opts.batchesPerRound);
    if (pending.length === 0) return 0;
    const batches: Array<typeof pending> = [];
    for (let i = 0; i < pending.length; i += this.opts.batchSize) batches.push(pending.slice(i, i + this.opts.batchSize));
    const written = await Promise.all(
      batches.map(async (batch) => {
        await this.opts.gate?.idle();
        const vectors = await this.embedder.embed(
          batch.map((p) => this.backlog.text(p)),
          { priority: 'background' },
        );
        return this.backlog.save(batch.map((item, i) => ({ item, embedding: vectors[i]! })));
      }),
    );
    const n = written.reduce((a, b) => a + b, 0);
    this.embedded += n;
    return n;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.running = false;
    this.wake?.();
    await this.loop;
  }
}
