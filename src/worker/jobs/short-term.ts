import type { AuditTrail } from '../../audit';
import { errorMessage } from '../../errors';
import type { PromotableEntry, ShortTermStore } from '../../short-term/contract';
import type { JobContext, JobStats, KnowledgeWriter } from '../contract';

export interface ShortTermJobDeps {
  store: Pick<ShortTermStore, 'promotable' | 'markPromoted' | 'deleteExpired'>;
  knowledge: Pick<KnowledgeWriter, 'storeFact'>;
  /** Where the expiry is recorded: one chained audit row per run that deleted entries. */
  trail: Pick<AuditTrail, 'recordDeletion'>;
  /** Reads at which an entry is promoted (SHORT_TERM_PROMOTE_MIN_ACCESS, seed 001: 3). */
  minAccess: number;
  batchSize: number;
}

/**
 * `short_term` (every 10 min; seed 001's consolidation pipeline): entries of the short-term
 * tier read at least `minAccess` times become facts in the user's semantic memory, then
 * expired entries are deleted (promoted or not), and how many is one chained audit row.
 *
 * Long-term here is a Fact, not an observation: a fact is recallable at once (embedded,
 * in the vector and full-text indexes), keeps the entry verbatim as its claim, and carries
 * the provenance on the node (`short_term_entry_id`, `session_id`, `agent_id`,
 * `memory_type`, `memory_key`, `access_count`; source `short_term:<agent>`); an observation
 * would wait for extraction, which may rephrase or split it. The fact id derives from the
 * entry id (`stm-<entry>`), so a run interrupted between the write and `markPromoted` writes
 * the same fact again (storeFact with an existing id is a no-op): promotion is idempotent.
 */
export function shortTermJob(deps: ShortTermJobDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const stats: JobStats = { promoted: 0, promotionsFailed: 0, expiredDeleted: 0 };
    const userIds = ctx.userIds ?? null;
    for (;;) {
      if (ctx.signal.aborted) return stats;
      await ctx.pause();
      const batch = await deps.store.promotable(deps.minAccess, deps.batchSize, userIds);
      let progressed = 0;
      for (const entry of batch) {
        if (ctx.signal.aborted) return stats;
        await ctx.pause();
        try {
          const { fact } = await deps.knowledge.storeFact(promotedFact(entry));
          await deps.store.markPromoted(entry.id, fact.id, ctx.clock.now());
          stats.promoted!++;
          progressed++;
        } catch (err) {
          stats.promotionsFailed!++;
          ctx.log.warn({ subsystem: 'worker', entryId: entry.id, err: errorMessage(err) }, 'short-term entry not promoted; retried next run');
        }
      }
      // A batch that promoted nothing would come back unchanged: stop, the failures are retried next run.
      if (batch.length < deps.batchSize || progressed === 0) break;
    }
    stats.expiredDeleted = await deps.store.deleteExpired(ctx.clock.now(), userIds);
    if (stats.expiredDeleted > 0) await deps.trail.recordDeletion('expire_short_term', 'short_term', { shortTermEntries: stats.expiredDeleted });
    return stats;
  };
}

/** The fact an entry becomes: its value verbatim as the claim, its provenance as properties. */
export function promotedFact(e: PromotableEntry) {
  const text = typeof e.value === 'string' ? e.value : JSON.stringify(e.value);
  return {
    id: `stm-${e.id}`,
    userId: e.userId,
    channel: e.channel,
    claim: `${e.key}: ${text}`.slice(0, 5_000),
    source: `short_term:${e.agentId ?? 'admin'}`,
    certainty: 'implied' as const,
    properties: {
      short_term_entry_id: e.id,
      session_id: e.sessionId,
      agent_id: e.agentId ?? '',
      memory_type: e.type,
      memory_key: e.key,
      access_count: e.accessCount,
    },
  };
}
