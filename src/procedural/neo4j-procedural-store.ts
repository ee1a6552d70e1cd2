import { NotFoundError, ValidationError } from '../errors';
import { writeKey, type AccessScope } from '../access';
import { luceneQuery, scopedFulltextK, scopedLuceneQuery } from '../infra/fulltext-scope';
import { rows, type CypherRunner } from '../infra/neo4j';
import { indexOrFallback, SmallOwners } from '../infra/vector-scan';
import type { TurnFilters } from '../episodic/contract';
import { conversationOfAnother, TURN_MATCHES_FILTERS, turnFilterParams } from '../episodic/neo4j-episodic-store';
import { addAccessCountsCypher, type AccessCount } from '../infra/access-count';
import type { Json, LearnStrategyResult, NewInvocation, NewStrategy, ProceduralStore, RecordInvocationResult, Strategy, StrategyListPage, ToolInvocation, ToolStats } from './contract';

const TAG = (op: string) => ({ subsystem: 'procedural', op });

/**
 * Cypher expression over $userId, $channels: whether the user holds any strategy in those
 * channels (an index seek). Recall's knowledge presence asks it with the other stores' in one query.
 */
export const STRATEGY_PRESENCE = 'EXISTS { MATCH (n:Strategy) WHERE n.user_id = $userId AND n.channel IN $channels }';
const MIN_TIME = '0001-01-01T00:00:00Z';

// Projection of a ToolInvocation node `i` (tool input/output as JSON text).
const INVOCATION = `{ id: i.id, userId: i.user_id, channel: i.channel, conversationId: i.conversation_id, turnIndex: i.turn_index,
  toolName: i.tool_name, toolInputJson: i.tool_input_json, toolOutputJson: i.tool_output_json, success: i.success,
  latencyMs: i.latency_ms, errorMessage: i.error_message, taskType: i.task_type, timestamp: toString(i.timestamp) }`;

// Projection of a Strategy node `s`.
const STRATEGY = `{ id: s.id, userId: s.user_id, channel: s.channel, description: s.description, contextPattern: s.context_pattern,
  toolSequence: s.tool_sequence, successCount: s.success_count, failureCount: s.failure_count, createdAt: toString(s.created_at),
  lastUsed: toString(s.last_used) }`;

// $id -> {invocation}: an invocation by id, whoever owns it
const GET_INVOCATION = `MATCH (i:ToolInvocation {id: $id}) RETURN ${INVOCATION} AS invocation`;

// $conversationId, $userId, $channel, $startedAt -> {userId, channel}: the conversation (created if new) and its owner
const UPSERT_CONVERSATION = `
MERGE (c:Conversation {id: $conversationId})
  ON CREATE SET c.user_id = $userId, c.channel = $channel, c.started_at = datetime($startedAt), c.turn_count = 0,
                c.archived = false, c.patterns_extracted = false
RETURN c.user_id AS userId, c.channel AS channel`;

// $row -> {invocation}: the invocation node, its links, and the shared Tool counters
const CREATE_INVOCATION = `
MATCH (c:Conversation {id: $row.conversationId})
MERGE (u:User {id: $row.userId})
MERGE (u)-[:HAS_CONVERSATION]->(c)
MERGE (t:Tool {name: $row.toolName})
  ON CREATE SET t.usage_count = 0, t.success_count = 0, t.total_latency_ms = 0, t.avg_latency_ms = 0.0, t.created_at = datetime()
// SET reads the old values on every right-hand side, so the new average is computed from them.
SET t.usage_count = t.usage_count + 1,
    t.success_count = t.success_count + CASE WHEN $row.success THEN 1 ELSE 0 END,
    t.total_latency_ms = coalesce(t.total_latency_ms, 0) + $row.latencyMs,
    t.avg_latency_ms = toFloat(coalesce(t.total_latency_ms, 0) + $row.latencyMs) / (t.usage_count + 1),
    t.last_used = datetime($row.timestamp)
CREATE (i:ToolInvocation {id: $row.id, user_id: $row.userId, channel: $row.channel, conversation_id: $row.conversationId,
  turn_index: toInteger($row.turnIndex), tool_name: $row.toolName, tool_input_json: $row.toolInputJson,
  tool_output_json: $row.toolOutputJson, success: $row.success, latency_ms: toInteger($row.latencyMs),
  error_message: $row.errorMessage, task_type: $row.taskType, timestamp: datetime($row.timestamp)})
CREATE (c)-[:USED_TOOL]->(i)-[:INVOKED]->(t)
RETURN ${INVOCATION} AS invocation`;

// $userId, $conversationId -> {invocation} oldest first
const CONVERSATION_INVOCATIONS = `
MATCH (c:Conversation {id: $conversationId})-[:USED_TOOL]->(i:ToolInvocation) WHERE i.user_id = $userId
RETURN ${INVOCATION} AS invocation ORDER BY i.timestamp, i.id`;

// $userId, $channels, $taskType, $toolName, $since -> per-tool statistics of the user's invocations
const TOOL_STATS = `
MATCH (i:ToolInvocation) WHERE i.user_id = $userId AND i.timestamp >= datetime($since) AND i.channel IN $channels
  AND ($taskType IS NULL OR i.task_type = $taskType) AND ($toolName IS NULL OR i.tool_name = $toolName)
WITH i.tool_name AS toolName, count(*) AS invocations, sum(CASE WHEN i.success THEN 1 ELSE 0 END) AS successes,
     avg(i.latency_ms) AS avgLatencyMs, max(i.timestamp) AS lastUsed
RETURN toolName, invocations, successes, avgLatencyMs, toString(lastUsed) AS lastUsed ORDER BY invocations DESC, toolName`;

// $id -> {userId}: who owns a strategy id
const STRATEGY_OWNER = `MATCH (s:Strategy {id: $id}) RETURN s.user_id AS userId`;
// $userId, $conversationId -> {n}: whether the conversation is the user's
const OWNED_CONVERSATION = `MATCH (c:Conversation {id: $conversationId}) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId RETURN count(c) AS n`;

// $row -> {strategy, counted}: creates or reinforces a strategy; a conversation counts once
const LEARN_STRATEGY = `
MERGE (u:User {id: $row.userId})
MERGE (s:Strategy {id: $row.id})
  ON CREATE SET s.user_id = $row.userId, s.channel = $row.channel, s.scope_key = $row.scopeKey, s.description = $row.description,
                s.context_pattern = $row.contextPattern, s.tool_sequence = $row.toolSequence, s.success_count = 0,
                s.failure_count = 0, s.created_at = datetime(), s.created_now = true
MERGE (u)-[:HAS_STRATEGY]->(s)
WITH s, coalesce(s.created_now, false) AS created
REMOVE s.created_now
WITH s, created
OPTIONAL MATCH (c:Conversation {id: $row.conversationId})
WITH s, created, c, CASE WHEN c IS NULL THEN true ELSE NOT EXISTS { (s)-[:SUCCEEDED_IN|FAILED_IN]->(c) } END AS counted
SET s.success_count = s.success_count + CASE WHEN counted AND $row.success THEN 1 ELSE 0 END,
    s.failure_count = s.failure_count + CASE WHEN counted AND NOT $row.success THEN 1 ELSE 0 END,
    s.last_used = CASE WHEN counted THEN datetime() ELSE s.last_used END
WITH s, created, c, counted
CALL (s, c, counted) { WITH s, c WHERE c IS NOT NULL AND counted AND $row.success MERGE (s)-[:SUCCEEDED_IN]->(c) }
CALL (s, c, counted) { WITH s, c WHERE c IS NOT NULL AND counted AND NOT $row.success MERGE (s)-[:FAILED_IN]->(c) }
CALL (s) {
  UNWIND $row.toolSequence AS toolName
  MERGE (t:Tool {name: toolName})
    ON CREATE SET t.usage_count = 0, t.success_count = 0, t.total_latency_ms = 0, t.avg_latency_ms = 0.0, t.created_at = datetime()
  MERGE (s)-[:USES_TOOL]->(t)
}
CALL (s) { WITH s WHERE $row.embedding IS NOT NULL AND s.embedding IS NULL CALL db.create.setNodeVectorProperty(s, 'embedding', $row.embedding) }
RETURN ${STRATEGY} AS strategy, created`;

// $userId, $id -> {strategy}
const GET_STRATEGY = `MATCH (s:Strategy {id: $id}) USING INDEX SEEK s:Strategy(id) WHERE s.user_id = $userId RETURN ${STRATEGY} AS strategy`;

// $userId, $channel, $q, $tool, $minSuccessRate, $offset, $limit -> {strategy}; ORDER BY from STRATEGY_ORDER.
// The success rate is Laplace-smoothed as successRate() computes it.
const LIST_STRATEGIES = (order: string) => `
MATCH (s:Strategy) WHERE s.user_id = $userId AND ($channel IS NULL OR s.channel = $channel)
  AND ($q IS NULL OR toLower(s.description) CONTAINS $q OR toLower(coalesce(s.context_pattern, '')) CONTAINS $q)
  AND ($tool IS NULL OR $tool IN coalesce(s.tool_sequence, []))
  AND (s.success_count + 1.0) / (s.success_count + s.failure_count + 2.0) >= $minSuccessRate
RETURN ${STRATEGY} AS strategy ORDER BY ${order} SKIP toInteger($offset) LIMIT toInteger($limit)`;
const STRATEGY_ORDER: Record<StrategyListPage['sort'], string> = {
  recent: 'coalesce(s.last_used, s.created_at) DESC, s.id',
  success: '(s.success_count + 1.0) / (s.success_count + s.failure_count + 2.0) DESC, s.id',
  uses: 's.success_count + s.failure_count DESC, s.id',
};

// $userId, $id, $success -> {strategy}
const REINFORCE = `
MATCH (s:Strategy {id: $id}) USING INDEX SEEK s:Strategy(id) WHERE s.user_id = $userId
SET s.success_count = s.success_count + CASE WHEN $success THEN 1 ELSE 0 END,
    s.failure_count = s.failure_count + CASE WHEN $success THEN 0 ELSE 1 END, s.last_used = datetime()
RETURN ${STRATEGY} AS strategy`;

// $userId -> {n}: the user's strategies (user_id index seek)
const COUNT_USER_STRATEGIES = `MATCH (s:Strategy) WHERE s.user_id = $userId RETURN count(s) AS n`;
// $k, $embedding, $userId, $channels, $limit -> {strategy, score}
const VECTOR_STRATEGIES = `
CALL db.index.vector.queryNodes('strategy_embeddings', toInteger($k), $embedding) YIELD node AS s, score
WHERE s.user_id = $userId AND s.channel IN $channels
RETURN ${STRATEGY} AS strategy, score ORDER BY score DESC LIMIT toInteger($limit)`;

// $embedding, $userId, $channels, $limit -> {strategy, score}: exact cosine over the user's strategies (index
// seek on user_id, channel) when the shared index's neighbourhood holds too few of them; normalised like the index score
const VECTOR_STRATEGIES_EXACT = `
MATCH (s:Strategy) WHERE s.user_id = $userId AND s.channel IN $channels AND s.embedding IS NOT NULL
WITH s, vector.similarity.cosine(s.embedding, $embedding) AS score ORDER BY score DESC LIMIT toInteger($limit)
RETURN ${STRATEGY} AS strategy, score ORDER BY score DESC`;

// $k, $query, $userId, $channels, $limit -> {strategy, score}
const FULLTEXT_STRATEGIES = `
CALL db.index.fulltext.queryNodes('strategy_text_scoped', $query, {limit: toInteger($k)}) YIELD node AS s, score
WHERE s.user_id = $userId AND s.channel IN $channels
RETURN ${STRATEGY} AS strategy, score ORDER BY score DESC LIMIT toInteger($limit)`;

interface InvocationRow extends Omit<ToolInvocation, 'toolInput' | 'toolOutput'> {
  toolInputJson: string;
  toolOutputJson: string | null;
}
type StrategyRow = Omit<Strategy, 'successRate'>;

function toInvocation({ toolInputJson, toolOutputJson, ...row }: InvocationRow): ToolInvocation {
  return { ...row, toolInput: JSON.parse(toolInputJson) as Json, toolOutput: toolOutputJson === null ? null : (JSON.parse(toolOutputJson) as Json) };
}

/** Laplace-smoothed success rate: a new strategy starts at 0.5, not at 0 or 1. */
export function successRate(successes: number, failures: number): number {
  return (successes + 1) / (successes + failures + 2);
}

function toStrategy(row: StrategyRow): Strategy {
  return { ...row, successRate: successRate(row.successCount, row.failureCount) };
}

export class Neo4jProceduralStore implements ProceduralStore {
  /** Per user, for a while: whether their strategies are few enough for the exact vector scan. */
  private readonly smallUsers: SmallOwners;

  constructor(private readonly db: CypherRunner) {
    this.smallUsers = SmallOwners.counted(db, COUNT_USER_STRATEGIES, TAG('countUserStrategies'));
  }

  recordInvocation(scope: AccessScope, inv: NewInvocation): Promise<RecordInvocationResult> {
    const { userId, channel } = scope;
    return this.db.writeTx(async (tx) => {
      const [seen] = await rows<{ invocation: InvocationRow }>(tx, GET_INVOCATION, { id: inv.id });
      if (seen) {
        if (seen.invocation.userId !== userId) throw new ValidationError(`invocation id ${inv.id} is already in use; choose another id`, { id: inv.id });
        return { invocation: toInvocation(seen.invocation), created: false };
      }
      const [owner] = await rows<{ userId: string; channel: string }>(tx, UPSERT_CONVERSATION, {
        conversationId: inv.conversationId,
        userId,
        channel,
        startedAt: inv.timestamp,
      });
      if (owner!.userId !== userId || owner!.channel !== channel) {
        throw conversationOfAnother(inv.conversationId);
      }
      const [row] = await rows<{ invocation: InvocationRow }>(tx, CREATE_INVOCATION, {
        row: {
          ...inv,
          userId,
          channel,
          toolInputJson: JSON.stringify(inv.toolInput),
          toolOutputJson: inv.toolOutput === undefined ? null : JSON.stringify(inv.toolOutput),
          errorMessage: inv.errorMessage ?? null,
          taskType: inv.taskType ?? null,
        },
      });
      return { invocation: toInvocation(row!.invocation), created: true };
    }, TAG('recordInvocation'));
  }

  async getInvocations(scope: AccessScope, conversationId: string): Promise<ToolInvocation[]> {
    const found = await this.db.read<{ invocation: InvocationRow }>(CONVERSATION_INVOCATIONS, { userId: scope.userId, conversationId }, TAG('getInvocations'));
    return found.map((r) => toInvocation(r.invocation));
  }

  async getToolStats(scope: AccessScope, q: { taskType?: string; toolName?: string; since?: string }): Promise<ToolStats[]> {
    const found = await this.db.read<{ toolName: string; invocations: number; successes: number; avgLatencyMs: number; lastUsed: string }>(
      TOOL_STATS,
      { userId: scope.userId, channels: scope.channels, taskType: q.taskType ?? null, toolName: q.toolName ?? null, since: q.since ?? MIN_TIME },
      TAG('getToolStats'),
    );
    return found.map((r) => ({ ...r, failures: r.invocations - r.successes, successRate: r.successes / r.invocations }));
  }

  learnStrategy(scope: AccessScope, s: NewStrategy): Promise<LearnStrategyResult> {
    const { userId, channel } = scope;
    return this.db.writeTx(async (tx) => {
      const [owner] = await rows<{ userId: string }>(tx, STRATEGY_OWNER, { id: s.id });
      if (owner && owner.userId !== userId) throw new ValidationError(`strategy id ${s.id} is already in use; choose another id`, { id: s.id });
      if (s.fromConversationId) {
        const [own] = await rows<{ n: number }>(tx, OWNED_CONVERSATION, { userId, conversationId: s.fromConversationId });
        if (!own || own.n === 0) throw new NotFoundError('conversation', s.fromConversationId);
      }
      const [row] = await rows<{ strategy: StrategyRow; created: boolean }>(tx, LEARN_STRATEGY, {
        row: { ...s, userId, channel, scopeKey: writeKey(scope), conversationId: s.fromConversationId ?? null, embedding: s.embedding ?? null },
      });
      return { strategy: toStrategy(row!.strategy), created: row!.created };
    }, TAG('learnStrategy'));
  }

  async getStrategy(scope: AccessScope, id: string): Promise<Strategy | null> {
    const [row] = await this.db.read<{ strategy: StrategyRow }>(GET_STRATEGY, { userId: scope.userId, id }, TAG('getStrategy'));
    return row ? toStrategy(row.strategy) : null;
  }

  async listStrategies(scope: AccessScope, q: StrategyListPage): Promise<Strategy[]> {
    const found = await this.db.read<{ strategy: StrategyRow }>(
      LIST_STRATEGIES(STRATEGY_ORDER[q.sort]),
      { userId: scope.userId, channel: q.channel ?? null, q: q.q?.toLowerCase() ?? null, tool: q.tool ?? null, minSuccessRate: q.minSuccessRate, offset: q.offset, limit: q.limit },
      TAG('listStrategies'),
    );
    return found.map((r) => toStrategy(r.strategy));
  }

  async reinforceStrategy(scope: AccessScope, id: string, success: boolean): Promise<Strategy> {
    const [row] = await this.db.write<{ strategy: StrategyRow }>(REINFORCE, { userId: scope.userId, id, success }, TAG('reinforceStrategy'));
    if (!row) throw new NotFoundError('strategy', id);
    return toStrategy(row.strategy);
  }

  async vectorSearchStrategies(scope: AccessScope, embedding: number[], limit: number): Promise<Array<{ strategy: Strategy; score: number }>> {
    const { userId, channels } = scope;
    const found = await indexOrFallback(
      limit,
      (k) => this.db.read<{ strategy: StrategyRow; score: number }>(VECTOR_STRATEGIES, { k, embedding, userId, channels, limit }, TAG('vectorSearchStrategies')),
      () => this.db.read<{ strategy: StrategyRow; score: number }>(VECTOR_STRATEGIES_EXACT, { embedding, userId, channels, limit }, TAG('vectorSearchStrategiesExact')),
      { sizes: this.smallUsers, userId },
    );
    return found.map((r) => ({ strategy: toStrategy(r.strategy), score: r.score }));
  }

  async fullTextSearchStrategies(scope: AccessScope, text: string, limit: number): Promise<Array<{ strategy: Strategy; score: number }>> {
    const scoped = scopedLuceneQuery(scope, luceneQuery(text));
    if (!scoped) return [];
    const { userId, channels } = scope;
    const found = await this.db.read<{ strategy: StrategyRow; score: number }>(
      FULLTEXT_STRATEGIES,
      { k: scopedFulltextK(limit), query: scoped, userId, channels, limit },
      TAG('fullTextSearchStrategies'),
    );
    return found.map((r) => ({ strategy: toStrategy(r.strategy), score: r.score }));
  }

  // ---------------------------------------------------------------- recall support

  async strategiesWithMatchingSource(scope: AccessScope, ids: string[], filters: TurnFilters): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.db.read<{ id: string }>(STRATEGIES_WITH_MATCHING_SOURCE, { userId: scope.userId, ids, ...turnFilterParams(filters) }, TAG('strategiesWithMatchingSource'))).map((r) => r.id);
  }

  async addAccessCounts(rows: AccessCount[]): Promise<number> {
    if (rows.length === 0) return 0;
    return (await this.db.write<{ n: number }>(ADD_ACCESS_COUNTS, { rows }, TAG('addAccessCounts')))[0]?.n ?? 0;
  }
}

// ---------------------------------------------------------------- recall support

// $userId, $ids, $source, $sessionId, $connectionId, $contextType -> {id}: the strategies with a conversation holding a matching turn
const STRATEGIES_WITH_MATCHING_SOURCE = `
UNWIND $ids AS xid MATCH (s:Strategy {id: xid}) USING INDEX SEEK s:Strategy(id) WHERE s.user_id = $userId
  AND EXISTS { MATCH (s)-[:SUCCEEDED_IN|FAILED_IN]->(c:Conversation)-[:HAS_TURN]->(t:Turn) WHERE ${TURN_MATCHES_FILTERS} }
RETURN s.id AS id`;

// $rows: [AccessCount] -> {n}
const ADD_ACCESS_COUNTS = addAccessCountsCypher('Strategy');
