import { turnId, type AccessScope } from '../access';
import { ValidationError } from '../errors';
import type { CypherRunner } from '../infra/neo4j';
import type { ConversationBrowser, ConversationInfo, Turn } from './contract';
import { TURN, toTurn } from './neo4j-episodic-store';

const TAG = (op: string) => ({ subsystem: 'episodic', op });

// Sort key of a conversation: its last activity in epoch milliseconds (then its id).
const ACTIVITY = `coalesce(c.last_turn_at, c.started_at).epochMillis`;

// $userId, $channel, $afterKey, $afterId, $limit -> {conversation, key}: latest activity first, after the cursor
const LIST_CONVERSATIONS = `
MATCH (c:Conversation) WHERE c.user_id = $userId AND ($channel IS NULL OR c.channel = $channel)
WITH c, coalesce(${ACTIVITY}, 0) AS key
WHERE $afterKey IS NULL OR key < $afterKey OR (key = $afterKey AND c.id < $afterId)
RETURN { conversationId: c.id, channel: c.channel, turns: COUNT { (c)-[:HAS_TURN]->() }, startedAt: toString(c.started_at),
  lastTurnAt: toString(c.last_turn_at), archived: coalesce(c.archived, false) } AS conversation, key
ORDER BY key DESC, c.id DESC LIMIT toInteger($limit)`;

// $userId, $conversationId -> {total}: the conversation's turn count (no row: not the user's)
const TURN_TOTAL = `MATCH (c:Conversation {id: $conversationId}) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId RETURN COUNT { (c)-[:HAS_TURN]->() } AS total`;

// $userId, $conversationId, $afterIndex, $limit -> {turn} in index order (the (conversation_id, index) range index)
const TURNS_AFTER = `
MATCH (t:Turn) WHERE t.conversation_id = $conversationId AND t.index > toInteger($afterIndex) AND t.user_id = $userId
RETURN ${TURN} AS turn ORDER BY t.index LIMIT toInteger($limit)`;

// $userId, $conversationId, $turnId -> {channel, turns}: the conversation's channel and its turns (all, or 1 for $turnId; no row: not the user's)
const DESCRIBE = `
MATCH (c:Conversation {id: $conversationId}) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId
OPTIONAL MATCH (t:Turn {id: $turnId}) USING INDEX SEEK t:Turn(id) WHERE t.user_id = $userId
WITH c, t WHERE $turnId IS NULL OR t IS NOT NULL
RETURN c.channel AS channel, CASE WHEN $turnId IS NULL THEN COUNT { (c)-[:HAS_TURN]->() } ELSE 1 END AS turns`;

// $userId, $turnId -> {n}: deletes the turn and links the turns around it
const DELETE_TURN = `
MATCH (t:Turn {id: $turnId}) USING INDEX SEEK t:Turn(id) WHERE t.user_id = $userId
OPTIONAL MATCH (prev:Turn)-[:FOLLOWED_BY]->(t)
OPTIONAL MATCH (t)-[:FOLLOWED_BY]->(next:Turn)
FOREACH (p IN CASE WHEN prev IS NULL OR next IS NULL THEN [] ELSE [prev] END | MERGE (p)-[:FOLLOWED_BY]->(next))
DETACH DELETE t
RETURN count(*) AS n`;

// $userId, $conversationId, $batch -> {n}: deletes up to $batch turns of the conversation
const DELETE_TURN_BATCH = `
MATCH (c:Conversation {id: $conversationId})-[:HAS_TURN]->(t:Turn) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId
WITH t LIMIT toInteger($batch)
DETACH DELETE t
RETURN count(*) AS n`;

// $userId, $conversationId -> {n}: deletes the (now empty) conversation
const DELETE_CONVERSATION = `
MATCH (c:Conversation {id: $conversationId}) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId
DETACH DELETE c
RETURN count(*) AS n`;

/** Turns deleted per transaction: a 10k-turn conversation goes in a few, none of them large. */
const DELETE_BATCH = 2_000;

/**
 * Browsing and deleting one user's conversations in Neo4j (see `ConversationBrowser`). The
 * Postgres turn log's rows are deleted by the facade through `PgTurnLog.deleteTurns`.
 */
export class Neo4jConversationBrowser implements ConversationBrowser {
  constructor(private readonly db: CypherRunner) {}

  async listConversations(scope: AccessScope, q: { channel?: string; cursor?: string; limit: number }): Promise<{ conversations: ConversationInfo[]; nextCursor: string | null }> {
    const after = decodeCursor(q.cursor);
    const rows = await this.db.read<{ conversation: ConversationInfo; key: number }>(
      LIST_CONVERSATIONS,
      { userId: scope.userId, channel: q.channel ?? null, afterKey: after?.key ?? null, afterId: after?.id ?? null, limit: q.limit },
      TAG('listConversations'),
    );
    const last = rows.at(-1);
    return {
      conversations: rows.map((r) => r.conversation),
      nextCursor: rows.length === q.limit && last ? encodeCursor({ key: last.key, id: last.conversation.conversationId }) : null,
    };
  }

  async turnsPage(scope: AccessScope, conversationId: string, q: { afterIndex: number; limit: number }): Promise<{ turns: Turn[]; total: number } | null> {
    const [head] = await this.db.read<{ total: number }>(TURN_TOTAL, { userId: scope.userId, conversationId }, TAG('turnsPage'));
    if (!head) return null;
    const rows = await this.db.read<{ turn: Parameters<typeof toTurn>[0] }>(TURNS_AFTER, { userId: scope.userId, conversationId, afterIndex: q.afterIndex, limit: q.limit }, TAG('turnsPage'));
    return { turns: rows.map((r) => toTurn(r.turn)), total: head.total };
  }

  async describe(scope: AccessScope, conversationId: string, index?: number): Promise<{ channel: string; turns: number } | null> {
    const params = { userId: scope.userId, conversationId, turnId: index === undefined ? null : turnId(conversationId, index) };
    const [row] = await this.db.read<{ channel: string; turns: number }>(DESCRIBE, params, TAG('describe'));
    return row ?? null;
  }

  async deleteTurn(scope: AccessScope, conversationId: string, index: number): Promise<number> {
    const [row] = await this.db.write<{ n: number }>(DELETE_TURN, { userId: scope.userId, turnId: turnId(conversationId, index) }, TAG('deleteTurn'));
    return row?.n ?? 0;
  }

  async deleteConversation(scope: AccessScope, conversationId: string): Promise<number> {
    let deleted = 0;
    for (;;) {
      const [row] = await this.db.write<{ n: number }>(DELETE_TURN_BATCH, { userId: scope.userId, conversationId, batch: DELETE_BATCH }, TAG('deleteConversation'));
      deleted += row?.n ?? 0;
      if (!row || row.n < DELETE_BATCH) break;
    }
    await this.db.write(DELETE_CONVERSATION, { userId: scope.userId, conversationId }, TAG('deleteConversation'));
    return deleted;
  }
}

/** The listing's position: the last conversation's sort key and id, as base64url JSON (opaque to callers). */
function encodeCursor(c: { key: number; id: string }): string {
  return Buffer.from(JSON.stringify([c.key, c.id])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): { key: number; id: string } | null {
  if (!cursor) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return { key: v[0], id: v[1] };
  } catch {
    // fall through: an unreadable cursor is a bad request
  }
  return invalidCursor();
}

function invalidCursor(): never {
  throw new ValidationError('invalid cursor: pass the nextCursor of the previous page unchanged', { issues: [{ path: 'cursor', message: 'not a cursor of this listing' }] });
}
