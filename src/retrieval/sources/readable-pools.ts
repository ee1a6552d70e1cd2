import type { AccessScope } from '../../access';
import type { PoolStore } from '../../pools/contract';

type Readable = Awaited<ReturnType<PoolStore['readablePools']>>;

/**
 * The pools the acting agent may read, asked once per recall: presence (does the agent read
 * any pool?) and the pool source (which ones?) share one read of the grants. Keyed by the
 * recall's scope object, which the facade builds once per call, so the next call reads the
 * grants again and a revoke holds for it; nothing outlives the recall.
 */
export class ReadablePoolsPerRecall implements Pick<PoolStore, 'readablePools'> {
  private readonly asked = new WeakMap<AccessScope, Promise<Readable>>();

  constructor(private readonly store: Pick<PoolStore, 'readablePools'>) {}

  readablePools(scope: AccessScope): Promise<Readable> {
    let pools = this.asked.get(scope);
    if (!pools) {
      pools = this.store.readablePools(scope);
      this.asked.set(scope, pools);
      // A failed read is not kept: the caller that saw it reports it, a later caller asks again.
      pools.catch(() => this.asked.delete(scope));
    }
    return pools;
  }
}
