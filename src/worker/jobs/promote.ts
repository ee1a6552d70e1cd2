import { errorMessage } from '../../errors';
import type { PromotionThresholds } from '../../semantic/contract';
import type { JobContext, JobStats, KnowledgeWriter } from '../contract';

export interface PromoteDeps {
  knowledge: KnowledgeWriter;
  thresholds: PromotionThresholds;
  batchSize: number;
}

/**
 * `promote` (hourly): project facts past EVERY threshold (confidence, access count,
 * distinct conversations) get a `_global` copy linked PROMOTED_FROM. The store re-checks
 * the thresholds when promoting and is idempotent, so two workers cannot promote twice;
 * the facade's promoteToGlobal writes the audit row (the measures and the thresholds in force).
 */
export function promoteJob(deps: PromoteDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const stats: JobStats = { candidates: 0, promoted: 0, skipped: 0, failed: 0 };
    let candidates = await deps.knowledge.findPromotionCandidates(deps.thresholds, deps.batchSize);
    if (ctx.userIds) candidates = candidates.filter((c) => ctx.userIds!.includes(c.userId));
    stats.candidates = candidates.length;
    for (const c of candidates) {
      if (ctx.signal.aborted) break;
      await ctx.pause();
      try {
        const r = await deps.knowledge.promoteToGlobal({ userId: c.userId, factId: c.factId, reason: 'worker promote job: past every promotion threshold', thresholds: deps.thresholds });
        if (!r.promoted) {
          stats.skipped!++;
          continue;
        }
        stats.promoted!++;
      } catch (err) {
        stats.failed!++;
        ctx.log.warn({ subsystem: 'worker', factId: c.factId, err: errorMessage(err) }, 'promotion failed');
      }
    }
    return stats;
  };
}
