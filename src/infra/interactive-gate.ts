/** How long the gate must have seen no interactive call before background work goes on (ms). */
const DEFAULT_QUIET_MS = 20;
/**
 * The longest background work waits at `idle()` while interactive calls keep coming (ms): for a
 * caller who never pauses, each background loop runs one piece per this long. At 250 ms (and
 * 100 ms for an import's slice) storeTurn's p95 while an import wrote was 30-38 ms; at 1,000 ms
 * (and 500) 18-26, with the import 3.3x slower while the caller never paused (docs/recall-tuning.md).
 */
export const BACKGROUND_MAX_WAIT_MS = 1_000;

/**
 * Interactive work ahead of background work (issue #22): interactive calls (remember,
 * storeTurn) hold the gate while they run; background loops (the background embedders, bulk
 * imports between slices, the worker's jobs between items) wait at `idle()` before their next
 * piece, so while callers are served the background does not hold embedder threads, Neo4j
 * sessions or PostgreSQL connections. The gate counts as idle only once no interactive call
 * has run for `quietMs`: an agent's calls come in bursts (storeTurn, then recall a few
 * milliseconds later), and background work let in between two calls of a burst meets the
 * second one. A wait is bounded (`maxWaitMs`): background work is slowed under load, never
 * starved.
 */
export class InteractiveGate {
  private inFlight = 0;
  private lastLeft = Number.NEGATIVE_INFINITY;
  private waiters: Array<() => void> = [];

  constructor(private readonly quietMs = DEFAULT_QUIET_MS) {}

  /** Marks one interactive call under way; call the returned function when it ends (idempotent). */
  enter(): () => void {
    this.inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.lastLeft = performance.now();
      if (--this.inFlight === 0) {
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters) w();
      }
    };
  }

  /** Runs `work` as one interactive call. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const leave = this.enter();
    try {
      return await work();
    } finally {
      leave();
    }
  }

  /** Interactive calls under way now. */
  get busy(): number {
    return this.inFlight;
  }

  /** Resolves once no interactive call has run for `quietMs`, or after `maxWaitMs`. */
  async idle(maxWaitMs = BACKGROUND_MAX_WAIT_MS): Promise<void> {
    const deadline = performance.now() + maxWaitMs;
    for (;;) {
      const now = performance.now();
      if (now >= deadline) return;
      if (this.inFlight > 0) {
        await this.left(deadline - now);
        continue;
      }
      const quietLeft = this.lastLeft + this.quietMs - now;
      if (quietLeft <= 0) return;
      await sleep(Math.min(quietLeft, deadline - now));
    }
  }

  /** Resolves when the last call under way leaves, or after `ms`. */
  private left(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.waiters.push(done);
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
