/**
 * Runs `work` over `items`, `size` at a time in order, awaiting `pause` between two slices:
 * how bulk work (a batch import) lets interactive calls in between its steps.
 */
export async function forEachSlice<T>(items: readonly T[], size: number, pause: (() => Promise<void>) | undefined, work: (slice: T[]) => unknown): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    if (i > 0) await pause?.();
    await work(items.slice(i, i + size));
  }
}
