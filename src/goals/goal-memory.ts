import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AuditLogger } from '../audit';
import type { Embedder } from '../embedding';
import type { Logger } from '../infra/logger';
import { LOCAL_PRINCIPAL, principalScope, type AccessPrincipal, type AccessScope, type ScopeOptions } from '../access';
import { IdSchema, UserIdSchema, parseInput } from '../schemas';
import { embeddingForWrite } from '../semantic/embed';
import {
  ActiveGoalsQuerySchema,
  CompleteGoalInputSchema,
  GoalInputSchema,
  type ActiveGoalsQuery,
  type AddGoalResult,
  type CompleteGoalInput,
  type CompleteGoalResult,
  type Goal,
  type GoalDetails,
  type GoalInput,
  type GoalStore,
} from './contract';

export interface GoalMemoryDeps {
  store: GoalStore;
  embedder: Embedder;
  audit: AuditLogger;
  log: Logger;
}

const GoalRefSchema = z.object({ userId: UserIdSchema, goalId: IdSchema }).strict();
const BlockerSchema = z.object({ userId: UserIdSchema, goalId: IdSchema, blockerId: IdSchema }).strict();

/**
 * The goal part of the facade. Goals are audited as `procedural` memory (the audit
 * log's memory types have no goal kind) with `metadata.kind = 'goal'`.
 */
export class GoalMemory {
  constructor(
    private readonly d: GoalMemoryDeps,
    private readonly principal: AccessPrincipal = LOCAL_PRINCIPAL,
  ) {}

  /** The same goal memory acting for `principal` (its tenant and agent land in every scope). */
  as(principal: AccessPrincipal): GoalMemory {
    return new GoalMemory(this.d, principal);
  }

  private scope(userId: string, opts?: Omit<ScopeOptions, 'tenantId' | 'agentId'>): AccessScope {
    return principalScope(this.principal, userId, opts);
  }

  async addGoal(input: GoalInput): Promise<AddGoalResult> {
    const { userId, channel, ...g } = parseInput(GoalInputSchema, input, 'goal');
    const embedding = await embeddingForWrite(this.d.embedder, this.d.log, 'goals', g.description, g.embedding);
    const t0 = performance.now();
    const result = await this.d.store.addGoal(this.scope(userId, { channel }), { ...g, id: g.id ?? randomUUID(), embedding });
    if (result.created) this.write('add_goal', userId, channel, [result.goal.id], t0, { description: g.description, parentId: g.parentId, blockedBy: g.blockedBy });
    return result;
  }

  /** The goal with its parent, sub-goals and blockers; null when missing or another user's. */
  async getGoal(userId: string, goalId: string): Promise<GoalDetails | null> {
    const q = parseInput(GoalRefSchema, { userId, goalId }, 'goal query');
    return this.d.store.getGoal(this.scope(q.userId), q.goalId);
  }

  async completeGoal(input: CompleteGoalInput): Promise<CompleteGoalResult> {
    const c = parseInput(CompleteGoalInputSchema, input, 'goal completion');
    const t0 = performance.now();
    const result = await this.d.store.completeGoal(this.scope(c.userId), c.goalId, c.status, c.result);
    this.write('complete_goal', c.userId, result.goal.channel, [result.goal.id, ...result.unblocked], t0, { status: c.status, result: c.result });
    return result;
  }

  async addBlocker(userId: string, goalId: string, blockerId: string): Promise<Goal> {
    const q = parseInput(BlockerSchema, { userId, goalId, blockerId }, 'goal blocker');
    const t0 = performance.now();
    const goal = await this.d.store.addBlocker(this.scope(q.userId), q.goalId, q.blockerId);
    this.write('block_goal', q.userId, goal.channel, [goal.id, q.blockerId], t0);
    return goal;
  }

  /** Open goals in the channels plus `_global`: highest priority, then earliest deadline. */
  async listActiveGoals(query: ActiveGoalsQuery): Promise<Goal[]> {
    const { userId, channels, ...q } = parseInput(ActiveGoalsQuerySchema, query, 'active goals query');
    return this.d.store.listActiveGoals(this.scope(userId, { channels }), q);
  }

  private write(operation: string, userId: string, channel: string, affectedIds: string[], t0: number, payload?: Record<string, unknown>): void {
    this.d.audit.logWrite({ operation, memoryType: 'procedural', userId, channel, affectedIds, latencyMs: performance.now() - t0, payload, metadata: { kind: 'goal' } });
  }
}
