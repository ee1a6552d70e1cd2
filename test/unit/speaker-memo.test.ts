import { userScope } from '../../src/access';
import { SpeakerMemo } from '../../src/retrieval/speaker-memo';

describe('SpeakerMemo', () => {
  const direct = (read: () => Promise<string[]>) => read();

  it('reads a user once, then re-reads in the background once stale, keeping names learned from hits', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const stored: Record<string, string[]> = { u: ['Caroline', 'Melanie'] };
      const reads: Array<() => void> = [];
      const memo = new SpeakerMemo(({ userId }) => new Promise((resolve) => reads.push(() => resolve([...(stored[userId] ?? [])]))), { ttlMs: 60_000 });
      expect(memo.peek('u')).toBeUndefined();
      const first = memo.get(userScope('u'), direct);
      reads[0]!();
      expect([...(await first)]).toEqual(['caroline', 'melanie']);
      await memo.get(userScope('u'), direct);
      expect(reads).toHaveLength(1);

      memo.add('u', ['Dr. Ann Lee']);
      stored.u!.push('John');
      jest.advanceTimersByTime(60_000);
      // Stale: answers at once with what it knows, and reads again behind the call.
      expect([...(await memo.get(userScope('u'), direct))].sort()).toEqual(['ann', 'caroline', 'dr', 'lee', 'melanie']);
      expect(reads).toHaveLength(2);
      await memo.get(userScope('u'), direct); // one refresh at a time
      expect(reads).toHaveLength(2);
      reads[1]!();
      await new Promise((r) => setImmediate(r));
      expect([...memo.peek('u')!].sort()).toEqual(['ann', 'caroline', 'dr', 'john', 'lee', 'melanie']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('keeps what it knows when a refresh fails, and forgets the oldest user past its bound', async () => {
    const errors: unknown[] = [];
    let fail = false;
    const memo = new SpeakerMemo(
      async ({ userId }) => {
        if (fail) throw new Error('neo4j down');
        return [userId];
      },
      { ttlMs: 0, maxUsers: 2, onRefreshError: (e) => errors.push(e) },
    );
    await memo.get(userScope('a'), direct);
    fail = true;
    await memo.get(userScope('a'), direct);
    await new Promise((r) => setImmediate(r));
    expect(errors).toHaveLength(1);
    expect([...memo.peek('a')!]).toEqual(['a']);

    fail = false;
    await memo.get(userScope('b'), direct);
    await memo.get(userScope('c'), direct);
    expect(memo.peek('a')).toBeUndefined();
    expect(memo.peek('b')).toBeDefined();
  });

  it('lets the caller handle a failed first read (recall answers without names)', async () => {
    const memo = new SpeakerMemo(() => Promise.reject(new Error('down')));
    const names = await memo.get(userScope('u'), (read) => read().catch(() => []));
    expect(names.size).toBe(0);
  });
});
