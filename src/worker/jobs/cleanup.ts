import type { ConversationUpkeep } from '../../episodic/contract';
import { normalizeValue } from '../../extraction/contradictions';
import type { SemanticUpkeep } from '../../semantic/contract';
import type { ConsolidationLedger, JobContext, JobStats } from '../contract';

export interface CleanupDeps {
  conversations: Pick<ConversationUpkeep, 'archiveIdle' | 'expiredConversations'>;
  semantic: Pick<SemanticUpkeep, 'duplicateFactPairs' | 'mergeDuplicateFacts'>;
  ledger: ConsolidationLedger;
  archiveDays: number;
  duplicateSimilarity: number;
  /**
   * The operator's retention rule (off when absent): conversations idle more than `days` are
   * deleted by `forget` (src/forgetting: what was learned only from them goes too, confirmed
   * facts stay, each delete audited as `retention_delete`).
   */
  retention?: { days: number; forget: (userId: string, conversationId: string) => Promise<unknown> };
  batchSize?: number;
}

function props(json: string | null): Record<string, unknown> {
  try {
    return json ? (JSON.parse(json) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Two similar claims are duplicates only when they say the same thing: the same object
 * and polarity when extraction recorded them ("works at Google" and "works at Microsoft"
 * embed close together but contradict; merging them would hide the contradiction).
 */
export function sameStatement(aJson: string | null, bJson: string | null): boolean {
  const a = props(aJson);
  const b = props(bJson);
  const obj = (p: Record<string, unknown>) => (typeof p.object === 'string' ? normalizeValue(p.object) : '');
  const pol = (p: Record<string, unknown>) => (p.polarity === 'negative' ? 'negative' : 'positive');
  return obj(a) === obj(b) && pol(a) === pol(b);
}

/**
 * `cleanup` (daily): moves conversations idle for `archiveDays` to the archive tier (a label:
 * archived memory stays in recall), applies the retention rule when the operator set one,
 * merges near-duplicate facts (keeping the protected, then the more confident, then the older
 * one), and prunes the consolidation ledger. Nothing leaves recall here but by the retention
 * rule: decayed entities and facts rank lower, they are not hidden.
 */
export function cleanupJob(deps: CleanupDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const now = ctx.clock.now().toISOString();
    const limit = deps.batchSize ?? 500;
    const userIds = ctx.userIds ?? null;
    const stats: JobStats = { archived: 0, retentionDeleted: 0, factsMerged: 0, ledgerPruned: 0 };
    for (;;) {
      if (ctx.signal.aborted) return stats;
      await ctx.pause();
      const n = await deps.conversations.archiveIdle({ now, days: deps.archiveDays, limit, userIds });
      stats.archived! += n;
      if (n < limit) break;
    }
    for (const r = deps.retention; r;) {
      if (ctx.signal.aborted) return stats;
      const expired = await deps.conversations.expiredConversations({ now, days: r.days, limit, userIds });
      for (const c of expired) {
        if (ctx.signal.aborted) return stats;
        await ctx.pause();
        await r.forget(c.userId, c.id);
        stats.retentionDeleted!++;
      }
      if (expired.length < limit) break;
    }
    const pairs = await deps.semantic.duplicateFactPairs({ threshold: deps.duplicateSimilarity, limit, userIds });
    for (const p of pairs) {
      if (ctx.signal.aborted) return stats;
      await ctx.pause();
      if (!sameStatement(p.aProps, p.bProps) || (p.aProtected && p.bProtected)) continue;
      const aFirst = p.aProtected !== p.bProtected ? p.aProtected : p.aConfidence !== p.bConfidence ? p.aConfidence > p.bConfidence : p.aCreated <= p.bCreated;
      const [keepId, dupId] = aFirst ? [p.aId, p.bId] : [p.bId, p.aId];
      stats.factsMerged! += await deps.semantic.mergeDuplicateFacts(keepId, dupId, now);
    }
    if (!ctx.userIds) stats.ledgerPruned = await deps.ledger.prune(new Date(ctx.clock.now().getTime() - 7 * 86_400_000));
    return stats;
  };
}
