import type { AccessScope } from '../../src/access';
import { ReadablePoolsPerRecall } from '../../src/retrieval/sources/readable-pools';

const scope = () => ({ tenantId: 't', agentId: 'a', userId: 'u' }) as unknown as AccessScope;

describe('ReadablePoolsPerRecall', () => {
  it('reads the grants once per recall (scope object) and again for the next one', async () => {
    let reads = 0;
    const memo = new ReadablePoolsPerRecall({ readablePools: () => Promise.resolve([{ id: `p${++reads}`, name: 'n' }]) });
    const first = scope();
    expect(await memo.readablePools(first)).toEqual([{ id: 'p1', name: 'n' }]);
    expect(await memo.readablePools(first)).toEqual([{ id: 'p1', name: 'n' }]);
    expect(await memo.readablePools(scope())).toEqual([{ id: 'p2', name: 'n' }]);
    expect(reads).toBe(2);
  });

  it('does not keep a failed read', async () => {
    let calls = 0;
    const memo = new ReadablePoolsPerRecall({ readablePools: () => (++calls === 1 ? Promise.reject(new Error('down')) : Promise.resolve([])) });
    const s = scope();
    await expect(memo.readablePools(s)).rejects.toThrow('down');
    await new Promise((r) => setImmediate(r));
    expect(await memo.readablePools(s)).toEqual([]);
    expect(calls).toBe(2);
  });
});
