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
  it('counts an owner once, first, and scans a small one exactly without asking the index', async () => {
    const counted: string[] = [];
    const sizes = new SmallOwners(async (userId) => (counted.push(userId), 3), 2_000);
    const s = search(sizes, 3);
    expect(await s.run()).toEqual(['e0', 'e1', 'e2']);
    expect(await s.run()).toEqual(['e0', 'e1', 'e2']);
    expect(s.calls).toEqual(['exact', 'exact']);
    expect(counted).toEqual(['u1']);
    expect(sizes.known('u1')).toBe(true);
    expect(sizes.known('u2')).toBeUndefined();
  });

  it('asks the index first for an owner over the line (counted once), takes its rows when they are enough, else the exact scan', async () => {
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

  it('a failed count leaves the owner unknown and the search goes on as without a count', async () => {
    let fail = true;
    const failing = new SmallOwners(() => (fail ? Promise.reject(new Error('Neo4j away')) : Promise.resolve(1)));
    const s = search(failing, 2);
    expect(await s.run()).toEqual(['e0', 'e1', 'e2']);
    expect(s.calls).toEqual(['index k=100', 'exact']);
    expect(failing.known('u1')).toBeUndefined();
    fail = false;
    await s.run();
    expect(s.calls.slice(2)).toEqual(['exact']);
    expect(failing.known('u1')).toBe(true);
  });

  it('without an owner: the index, then the exact scan when it came back short', async () => {
    const calls: string[] = [];
    const rows = await indexOrFallback(
      10,
      async (k) => (calls.push(`index k=${k}`), ['a']),
      async () => (calls.push('exact'), ['b']),
    );
    expect([rows, calls]).toEqual([['b'], ['index k=100', 'exact']]);
  });
});
