import { MemoryWorkingStore } from '../../src/working';
import { sessionScope } from '../../src/working/contract';
import { userScope } from '../../src/access';

/** The process-memory working store (Redis' fallback) drops deleted turns like the Redis one, keeping the list's expiry. */
describe('MemoryWorkingStore.removeTurns', () => {
  it('removes the turns with the given indexes and keeps the rest in order until the list expires', async () => {
    let now = 0;
    const store = new MemoryWorkingStore(60, 10, () => now);
    const s = sessionScope(userScope('u1'), 'c1');
    await store.addTurns(
      s,
      [0, 1, 2].map((index) => ({ id: `c1:${index}`, role: 'user', content: `turn ${index}`, timestamp: '2026-01-01T00:00:00Z', index })),
    );
    expect(await store.removeTurns(s, [1, 7])).toBe(1);
    expect((await store.getRecentTurns(s, 10)).map((t) => t.index)).toEqual([2, 0]);
    expect(await store.removeTurns(sessionScope(userScope('u1'), 'other'), [0])).toBe(0);
    now = 61_000;
    expect(await store.getRecentTurns(s, 10)).toEqual([]);
  });
});
