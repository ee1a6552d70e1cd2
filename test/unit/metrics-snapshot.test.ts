import { Snapshot } from '../../src/api/metrics';

describe('metrics Snapshot', () => {
  it('reads once for gauges collected together, keeps the value maxAgeMs, and keeps the last value when a read fails', async () => {
    let reads = 0;
    let fail = false;
    const failures: unknown[] = [];
    const snap = new Snapshot(
      async () => {
        reads++;
        await new Promise((r) => setTimeout(r, 5));
        if (fail) throw new Error('Neo4j away');
        return reads;
      },
      20,
      (err) => failures.push(err),
    );
    expect(await Promise.all([snap.get(), snap.get(), snap.get()])).toEqual([1, 1, 1]);
    expect(await snap.get()).toBe(1);
    expect(reads).toBe(1);
    await new Promise((r) => setTimeout(r, 25));
    fail = true;
    expect(await Promise.all([snap.get(), snap.get()])).toEqual([1, 1]);
    expect([reads, failures.length]).toEqual([2, 1]);
    fail = false;
    expect(await snap.get()).toBe(3);
  });
});
