import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { returnedIds } from '../audit/returned-ids';
import type { AuditLogger } from '../audit';
import type { Embedder } from '../embedding';
import { ValidationError } from '../errors';
import type { Logger } from '../infra/logger';
import { LOCAL_PRINCIPAL, parseTurnId, principalScope, type AccessPrincipal, type AccessScope, type ScopeOptions } from '../access';
import { IdSchema, UserIdSchema, parseInput, windowStart } from '../schemas';
import { embeddingForQuery, embeddingForWrite } from '../semantic/embed';
import {
  FindStrategiesQuerySchema,
  InvocationInputSchema,
  StrategyInputSchema,
  ToolStatsQuerySchema,
  type FindStrategiesQuery,
  type InvocationInput,
  type LearnStrategyResult,
  type ProceduralStore,
  type RecordInvocationResult,
  type ScoredStrategy,
  type Strategy,
  type ToolInvocation,
  type ToolInvocationLog,
  type ToolStats,
  type ToolStatsQuery,
} from './contract';
import { fuseStrategies, strategyId } from './ranking';

export interface ProceduralMemoryDeps {
  store: ProceduralStore;
  invocationLog: ToolInvocationLog;
  embedder: Embedder;
  audit: AuditLogger;
  log: Logger;
}

const ReinforceSchema = z.object({ userId: UserIdSchema, strategyId: IdSchema, success: z.boolean() }).strict();
const ConversationRefSchema = z.object({ userId: UserIdSchema, conversationId: IdSchema }).strict();
const StrategyRefSchema = z.object({ userId: UserIdSchema, strategyId: IdSchema }).strict();

/** The index part of a turn id (NaN when it is not one, which sorts nothing). */
function turnIndexOf(turnId: string): number {
  return parseTurnId(turnId)?.index ?? Number.NaN;
}

/**
 * The procedural part of the facade: tool invocations (Neo4j then Postgres, idempotent
 * on the invocation id) and strategies (learned, reinforced, found by hybrid search).
 */
export class ProceduralMemory {
  constructor(
    private readonly d: ProceduralMemoryDeps,
    private readonly principal: AccessPrincipal = LOCAL_PRINCIPAL,
  ) {}

  /** The same procedural memory acting for `principal` (its tenant and agent land in every scope). */
  as(principal: AccessPrincipal): ProceduralMemory {
    return new ProceduralMemory(this.d, principal);
  }

  private scope(userId: string, opts?: Omit<ScopeOptions, 'tenantId' | 'agentId'>): AccessScope {
    return principalScope(this.principal, userId, opts);
  }

  /**
   * Records one tool call. Acknowledged once Neo4j and Postgres hold it; a retry with the
   * same `invocationId` after a partial failure finds it in Neo4j and still writes the
   * Postgres row. `turnIndex` comes from `turnIndex`, else `turnId`, else -1 (no turn).
   */
  async recordInvocation(input: InvocationInput): Promise<RecordInvocationResult> {
    const i = parseInput(InvocationInputSchema, input, 'tool invocation');
    if (i.turnId && parseTurnId(i.turnId)?.conversationId !== i.conversationId) {
      throw new ValidationError(`invalid tool invocation: turnId ${i.turnId} is not a turn of conversation ${i.conversationId}`, { turnId: i.turnId });
    }
    const scope = this.scope(i.userId, { channel: i.channel });
    const t0 = performance.now();
    const inv = {
      id: i.invocationId ?? randomUUID(),
      conversationId: i.conversationId,
      turnIndex: i.turnIndex ?? (i.turnId ? turnIndexOf(i.turnId) : -1),
      toolName: i.toolName,
      toolInput: i.toolInput,
      toolOutput: i.toolOutput,
      success: i.success,
      latencyMs: i.latencyMs,
      errorMessage: i.errorMessage,
      taskType: i.taskType,
      timestamp: i.timestamp ?? new Date().toISOString(),
    };
    const result = await this.d.store.recordInvocation(scope, inv);
    // From the stored node, so a retry writes the row the first attempt meant to write.
    const stored = result.invocation;
    await this.d.invocationLog.append(scope, { ...inv, ...stored, toolOutput: stored.toolOutput ?? undefined, errorMessage: stored.errorMessage ?? undefined, taskType: stored.taskType ?? undefined });
    if (result.created) {
      this.d.audit.logWrite({
        operation: 'record_invocation',
        memoryType: 'procedural',
        userId: scope.userId,
        channel: scope.channel,
        conversationId: inv.conversationId,
        affectedIds: [inv.id],
        latencyMs: performance.now() - t0,
        payload: { toolName: inv.toolName, success: inv.success, latencyMs: inv.latencyMs },
      });
    }
    return result;
  }

  async getInvocations(userId: string, conversationId: string): Promise<ToolInvocation[]> {
    const q = parseInput(ConversationRefSchema, { userId, conversationId }, 'invocation query');
    return this.d.store.getInvocations(this.scope(q.userId), q.conversationId);
  }

  /**
   * Learns a strategy, or reinforces it when the same (user, channel, task pattern, tool
   * sequence) was learned before; one conversation counts once.
   */
  async learnStrategy(input: z.input<typeof StrategyInputSchema>): Promise<LearnStrategyResult> {
    const { userId, channel, ...s } = parseInput(StrategyInputSchema, input, 'strategy');
    const text = [s.description, s.contextPattern, s.toolSequence.join(' ')].filter(Boolean).join('\n');
    const embedding = await embeddingForWrite(this.d.embedder, this.d.log, 'procedural', text, s.embedding);
    const t0 = performance.now();
    const id = s.id ?? strategyId(userId, channel, s.contextPattern, s.toolSequence, s.description);
    const result = await this.d.store.learnStrategy(this.scope(userId, { channel }), { ...s, id, embedding });
    this.d.audit.logWrite({
      operation: result.created ? 'learn_strategy' : 'reinforce_strategy',
      memoryType: 'procedural',
      userId,
      channel,
      conversationId: s.fromConversationId,
      affectedIds: [id],
      latencyMs: performance.now() - t0,
      payload: { description: s.description, toolSequence: s.toolSequence, success: s.success },
    });
    return result;
  }

  async getStrategy(userId: string, strategyId: string): Promise<Strategy | null> {
    const q = parseInput(StrategyRefSchema, { userId, strategyId }, 'strategy query');
    return this.d.store.getStrategy(this.scope(q.userId), q.strategyId);
  }

  /**
   * Strategies for a task: vector (task embedding) and full-text (`strategy_text_scoped`)
   * hits fused by RRF and weighted by success rate; in `channels` plus `_global`.
   */
  async findStrategies(query: FindStrategiesQuery): Promise<ScoredStrategy[]> {
    const q = parseInput(FindStrategiesQuerySchema, query, 'strategy search');
    const scope = this.scope(q.userId, { channels: q.channels });
    const t0 = performance.now();
    const candidates = Math.max(q.topK * 3, 20);
    const embedding = await embeddingForQuery(this.d.embedder, q.task, undefined);
    const [vector, text] = await Promise.all([this.d.store.vectorSearchStrategies(scope, embedding, candidates), this.d.store.fullTextSearchStrategies(scope, q.task, candidates)]);
    const result = fuseStrategies([vector, text], q.topK, q.minSuccessRate);
    this.d.audit.logRead({
      operation: 'findStrategies',
      memoryType: 'procedural',
      userId: scope.userId,
      channel: scope.channel,
      query: q.task,
      channelsSearched: [...scope.channels],
      resultCount: result.length,
      affectedIds: returnedIds(result),
      latencyMs: performance.now() - t0,
    });
    return result;
  }

  async reinforceStrategy(userId: string, strategyId: string, success: boolean): Promise<Strategy> {
    const q = parseInput(ReinforceSchema, { userId, strategyId, success }, 'strategy reinforcement');
    const t0 = performance.now();
    const strategy = await this.d.store.reinforceStrategy(this.scope(q.userId), q.strategyId, q.success);
    this.d.audit.logWrite({
      operation: 'reinforce_strategy',
      memoryType: 'procedural',
      userId: q.userId,
      channel: strategy.channel,
      affectedIds: [strategy.id],
      latencyMs: performance.now() - t0,
      payload: { success: q.success },
    });
    return strategy;
  }

  /** Per-tool counts, success rate and mean latency over the caller's invocations. */
  async getToolStats(query: ToolStatsQuery): Promise<ToolStats[]> {
    const q = parseInput(ToolStatsQuerySchema, query, 'tool stats query');
    const since = q.sinceHours ? windowStart(q.sinceHours) : undefined;
    return this.d.store.getToolStats(this.scope(q.userId, { channels: q.channels }), { taskType: q.taskType, toolName: q.toolName, since });
  }
}
