import nlp from 'compromise';
import type { CypherRunner } from '../../infra/neo4j';
import type { Queryable } from '../../infra/postgres';
import { errorMessage } from '../../errors';
import type { JobContext, JobStats, KnowledgeWriter, LockService } from '../contract';

const TAG = (op: string) => ({ subsystem: 'worker', op });

// $now, $idleMinutes, $limit, $userIds -> {id, userId, channel, turnCount, firstUserTurn}: idle conversations that used
// tools and grew since their patterns were last extracted
const FIND_CANDIDATES = `
MATCH (c:Conversation)
WHERE ($userIds IS NULL OR c.user_id IN $userIds) AND NOT coalesce(c.archived, false)
  AND coalesce(c.patterns_through, -1) < coalesce(c.turn_count, 0)
  AND coalesce(c.last_turn_at, c.started_at) <= datetime($now) - duration({minutes: $idleMinutes})
  AND EXISTS { (c)-[:USED_TOOL]->(:ToolInvocation) }
WITH c LIMIT toInteger($limit)
OPTIONAL MATCH (c)-[:HAS_TURN]->(t:Turn {role: 'user'})
WITH c, t ORDER BY t.index
WITH c, head(collect(t.content)) AS firstUserTurn
RETURN c.id AS id, c.user_id AS userId, c.channel AS channel, coalesce(c.turn_count, 0) AS turnCount, firstUserTurn`;

// $1 user, $2 conversation -> {tool_name, success} in call order
const INVOCATIONS = `SELECT tool_name, success FROM tool_invocations WHERE user_id = $1 AND conversation_id = $2 ORDER BY turn_index, timestamp, id`;

// $id, $through -> marks patterns extracted up to turn_count $through
const MARK = `MATCH (c:Conversation {id: $id}) SET c.patterns_extracted = true, c.patterns_through = toInteger($through)`;

export interface PatternsDeps {
  neo4j: CypherRunner;
  pg: Queryable;
  knowledge: KnowledgeWriter;
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
 * per strategy, so reruns and concurrent workers reinforce nothing twice.
 */
export function patternsJob(deps: PatternsDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const stats: JobStats = { conversations: 0, learned: 0, unsuccessful: 0, skipped: 0 };
    const rows = await deps.neo4j.read<{ id: string; userId: string; channel: string; turnCount: number; firstUserTurn: string | null }>(
      FIND_CANDIDATES,
      { now: ctx.clock.now().toISOString(), idleMinutes: deps.idleMinutes ?? 30, limit: deps.batchSize, userIds: ctx.userIds ?? null },
      TAG('find-pattern-candidates'),
    );
    for (const c of rows) {
      if (ctx.signal.aborted) break;
      const key = `patterns:lock:${c.id}`;
      const token = await deps.locks.acquire(key, deps.lockTtlMs);
      if (token === null) {
        stats.skipped!++;
        continue;
      }
      try {
        const calls = (await deps.pg.query<{ tool_name: string; success: boolean | null }>(INVOCATIONS, [c.userId, c.id])).rows;
        const ok = calls.filter((x) => x.success === true).length;
        const successful = calls.length > 0 && calls[calls.length - 1]!.success === true && ok * 2 >= calls.length;
        if (successful && c.firstUserTurn) {
          await deps.knowledge.learnStrategy({
            userId: c.userId,
            channel: c.channel,
            description: c.firstUserTurn.slice(0, 500),
            contextPattern: contextPatternOf(c.firstUserTurn),
            toolSequence: toolSequenceOf(calls.map((x) => x.tool_name)),
            fromConversationId: c.id,
            success: true,
          });
          stats.learned!++;
        } else {
          stats.unsuccessful!++;
        }
        await deps.neo4j.write(MARK, { id: c.id, through: c.turnCount }, TAG('mark-patterns'));
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
