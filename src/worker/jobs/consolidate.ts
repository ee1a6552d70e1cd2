import type { ExtractedFact, ExtractionResult, ExtractionTurn, Extractor } from '../../extraction/contract';
import { INTERNAL_USER } from '../../access';
import { errorMessage } from '../../errors';
import type { ConsolidationTurn, ConversationUpkeep } from '../../episodic/contract';
import type { Queryable } from '../../infra/postgres';
import type { Observation, ObservationQueue } from '../../observations/contract';
import type { PgProfileStore, ProfileFact } from '../../observations/profile';
import type { KnowledgeApplier } from '../apply-extraction';
import type { SettingsStore } from '../../settings/contract';
import type { JobContext, JobStats, LockService } from '../contract';

export interface ConsolidateDeps {
  conversations: Omit<ConversationUpkeep, 'findPatternCandidates' | 'markPatternsExtracted' | 'archiveIdle' | 'consolidationBacklog'>;
  extractor: Extractor;
  applier: KnowledgeApplier;
  observations: ObservationQueue;
  profiles: Pick<PgProfileStore, 'learn'>;
  /** Users with automatic mining off (seed 002 autoMine) are skipped. */
  settings: Pick<SettingsStore, 'miningOff'>;
  locks: LockService;
  windowTurns: number;
  batchSize: number;
  lockTtlMs: number;
}

/**
 * `consolidate` (every 15 min): conversations with unconsolidated turns, then pending
 * observations, become entities and facts; each user touched gets a refreshed profile
 * and narrative. A conversation is handled under `consolidation:lock:<id>`, window by
 * window, moving its checkpoint after each window; an extraction failure (API down, bad
 * output) stops that conversation where it is, to be retried on the next run.
 */
export function consolidateJob(deps: ConsolidateDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const stats: JobStats = {
      conversations: 0,
      conversationsSkipped: 0,
      conversationsFailed: 0,
      windows: 0,
      facts: 0,
      entities: 0,
      observations: 0,
      observationBatchesFailed: 0,
      usersMiningOff: 0,
    };
    // Users with automatic mining off (or memory disabled) are left out of the search itself,
    // so their conversations never crowd others out of a batch; turned back on, what
    // accumulated is mined on the next run.
    const miningOff = await deps.settings.miningOff(ctx.userIds ?? null);
    stats.usersMiningOff = miningOff.length;
    // Nor is warm-up's made-up memory (erased seconds later: what was learnt from it would stay).
    const candidates = await deps.conversations.findUnconsolidated(deps.batchSize, ctx.userIds ?? null, [...miningOff, INTERNAL_USER]);
    for (const conv of candidates) {
      if (ctx.signal.aborted) break;
      await ctx.pause();
      const lockKey = `consolidation:lock:${conv.id}`;
      const token = await deps.locks.acquire(lockKey, deps.lockTtlMs);
      if (token === null) {
        stats.conversationsSkipped!++;
        continue;
      }
      try {
        const outcome = await consolidateConversation(deps, ctx, conv, async () => {
          if (!(await deps.locks.extend(lockKey, token, deps.lockTtlMs))) throw new Error(`lost ${lockKey}; another worker took over`);
        });
        stats.conversations! += outcome.done ? 1 : 0;
        stats.windows! += outcome.windows;
        stats.facts! += outcome.facts;
        stats.entities! += outcome.entities;
      } catch (err) {
        stats.conversationsFailed!++;
        ctx.log.warn({ subsystem: 'worker', conversationId: conv.id, err: errorMessage(err) }, 'conversation left unconsolidated; retried next run');
      } finally {
        await deps.locks.release(lockKey, token).catch(() => undefined);
      }
    }

    const off = new Set(miningOff);
    const pendingUsers = (ctx.userIds ?? (await deps.observations.pendingUsers(deps.batchSize + off.size))).filter((u) => !off.has(u));
    for (const userId of pendingUsers) {
      if (ctx.signal.aborted) break;
      await ctx.pause();
      const outcome = await deps.observations.processBatch(userId, 100, (batch, tx) => applyObservations(deps, ctx, userId, batch, tx));
      stats.observations! += outcome.processed;
      if (outcome.error) {
        stats.observationBatchesFailed!++;
        ctx.log.warn({ subsystem: 'worker', userId, claimed: outcome.claimed, err: outcome.error }, 'observations left queued; retried next run');
      }
    }
    return stats;
  };
}

async function consolidateConversation(
  deps: ConsolidateDeps,
  ctx: JobContext,
  conv: { id: string; userId: string; channel: string },
  heartbeat: () => Promise<void>,
): Promise<{ done: boolean; windows: number; facts: number; entities: number }> {
  const out = { done: false, windows: 0, facts: 0, entities: 0 };
  const state = await deps.conversations.consolidationState(conv.id);
  if (!state) return out;
  let through = state.through;
  const learned: ProfileFact[] = [];
  while (through < state.turnCount - 1) {
    if (ctx.signal.aborted) return out;
    await ctx.pause();
    const rows: ConsolidationTurn[] = await deps.conversations.turnsAfter(conv.id, conv.userId, through, deps.windowTurns);
    if (rows.length === 0) break;
    const turns: ExtractionTurn[] = rows.map((r) => ({ id: r.id, role: r.role, content: r.content, timestamp: r.timestamp, speaker: r.speaker ?? undefined }));
    const result = await deps.extractor.extract({ userId: conv.userId, channel: conv.channel, conversationId: conv.id, turns });
    // Extraction can take seconds (an LLM): the user may have been erased meanwhile, and what
    // was extracted from their turns must not be written back.
    if ((await deps.conversations.consolidationState(conv.id)) === null) {
      ctx.log.info({ subsystem: 'worker', conversationId: conv.id }, 'conversation gone while extracting (user erased?); nothing written');
      return out;
    }
    const last = rows[rows.length - 1]!;
    const applied = await deps.applier.apply(
      result,
      { userId: conv.userId, channel: conv.channel, sourceId: `conv:${conv.id}`, mentionTurnId: last.id, saidAt: last.timestamp },
      deps.extractor.provider,
      () => ctx.pause(),
    );
    await deps.conversations.checkpointConsolidation(conv.id, last.index);
    through = last.index;
    out.windows++;
    out.facts += applied.facts + applied.reinforced;
    out.entities += applied.entities;
    learned.push(...userFacts(result, turns));
    await heartbeat();
  }
  await deps.conversations.markConsolidated(conv.id, ctx.clock.now().toISOString());
  out.done = true;
  if (learned.length > 0)
    await deps.profiles.learn(
      conv.userId,
      learned,
      [],
      learned.map((f) => f.claim),
    );
  return out;
}

/** Facts about the person speaking in user turns: those shape the user's profile. */
function userFacts(result: ExtractionResult, turns: ExtractionTurn[]): ProfileFact[] {
  const userNames = new Set(turns.filter((t) => t.role === 'user').map((t) => (t.speaker ?? 'user').toLowerCase()));
  userNames.add('user');
  return result.facts.filter((f) => userNames.has(f.subject.toLowerCase())).map(toProfileFact);
}

function toProfileFact(f: ExtractedFact): ProfileFact {
  return { claim: f.claim, relation: f.relation, object: f.object, polarity: f.polarity, singleValued: f.singleValued, temporal: f.temporal, ...(f.ends ? { ends: true } : {}) };
}

/** "The user prefers X" / "User's sister is Y" -> first person, so the same rules apply. */
export function observationAsFirstPerson(content: string): string {
  return content
    .replace(/^\s*(?:the\s+)?user's\s+/i, 'My ')
    .replace(/^\s*(?:the\s+)?user\s+(?:is|was)\s+/i, "I'm ")
    .replace(/^\s*(?:the\s+)?user\s+(\w+?)s\b/i, 'I $1')
    .replace(/^\s*(?:the\s+)?user\s+/i, 'I ');
}

/**
 * One user's batch of observations, inside the queue's transaction: one extraction over
 * all of them, each observation's items keyed by its id in the ledger, then the profile
 * and narrative in the same transaction that marks them processed.
 */
async function applyObservations(deps: ConsolidateDeps, ctx: JobContext, userId: string, batch: Observation[], tx: Queryable): Promise<void> {
  const byChannel = new Map<string, Observation[]>();
  for (const o of batch) byChannel.set(o.channel, [...(byChannel.get(o.channel) ?? []), o]);
  const learned: ProfileFact[] = [];
  const notes: Array<{ category: string; content: string }> = [];
  for (const [channel, observations] of byChannel) {
    const turns: ExtractionTurn[] = observations.map((o) => ({ id: `observation:${o.id}`, role: 'user', content: observationAsFirstPerson(o.content), timestamp: o.createdAt, speaker: 'user' }));
    const result = await deps.extractor.extract({ userId, channel, turns, userName: 'user' });
    for (const o of observations) {
      const turnId = `observation:${o.id}`;
      const own = result.facts.filter((f) => f.sourceTurnId === turnId).map((f) => (o.category === 'correction' ? { ...f, isCorrection: true } : f));
      // An observation the extractor could not structure is still knowledge: keep it verbatim.
      if (own.length === 0) {
        own.push({
          claim: o.content,
          subject: 'user',
          relation: o.category,
          polarity: 'positive',
          singleValued: false,
          certainty: 'explicit',
          confidence: 0.95,
          temporal: 'current',
          isCorrection: false,
          sourceTurnId: turnId,
        });
        notes.push({ category: o.category, content: o.content });
      }
      const mine: ExtractionResult = {
        ...result,
        facts: own,
        relationships: result.relationships.filter((r) => r.sourceTurnId === undefined || r.sourceTurnId === turnId),
        entities: observations.length === 1 ? result.entities : result.entities.filter((e) => o.content.toLowerCase().includes(e.name.toLowerCase()) || e.name === 'user'),
      };
      await deps.applier.apply(
        mine,
        { userId, channel, sourceId: `obs:${o.id}`, saidAt: o.createdAt, factProperties: { observation_id: o.id, category: o.category }, connectionId: o.connectionId ?? undefined },
        deps.extractor.provider,
      );
      learned.push(...own.filter((f) => f.subject.toLowerCase() === 'user' && f.relation !== o.category).map(toProfileFact));
    }
  }
  await deps.profiles.learn(userId, learned, notes, [...learned.map((f) => f.claim), ...notes.map((n) => n.content)], tx);
  ctx.log.info({ subsystem: 'worker', userId, observations: batch.length }, 'applied observations');
}
