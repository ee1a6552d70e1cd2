import type { AuditTrail } from '../../audit';
import type { PoolUpkeep } from '../../pools/contract';
import { minStaleAgeDays, staleness } from '../../pools/relevance';
import type { JobContext, JobStats } from '../contract';

export interface PoolsJobDeps {
  pools: PoolUpkeep;
  /** Where the expiry is recorded: one chained audit row per run that removed pools or entries. */
  trail: Pick<AuditTrail, 'recordDeletion'>;
  /** Raw cosine at which two entries of a pool about the same user (or none) are one (seed 001: 0.92). */
  duplicateCosine: number;
  /** Staleness (src/pools/relevance.ts) at which an entry is archived (seed 001: 0.9). */
  staleThreshold: number;
  staleHalfLifeDays: number;
  batchSize?: number;
}

const DAY_MS = 86_400_000;

/**
 * `pools` (daily, seed 001 memory maintenance): removes expired pools (with everything in
 * them) and expired entries (how many: one chained audit row); merges near-duplicate entries of each pool, keeping every
 * provenance in the survivor (`mergedFrom`, and a `merge` version in its history); archives
 * entries whose staleness reaches the threshold (out of recall and lists, still in the
 * pool's history and snapshots). Idempotent: a rerun finds nothing more to do.
 */
export function poolsJob(deps: PoolsJobDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const now = ctx.clock.now();
    const nowIso = now.toISOString();
    const limit = deps.batchSize ?? 500;
    const stats: JobStats = { poolsExpired: 0, entriesExpired: 0, merged: 0, archived: 0 };

    for (;;) {
      if (ctx.signal.aborted) return stats;
      await ctx.pause();
      const r = await deps.pools.removeExpired(nowIso, limit);
      stats.poolsExpired! += r.pools;
      stats.entriesExpired! += r.entries;
      if (r.pools < limit && r.entries < limit) break;
    }
    if (stats.poolsExpired! + stats.entriesExpired! > 0) await deps.trail.recordDeletion('expire_pools', 'shared', { pools: stats.poolsExpired!, entries: stats.entriesExpired! });

    // Near-duplicates, one pool at a time; an entry takes part in one merge per round, so
    // chains (a~b, b~c) settle over rounds of the loop.
    const minScore = (1 + deps.duplicateCosine) / 2;
    for (const poolId of await deps.pools.poolIds()) {
      for (let round = 0; round < 10; round++) {
        if (ctx.signal.aborted) return stats;
        await ctx.pause();
        const pairs = await deps.pools.duplicatePairs(poolId, minScore, limit);
        const used = new Set<string>();
        let merged = 0;
        for (const p of pairs) {
          if (used.has(p.a) || used.has(p.b)) continue;
          used.add(p.a).add(p.b);
          // The older id is not the older entry; the store keeps `a` and folds `b` into it.
          if (await deps.pools.mergeEntries(p.a, p.b, nowIso)) merged += 1;
        }
        stats.merged! += merged;
        if (merged === 0 || pairs.length === 0) break;
      }
    }

    // Stale context: only entries old enough that any importance could pass the threshold.
    const before = new Date(now.getTime() - minStaleAgeDays(deps.staleThreshold, deps.staleHalfLifeDays) * DAY_MS).toISOString();
    let afterId: string | null = null;
    for (;;) {
      if (ctx.signal.aborted) return stats;
      await ctx.pause();
      const batch = await deps.pools.staleCandidates(before, limit, afterId);
      const stale = batch.filter((e) => staleness(e, now.getTime(), deps.staleHalfLifeDays) >= deps.staleThreshold).map((e) => e.id);
      stats.archived! += await deps.pools.archiveEntries(stale, nowIso);
      if (batch.length < limit) break;
      afterId = batch[batch.length - 1]!.id;
    }
    return stats;
  };
}
