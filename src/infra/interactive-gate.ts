/**
 * Interactive work ahead of background work (issue #22): interactive calls (remember,
 * storeTurn) hold the gate while they run; background loops (the background embedders)
 * wait at `idle()` before taking their next batch, so while callers are served the
 * background does not hold embedder threads, Neo4j sessions or PostgreSQL connections.
 * A wait is bounded (`maxWaitMs`): background work is slowed under load, never starved.
 */
export class InteractiveGate {
  private inFlight = 0;
  private waiters: Array<() => void> = [];

  /** Marks one interactive call under way; call the returned function when it ends (idempotent). */
  enter(): () => void {
    this.inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
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

  /** Resolves once no interactive call is under way, or after `maxWaitMs`. */
  idle(maxWaitMs = 250): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, maxWaitMs);
      timer.unref();
      this.waiters.push(done);
    });
  }
}
