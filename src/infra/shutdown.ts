/**
 * Process shutdown for the long-running commands (serve, start, worker, mcp): wait for
 * SIGINT/SIGTERM, then stop within SHUTDOWN_TIMEOUT_MS. A second signal while stopping gets
 * Node's default (the process ends at once).
 */

/** Resolves with the first SIGINT or SIGTERM received, or when `also` settles (e.g. stdin ends). */
export function shutdownSignal(also?: Promise<unknown>): Promise<NodeJS.Signals | 'end'> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      off();
      resolve(signal);
    };
    const off = () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    };
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
    void also?.finally(() => {
      off();
      resolve('end');
    });
  });
}

/**
 * The backstop of a deadline: exits the process with code 1 if it is still running `ms` from
 * now, after saying which step was still waiting. The timer does not keep the process alive.
 */
export function exitAfter(ms: number, what: () => string): void {
  setTimeout(() => {
    console.error(`mnemograph: still stopping ${ms} ms after the signal (${what()}); exiting`);
    process.exit(1);
  }, ms).unref();
}

/** Waits for `work` until the epoch time `until` at most; false when the time ran out first. */
export async function settlesBy(work: Promise<unknown>, until: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()));
  });
  try {
    return await Promise.race([
      work.then(
        () => true as const,
        () => true as const,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
