import type { CypherRunner } from '../infra/neo4j';
import type { ConsolidationTurn, ConversationUpkeep, PatternCandidate, UnconsolidatedConversation } from './contract';

const TAG = (op: string) => ({ subsystem: 'episodic', op });

// $limit, $userIds (null = all), $skipUserIds -> {id, userId, channel, through, turnCount}: conversations with turns not yet consolidated
// (never consolidated, or turns past the checkpoint), oldest activity first.
const FIND_UNCONSOLIDATED = `
MATCH (c:Conversation)
WHERE ($userIds IS NULL OR c.user_id IN $userIds) AND NOT c.user_id IN $skipUserIds AND coalesce(c.turn_count, 0) > 0
  AND (c.consolidated IS NULL OR coalesce(c.consolidated_through, -1) < c.turn_count - 1)
RETURN c.id AS id, c.user_id AS userId, c.channel AS channel, coalesce(c.consolidated_through, -1) AS through, c.turn_count AS turnCount
ORDER BY c.last_turn_at LIMIT toInteger($limit)`;

// $id -> {through, turnCount}: re-read under the conversation lock (another worker may have finished it)
const CONVERSATION_STATE = `
MATCH (c:Conversation {id: $id})
RETURN coalesce(c.consolidated_through, -1) AS through, coalesce(c.turn_count, 0) AS turnCount`;

// $id, $userId, $after, $limit -> turns of the conversation after the checkpoint, in order
const TURNS_AFTER = `
MATCH (c:Conversation {id: $id})-[:HAS_TURN]->(t:Turn) USING INDEX SEEK c:Conversation(id)
WHERE c.user_id = $userId AND t.index > $after
RETURN t.id AS id, t.index AS index, t.role AS role, t.content AS content, toString(t.timestamp) AS timestamp, t.speaker AS speaker
ORDER BY t.index LIMIT toInteger($limit)`;

// $id, $through -> moves the checkpoint forward (never back)
const CHECKPOINT = `
MATCH (c:Conversation {id: $id})
SET c.consolidated_through = CASE WHEN coalesce(c.consolidated_through, -1) > $through THEN c.consolidated_through ELSE toInteger($through) END`;

// $id, $now -> marks the conversation consolidated as of now
const MARK_CONSOLIDATED = `MATCH (c:Conversation {id: $id}) SET c.consolidated = datetime($now)`;

// $now, $idleMinutes, $limit, $userIds, $skipUserIds -> {id, userId, channel, turnCount, firstUserTurn}: idle conversations
// that used tools and grew since their patterns were last extracted, of users not in $skipUserIds
const FIND_PATTERN_CANDIDATES = `
MATCH (c:Conversation)
WHERE ($userIds IS NULL OR c.user_id IN $userIds) AND NOT c.user_id IN $skipUserIds
  AND coalesce(c.patterns_through, -1) < coalesce(c.turn_count, 0)
  AND coalesce(c.last_turn_at, c.started_at) <= datetime($now) - duration({minutes: $idleMinutes})
  AND EXISTS { (c)-[:USED_TOOL]->(:ToolInvocation) }
WITH c LIMIT toInteger($limit)
OPTIONAL MATCH (c)-[:HAS_TURN]->(t:Turn {role: 'user'})
WITH c, t ORDER BY t.index
WITH c, head(collect(t.content)) AS firstUserTurn
RETURN c.id AS id, c.user_id AS userId, c.channel AS channel, coalesce(c.turn_count, 0) AS turnCount, firstUserTurn`;

// $id, $through -> marks patterns extracted up to turn_count $through
const MARK_PATTERNS = `MATCH (c:Conversation {id: $id}) SET c.patterns_extracted = true, c.patterns_through = toInteger($through)`;

// $now, $days, $limit, $userIds -> {n}: moves idle conversations (and their turns) to the archive tier; one batch.
// Archived memory stays in recall (the recency prior already ranks old turns lower) and is still
// mined when it holds turns not yet consolidated (an imported history); a new turn brings it back.
const ARCHIVE_CONVERSATIONS = `
MATCH (c:Conversation)
WHERE ($userIds IS NULL OR c.user_id IN $userIds) AND NOT coalesce(c.archived, false)
  AND coalesce(c.last_turn_at, c.started_at) < datetime($now) - duration({days: $days})
WITH c LIMIT toInteger($limit)
SET c.archived = true, c.archived_at = datetime($now)
WITH c
CALL (c) { MATCH (c)-[:HAS_TURN]->(t:Turn) SET t.archived = true }
RETURN count(c) AS n`;

// $now, $days, $limit, $userIds -> {id, userId}: conversations idle longer than the retention rule's $days, oldest first
const EXPIRED_CONVERSATIONS = `
MATCH (c:Conversation)
WHERE ($userIds IS NULL OR c.user_id IN $userIds) AND coalesce(c.last_turn_at, c.started_at) < datetime($now) - duration({days: $days})
RETURN c.id AS id, c.user_id AS userId ORDER BY coalesce(c.last_turn_at, c.started_at) LIMIT toInteger($limit)`;

// -> {oldest, n}: last activity of the oldest conversation with turns not yet consolidated, and how many (scan)
// $prefix (a tenant's user-id prefix, or null for every user) -> {oldest, n}
const CONSOLIDATION_BACKLOG = `MATCH (c:Conversation) WHERE (c.consolidated IS NULL OR coalesce(c.consolidated_through, -1) < c.turn_count - 1)
  AND ($prefix IS NULL OR c.user_id STARTS WITH $prefix)
  RETURN toString(min(c.last_turn_at)) AS oldest, count(c) AS n`;

/** ConversationUpkeep over Neo4j: the worker's reads and checkpoints on Conversation and Turn nodes. */
export class Neo4jConversationUpkeep implements ConversationUpkeep {
  constructor(private readonly db: CypherRunner) {}

  findUnconsolidated(limit: number, userIds: readonly string[] | null, skipUserIds: readonly string[] = []): Promise<UnconsolidatedConversation[]> {
    return this.db.read<UnconsolidatedConversation>(FIND_UNCONSOLIDATED, { limit, userIds, skipUserIds }, TAG('find-unconsolidated'));
  }

  async consolidationState(conversationId: string): Promise<{ through: number; turnCount: number } | null> {
    return (await this.db.read<{ through: number; turnCount: number }>(CONVERSATION_STATE, { id: conversationId }, TAG('conversation-state')))[0] ?? null;
  }

  turnsAfter(conversationId: string, userId: string, after: number, limit: number): Promise<ConsolidationTurn[]> {
    return this.db.read<ConsolidationTurn>(TURNS_AFTER, { id: conversationId, userId, after, limit }, TAG('turns-after'));
  }

  async checkpointConsolidation(conversationId: string, through: number): Promise<void> {
    await this.db.write(CHECKPOINT, { id: conversationId, through }, TAG('checkpoint'));
  }

  async markConsolidated(conversationId: string, now: string): Promise<void> {
    await this.db.write(MARK_CONSOLIDATED, { id: conversationId, now }, TAG('mark-consolidated'));
  }

  findPatternCandidates(p: { now: string; idleMinutes: number; limit: number; userIds: readonly string[] | null; skipUserIds?: readonly string[] }): Promise<PatternCandidate[]> {
    return this.db.read<PatternCandidate>(FIND_PATTERN_CANDIDATES, { ...p, skipUserIds: p.skipUserIds ?? [] }, TAG('find-pattern-candidates'));
  }

  async markPatternsExtracted(conversationId: string, through: number): Promise<void> {
    await this.db.write(MARK_PATTERNS, { id: conversationId, through }, TAG('mark-patterns'));
  }

  async archiveIdle(p: { now: string; days: number; limit: number; userIds: readonly string[] | null }): Promise<number> {
    return (await this.db.write<{ n: number }>(ARCHIVE_CONVERSATIONS, { ...p }, TAG('archive')))[0]?.n ?? 0;
  }

  expiredConversations(p: { now: string; days: number; limit: number; userIds: readonly string[] | null }): Promise<Array<{ id: string; userId: string }>> {
    return this.db.read<{ id: string; userId: string }>(EXPIRED_CONVERSATIONS, { ...p }, TAG('expired'));
  }

  async consolidationBacklog(userPrefix?: string): Promise<{ oldest: string | null; conversations: number }> {
    const r = (await this.db.read<{ oldest: string | null; n: number }>(CONSOLIDATION_BACKLOG, { prefix: userPrefix ?? null }, TAG('consolidation-backlog')))[0];
    return { oldest: r?.oldest ?? null, conversations: r?.n ?? 0 };
  }
}
