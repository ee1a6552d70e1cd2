import type { SemanticUpkeep } from '../../semantic/contract';
import type { JobContext, JobStats } from '../contract';

/**
 * Forgetting curve (seed 003): salience x rate^days since the last access, applied
 * incrementally. Each run multiplies by rate^(days since max(last access, last decay)) and
 * stamps `decayed_at`, so running twice at one instant changes nothing, and several runs
 * compose to exactly rate^(days since access) (rate^a x rate^b = rate^(a+b)).
 *
 * - Entities and facts not accessed for a day lose salience daily.
 * - Inferred facts (certainty `inferred`, or confidence at or below 0.70 without a label)
 *   also lose confidence, weekly (rate^weeks): slower, and only for guesses.
 * - Protected (confirmed) entities and facts, and closed facts, are exempt.
 */

export interface DecayDeps {
  semantic: Pick<SemanticUpkeep, 'decayEntities' | 'decayFacts'>;
  rate: number;
  weeklyRate: number;
  batchSize?: number;
}

/** `decay` (daily). Batches are separate transactions; each is idempotent, so an interrupted run resumes cleanly. */
export function decayJob(deps: DecayDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const now = ctx.clock.now().toISOString();
    const limit = deps.batchSize ?? 1000;
    const stats: JobStats = { entities: 0, facts: 0 };
    const userIds = ctx.userIds ?? null;
    const batches = {
      entities: () => deps.semantic.decayEntities({ now, rate: deps.rate, limit, userIds }),
      facts: () => deps.semantic.decayFacts({ now, rate: deps.rate, weeklyRate: deps.weeklyRate, limit, userIds }),
    };
    for (const key of ['entities', 'facts'] as const) {
      for (;;) {
        if (ctx.signal.aborted) return stats;
        await ctx.pause();
        const n = await batches[key]();
        stats[key]! += n;
        if (n < limit) break;
      }
    }
    return stats;
  };
}
