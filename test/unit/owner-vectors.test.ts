import { OwnerVectors, type HeldFilter, type OwnedVector, type VectorRead } from '../../src/infra/owner-vectors';

const ALL: HeldFilter = { channels: ['work', '_global'], since: -Infinity, until: Infinity, connections: null };
/** A node as Neo4j holds it: with when it was embedded (0: before `embedded_at` was kept). */
type Stored = OwnedVector & { embeddedAt: number };
const node = (id: string, embedding: number[], extra: Partial<Stored> = {}): Stored => ({
  id,
  channel: 'work',
  timestamp: 1_000,
  connectionId: null,
  embedding,
  embeddedAt: 0,
  ...extra,
});

/** OwnerVectors over `rows` per owner, read at Neo4j time `clock.neo4j`; `reads` records each read (owner, after). */
function held(rows: Record<string, Stored[]>, opts: { maxVectors?: number; now?: () => number } = {}, clock = { neo4j: 0 }) {
  const reads: Array<[string, number | null]> = [];
  const v = new OwnerVectors(
    async (owner, after) => {
      reads.push([owner, after]);
      return { at: clock.neo4j, nodes: (rows[owner] ?? []).filter((r) => after === null || r.embeddedAt > after) };
    },
    { firstReadDelayMs: 0, ...opts },
  );
  return { v, reads };
}

/** Searches each owner twice (the second search has them read) and waits until they are held. */
async function hold(v: OwnerVectors, owners: string[], dims = 2): Promise<void> {
  const unitX = Array.from({ length: dims }, (_, k) => (k === 0 ? 1 : 0));
  for (let i = 0; i < 2; i++) for (const o of owners) v.rank(o, unitX, ALL, 10);
  await v.settled();
}

describe('OwnerVectors', () => {
  it('reads an owner in the background on their second search (undefined until held), then ranks by cosine as Neo4j normalises it', async () => {
    const { v, reads } = held({ u1: [node('a', [1, 0]), node('b', [0, 1]), node('c', [1, 1]), node('d', [-1, 0])] });
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined();
    await v.settled();
    expect(reads).toEqual([]); // searched once: a user asked about once is not read
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined();
    await v.settled();
    const r = v.rank('u1', [2, 0], ALL, 3)!;
    expect(r.ranked.map((x) => x.id)).toEqual(['a', 'c', 'b']);
    // (1 + cos) / 2, as vector.similarity.cosine: 1, (1 + 1/√2) / 2, 0.5 (d, at 0, is fourth)
    expect(r.ranked.map((x) => x.score)).toEqual([1, expect.closeTo((1 + Math.SQRT1_2) / 2, 6), 0.5]);
    expect(r.complete).toBe(false);
    expect(v.rank('u1', [1, 0], ALL, 4)!.complete).toBe(true);
    expect(reads).toEqual([['u1', null]]);
  });

  it("search: the store's statement over the ranking once held; the scan before, without a filter memory knows, or when the statement kept too few of a cut ranking", async () => {
    // 20 nodes: a cut ranking (limit 2 + 16 slack = 18 ids) is incomplete, a limit of 10 is complete.
    const { v } = held({ u1: Array.from({ length: 20 }, (_, i) => node(`n${i}`, [1, i])) });
    const calls: string[] = [];
    const statement = (rows: number) => async (r: { ranked: Array<{ id: string }> }) => (calls.push(`held ${r.ranked.length}`), r.ranked.slice(0, rows).map((x) => x.id));
    const scan = async () => (calls.push('scan'), ['scanned']);
    const search = (filter: HeldFilter | undefined, limit: number, rows: number) => v.search('u1', [1, 0], filter, limit, statement(rows), scan);
    expect(await search(ALL, 2, 2)).toEqual(['scanned']); // not held: searched once
    expect(await search(undefined, 2, 2)).toEqual(['scanned']); // a filter memory does not know: not a search that reads
    expect(await search(ALL, 2, 2)).toEqual(['scanned']); // the second search: read in the background
    await v.settled();
    expect(await search(ALL, 2, 2)).toEqual(['n0', 'n1']);
    expect(await search(ALL, 2, 1)).toEqual(['scanned']); // the statement dropped too many of a cut ranking
    expect(await search(ALL, 10, 1)).toEqual(['n0']); // a complete ranking: nothing else to find
    expect(await search(undefined, 2, 2)).toEqual(['scanned']);
    expect(calls).toEqual(['scan', 'scan', 'scan', 'held 18', 'held 18', 'scan', 'held 20', 'scan']);
  });

  it("waits for idle (interactive calls first) before a background read, not before warm-up's hold", async () => {
    const reads: string[] = [];
    let open!: () => void;
    let idle = new Promise<void>((resolve) => (open = resolve));
    const v = new OwnerVectors(async (owner) => (reads.push(owner), { at: 0, nodes: [node('a', [1, 0])] }), { firstReadDelayMs: 0, idle: () => idle });
    v.rank('u1', [1, 0], ALL, 10);
    v.rank('u1', [1, 0], ALL, 10);
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toEqual([]);
    open();
    await v.settled();
    expect(reads).toEqual(['u1']);
    idle = new Promise<void>(() => {}); // never idle
    await v.hold('u2');
    expect(reads).toEqual(['u1', 'u2']);
  });

  it("waits before an owner's first read, so that it does not run beside the search that asked", async () => {
    const reads: string[] = [];
    const v = new OwnerVectors(async (owner) => (reads.push(owner), { at: 0, nodes: [node('a', [1, 0])] }), { firstReadDelayMs: 40 });
    v.rank('u1', [1, 0], ALL, 10);
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toEqual([]);
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined(); // one read in flight, not two
    await v.settled();
    expect(reads).toEqual(['u1']);
    expect(v.rank('u1', [1, 0], ALL, 10)!.ranked).toHaveLength(1);
  });

  it("applies the filter's channels, time window and connections before ranking", async () => {
    const { v } = held({
      u1: [
        node('work', [1, 0]),
        node('other', [1, 0], { channel: 'home' }),
        node('global', [0.9, 0.1], { channel: '_global' }),
        node('early', [1, 0], { timestamp: 10 }),
        node('conn-a', [1, 0], { connectionId: 'a' }),
        node('conn-b', [1, 0], { connectionId: 'b' }),
      ],
    });
    await hold(v, ['u1']);
    const ids = (f: Partial<HeldFilter>) =>
      v
        .rank('u1', [1, 0], { ...ALL, ...f }, 10)!
        .ranked.map((x) => x.id)
        .sort();
    expect(ids({})).toEqual(['conn-a', 'conn-b', 'early', 'global', 'work']);
    expect(ids({ since: 500 })).toEqual(['conn-a', 'conn-b', 'global', 'work']);
    expect(ids({ until: 500 })).toEqual(['early']);
    // Active connections: nodes without one, and those of the listed ones.
    expect(ids({ connections: ['a'] })).toEqual(['conn-a', 'early', 'global', 'work']);
    expect(ids({ channels: ['home'] })).toEqual(['other']);
  });

  it('trusts memory up to a minute before its last read, reads the nodes embedded since every 30 s (a re-embedded node in place), all after 10 minutes', async () => {
    let now = 0;
    const clock = { neo4j: 500_000 };
    const rows: Stored[] = [node('old', [1, 0]), node('new', [0, 1], { embeddedAt: 450_000 })];
    const { v, reads } = held({ u1: rows }, { now: () => now }, clock);
    await hold(v, ['u1']);
    // Nodes embedded after `seen` are scored by the statement itself, not trusted from here.
    expect(v.rank('u1', [1, 0], ALL, 10)!.seen).toBe(440_000);
    rows[1] = node('new', [1, 1], { embeddedAt: 505_000 }); // embedded again
    rows.push(node('newer', [1, 0], { embeddedAt: 520_000 }));
    clock.neo4j = 530_000;
    now = 29_000;
    v.rank('u1', [1, 0], ALL, 10);
    expect(reads).toEqual([['u1', null]]);
    now = 31_000;
    const stale = v.rank('u1', [1, 0], ALL, 10)!;
    expect(stale.ranked.map((x) => x.id)).toEqual(['old', 'new']);
    expect(stale.ranked[1]!.score).toBe(0.5);
    await v.settled();
    expect(reads).toEqual([
      ['u1', null],
      ['u1', 440_000],
    ]);
    const after = v.rank('u1', [1, 0], ALL, 10)!;
    expect(after.ranked.map((x) => x.id)).toEqual(['old', 'newer', 'new']);
    expect(after.ranked[2]!.score).toBeCloseTo((1 + Math.SQRT1_2) / 2, 6);
    expect(after.seen).toBe(470_000);
    // After ten minutes everything is read again (a deleted node leaves memory).
    rows.splice(0, 1);
    clock.neo4j = 1_200_000;
    now = 31_000 + 10 * 60_000;
    v.rank('u1', [1, 0], ALL, 10);
    await v.settled();
    expect(reads.at(-1)).toEqual(['u1', null]);
    const reloaded = v.rank('u1', [1, 0], ALL, 10)!;
    expect(reloaded.ranked.map((x) => x.id)).toEqual(['newer', 'new']);
    expect(reloaded.seen).toBe(1_140_000);
  });

  it('trusts memory up to a second before the oldest transaction open at the read began, else a minute before the read', async () => {
    const opened: Array<number | undefined> = [];
    const at = 500_000;
    const v = new OwnerVectors(async () => ({ at, openSince: opened.shift(), nodes: [node('a', [1, 0])] }), { firstReadDelayMs: 0 });
    const seen = async (openSince: number | undefined) => {
      opened.push(openSince);
      await v.hold('u1');
      return v.rank('u1', [1, 0], ALL, 10)!.seen;
    };
    expect(await seen(499_990)).toBe(498_990); // only short transactions open (the listing's own, at least)
    v.release('u1', false);
    expect(await seen(480_000)).toBe(479_000); // one open for 20 s: its nodes may commit after the read
    v.release('u1', false);
    expect(await seen(300_000)).toBe(440_000); // one open for minutes does not hold memory back
    v.release('u1', false);
    expect(await seen(undefined)).toBe(440_000); // Neo4j would not list them
  });

  it('drops an owner not ranked for ten minutes, and a read that began before a release (an erasure) is not kept', async () => {
    let now = 0;
    const { v } = held({ u1: [node('a', [1, 0])], u2: [node('b', [1, 0])] }, { now: () => now });
    await hold(v, ['u1', 'u2']);
    now = 5 * 60_000;
    expect(v.rank('u2', [1, 0], ALL, 10)).toBeDefined();
    now = 10 * 60_000 + 1;
    expect(v.rank('u2', [1, 0], ALL, 10)).toBeDefined(); // ranked five minutes ago: kept (and read again, being ten minutes old)
    await v.settled();
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined(); // not ranked since it was read: dropped when u2 was ranked

    let finish!: () => void;
    const slow = new OwnerVectors(() => new Promise<VectorRead>((resolve) => (finish = () => resolve({ at: 0, nodes: [node('a', [1, 0])] }))), { firstReadDelayMs: 0 });
    slow.rank('u1', [1, 0], ALL, 10);
    slow.rank('u1', [1, 0], ALL, 10); // the read begins
    await new Promise((r) => setTimeout(r, 0));
    slow.release('u1', false); // the user is erased meanwhile
    finish();
    await slow.settled();
    expect(slow.rank('u1', [1, 0], ALL, 10)).toBeUndefined();
  });

  it('warm-up: release(scanOnly) keeps an owner out of memory until hold(), which reads them at once', async () => {
    const { v, reads } = held({ u1: [node('a', [1, 0])] });
    v.release('u1', true);
    await hold(v, ['u1']);
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined();
    expect(reads).toEqual([]);
    await v.hold('u1');
    expect(v.rank('u1', [1, 0], ALL, 10)!.ranked.map((x) => x.id)).toEqual(['a']);
    v.release('u1', false);
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined();
    expect(reads).toEqual([['u1', null]]);
  });

  it('drops the least recently ranked owner when the vectors held pass the limit', async () => {
    const rows: Record<string, Stored[]> = { u1: [node('a', [1, 0]), node('b', [0, 1])], u2: [node('c', [1, 0])], u3: [node('d', [1, 0]), node('e', [0, 1])] };
    const { v, reads } = held(rows, { maxVectors: 4 });
    await hold(v, ['u1', 'u2']);
    expect(v.rank('u2', [1, 0], ALL, 10)!.ranked.map((x) => x.id)).toEqual(['c']);
    v.rank('u1', [1, 0], ALL, 10); // u1 ranked last: u2 is the least recent
    await hold(v, ['u3']);
    expect(v.rank('u2', [1, 0], ALL, 10)).toBeUndefined();
    expect(v.rank('u3', [1, 0], ALL, 10)!.ranked.map((x) => x.id)).toEqual(['d', 'e']);
    await v.settled();
    expect(reads.filter(([u]) => u === 'u2')).toHaveLength(2);
  });

  it('returns undefined for a query of another dimension, and keeps what it holds when a read fails', async () => {
    let now = 0;
    let fail = false;
    const v = new OwnerVectors(
      async () => {
        if (fail) throw new Error('neo4j down');
        return { at: 0, nodes: [node('a', [1, 0, 0])] };
      },
      { now: () => now, firstReadDelayMs: 0 },
    );
    await hold(v, ['u1'], 3);
    expect(v.rank('u1', [1, 0], ALL, 10)).toBeUndefined();
    fail = true;
    now = 11 * 60_000; // due to be read again whole: the read fails
    expect(v.rank('u1', [1, 0, 0], ALL, 10)!.ranked.map((x) => x.id)).toEqual(['a']);
    await v.settled();
    expect(v.rank('u1', [1, 0, 0], ALL, 10)!.ranked.map((x) => x.id)).toEqual(['a']);
    // An owner whose first read fails is not held: the caller scans in Neo4j.
    await hold(v, ['u2'], 3);
    expect(v.rank('u2', [1, 0, 0], ALL, 10)).toBeUndefined();
  });
});
