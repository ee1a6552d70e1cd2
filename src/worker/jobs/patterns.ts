import nlp from 'compromise';
import type { ConversationUpkeep } from '../../episodic/contract';
import type { ToolInvocationLog } from '../../procedural/contract';
import { errorMessage } from '../../errors';
import type { SettingsStore } from '../../settings/contract';
import type { JobContext, JobStats, KnowledgeWriter, LockService } from '../contract';

export interface PatternsDeps {
  conversations: Pick<ConversationUpkeep, 'findPatternCandidates' | 'markPatternsExtracted'>;
  toolLog: Pick<ToolInvocationLog, 'callsOf'>;
  knowledge: KnowledgeWriter;
  /** Users with automatic mining off (seed 002 autoMine, or memory disabled) are skipped, as by `consolidate`. */
  settings: Pick<SettingsStore, 'miningOff'>;
  locks: LockService;
  lockTtlMs: number;
  batchSize: number;
  /** A conversation is a candidate once idle this long (it has probably ended). */
  idleMinutes?: number;
}

/** Keywords of a task description: its nouns and verbs, lower-cased, at most 8. */
export function contextPatternOf(text: string): string {
  const doc = nlp(text);
  const words = [...(doc.nouns().out('array') as string[]), ...(doc.verbs().out('array') as string[])]
    .flatMap((w) => w.toLowerCase().split(/\s+/))
    .map((w) => w.replace(/[^\p{L}\p{N}_-]+/gu, ''))
    .filter((w) => w.length > 2 && !['the', 'and', 'you', 'can', 'please', 'could', 'would', 'need', 'want'].includes(w));
  return [...new Set(words)].slice(0, 8).join(' ');
}

/** Consecutive repeats collapse: [search, search, fetch] -> [search, fetch]. */
export function toolSequenceOf(names: string[]): string[] {
  return names.filter((n, i) => i === 0 || names[i - 1] !== n).slice(0, 50);
}

/**
 * `patterns` (hourly): a conversation whose tool calls succeeded (the last one did, and
 * at least half overall) teaches a strategy: the first user request as description, its
 * keywords as context pattern, the tool sequence. The strategy id is derived from (user,
 * channel, pattern, sequence) by procedural memory, and a conversation is counted once
 * per strategy, so reruns and concurrent workers reinforce nothing twice. Users whose
 * settings turn mining off are left out of the search itself (their conversations wait,
 * unmarked, and are mined once it is back on).
 */
export function patternsJob(deps: PatternsDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const stats: JobStats = { conversations: 0, learned: 0, unsuccessful: 0, skipped: 0, usersMiningOff: 0 };
    const miningOff = await deps.settings.miningOff(ctx.userIds ?? null);
    stats.usersMiningOff = miningOff.length;
    const rows = await deps.conversations.findPatternCandidates({
      now: ctx.clock.now().toISOString(),
      idleMinutes: deps.idleMinutes ?? 30,
      limit: deps.batchSize,
      userIds: ctx.userIds ?? null,
      skipUserIds: miningOff,
    });
    for (const c of rows) {
      if (ctx.signal.aborted) break;
      await ctx.pause();
      const key = `patterns:lock:${c.id}`;
      const token = await deps.locks.acquire(key, deps.lockTtlMs);
      if (token === null) {
        stats.skipped!++;
        continue;
      }
      try {
        const calls = await deps.toolLog.callsOf(c.userId, c.id);
        const ok = calls.filter((x) => x.success === true).length;
        const successful = calls.length > 0 && calls[calls.length - 1]!.success === true && ok * 2 >= calls.length;
        if (successful && c.firstUserTurn) {
          await deps.knowledge.learnStrategy({
            userId: c.userId,
            channel: c.channel,
            description: c.firstUserTurn.slice(0, 500),
            contextPattern: contextPatternOf(c.firstUserTurn),
            toolSequence: toolSequenceOf(calls.map((x) => x.toolName)),
            fromConversationId: c.id,
            success: true,
          });
          stats.learned!++;
        } else {
          stats.unsuccessful!++;
        }
        await deps.conversations.markPatternsExtracted(c.id, c.turnCount);
        stats.conversations!++;
      } catch (err) {
        ctx.log.warn({ subsystem: 'worker', conversationId: c.id, err: errorMessage(err) }, 'pattern extraction failed; retried next run');
      } finally {
        await deps.locks.release(key, token).catch(() => undefined);
      }
    }
    return stats;
  };
}
