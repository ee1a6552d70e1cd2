import { indexOrFallback, SmallOwners } from '../../src/infra/vector-scan';

/** A vector search as the stores run it: the index returns `fromIndex` rows, the exact scan `exact`. */
function search(sizes: SmallOwners, fromIndex: number, exact = 3) {
  const calls: string[] = [];
  const run = () =>
    indexOrFallback(
      10,
      async (k) => (calls.push(`index k=${k}`), Array.from({ length: fromIndex }, (_, i) => `i${i}`)),
      async () => (calls.push('exact'), Array.from({ length: exact }, (_, i) => `e${i}`)),
      { sizes, userId: 'u1' },
    );
  return { calls, run };
}

describe('indexOrFallback with SmallOwners', () => {
  it('counts a small owner once, after the index came back short, and scans them exactly from then on', async () => {
    const counted: string[] = [];
    const sizes = new SmallOwners(async (userId) => (counted.push(userId), 3), 2_000);
    const s = search(sizes, 3);
    expect(await s.run()).toEqual(['e0', 'e1', 'e2']);
    expect(await s.run()).toEqual(['e0', 'e1', 'e2']);
    expect(s.calls).toEqual(['index k=100', 'exact', 'exact']);
    expect(counted).toEqual(['u1']);
    expect(sizes.known('u1')).toBe(true);
    expect(sizes.known('u2')).toBeUndefined();
  });

  it('keeps asking the index first for an owner over the line (counted once), and takes its rows when they are enough', async () => {
    let counts = 0;
    const sizes = new SmallOwners(async () => (counts++, 5_000), 2_000);
    const short = search(sizes, 4);
    await short.run();
    await short.run();
    expect(short.calls).toEqual(['index k=100', 'exact', 'index k=100', 'exact']);
    expect([counts, sizes.known('u1')]).toEqual([1, false]);
    const enough = search(sizes, 12);
    expect(await enough.run()).toHaveLength(12);
    expect(enough.calls).toEqual(['index k=100']);
  });

  it('does not count when the index answered enough, and a failed count leaves the owner unknown', async () => {
    let counts = 0;
    const enough = search(new SmallOwners(async () => (counts++, 1)), 10);
    await enough.run();
    expect(counts).toBe(0);
    const failing = new SmallOwners(() => Promise.reject(new Error('Neo4j away')));
    const s = search(failing, 2);
    expect(await s.run()).toEqual(['e0', 'e1', 'e2']);
    expect(failing.known('u1')).toBeUndefined();
  });
});
