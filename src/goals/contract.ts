import { z } from 'zod';
import type { AccessCount } from '../infra/access-count';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

/**
 * Goals: what the agent is working on for a user, with sub-goals and blockers.
 * `(:User)-[:HAS_GOAL]->(:Goal)`, `(:Goal)-[:SUBGOAL_OF]->(:Goal)`, `(:Goal)-[:BLOCKED_BY]->(:Goal)`.
 * Links only ever join goals of the same user.
 *
 * Lifecycle: `active` or `blocked` (open) -> `completed` | `abandoned` | `failed` (closed,
 * with completed_at and result). A goal is `blocked` while one of its blockers is open;
 * closing the last open blocker makes it `active` again.
 */

export const OPEN_GOAL_STATUSES = ['active', 'blocked'] as const;
export const CLOSED_GOAL_STATUSES = ['completed', 'abandoned', 'failed'] as const;
export const GoalStatusSchema = z.enum([...OPEN_GOAL_STATUSES, ...CLOSED_GOAL_STATUSES]);
export type GoalStatus = z.output<typeof GoalStatusSchema>;
export const ClosedGoalStatusSchema = z.enum(CLOSED_GOAL_STATUSES);
export type ClosedGoalStatus = z.output<typeof ClosedGoalStatusSchema>;

export const GoalInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    /** Caller-chosen id makes addGoal idempotent (a repeat returns the stored goal, `created: false`). */
    id: IdSchema.optional(),
    description: z.string().trim().min(1).max(5_000),
    /** 1 (lowest) to 10 (highest). */
    priority: z.number().int().min(1).max(10).default(5),
    deadline: z.iso.datetime({ offset: true }).optional(),
    /** Parent goal (SUBGOAL_OF); must be the caller's. */
    parentId: IdSchema.optional(),
    /** Goals that must close first (BLOCKED_BY); each must be the caller's. */
    blockedBy: z.array(IdSchema).max(20).default([]),
    embedding: z.array(z.number()).min(1).max(8192).optional(),
  })
  .strict();
export type GoalInput = z.input<typeof GoalInputSchema>;

export const CompleteGoalInputSchema = z
  .object({
    userId: UserIdSchema,
    goalId: IdSchema,
    status: ClosedGoalStatusSchema.default('completed'),
    result: z.string().max(10_000).optional(),
  })
  .strict();
export type CompleteGoalInput = z.input<typeof CompleteGoalInputSchema>;

export const ActiveGoalsQuerySchema = z
  .object({
    userId: UserIdSchema,
    channels: z.array(ChannelSchema).min(1).max(20).default(['_global']),
    /** Also list goals waiting on a blocker (default true). */
    includeBlocked: z.boolean().default(true),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .strict();
export type ActiveGoalsQuery = z.input<typeof ActiveGoalsQuerySchema>;

export interface Goal {
  id: string;
  userId: string;
  channel: string;
  description: string;
  status: GoalStatus;
  priority: number;
  createdAt: string;
  updatedAt: string;
  deadline: string | null;
  completedAt: string | null;
  result: string | null;
  parentId: string | null;
}

/** A goal with its neighbourhood, as getGoal returns it. */
export interface GoalDetails {
  goal: Goal;
  parent: Goal | null;
  subgoals: Goal[];
  /** Goals this one waits for (BLOCKED_BY), open or closed. */
  blockedBy: Goal[];
  /** Goals waiting for this one. */
  blocks: Goal[];
}

export interface AddGoalResult {
  goal: Goal;
  created: boolean;
}

export interface CompleteGoalResult {
  goal: Goal;
  /** Goals that were blocked only by this one and are active again. */
  unblocked: string[];
}

export interface NewGoal {
  userId: string;
  channel: string;
  id: string;
  description: string;
  priority: number;
  deadline?: string;
  parentId?: string;
  blockedBy: string[];
  embedding?: number[];
}

/** Goal memory in Neo4j. Every method is scoped to `userId`; another user's goal id is "not found". */
export interface GoalStore {
  /**
   * Creates the goal with HAS_GOAL, SUBGOAL_OF and BLOCKED_BY in one transaction; status
   * is `blocked` when a blocker is open. Idempotent on id. Throws NotFoundError for a
   * parent or blocker that is not the caller's, before writing anything.
   */
  addGoal(goal: NewGoal): Promise<AddGoalResult>;
  /** The goal with parent, sub-goals and blockers, or null. */
  getGoal(userId: string, goalId: string): Promise<GoalDetails | null>;
  /**
   * Closes an open goal: status, completed_at = now, result; then re-activates goals whose
   * last open blocker this was. Closing with the same status again is a no-op; closing a
   * goal closed with another status throws ValidationError. NotFoundError if not the caller's.
   */
  completeGoal(userId: string, goalId: string, status: ClosedGoalStatus, result?: string): Promise<CompleteGoalResult>;
  /**
   * Adds `(goal)-[:BLOCKED_BY]->(blocker)`; the goal becomes `blocked` if the blocker is
   * open. ValidationError when it would make a cycle or either goal is closed.
   */
  addBlocker(userId: string, goalId: string, blockerId: string): Promise<Goal>;
  /** Open goals of the user in `channels`, highest priority first, then earliest deadline, then oldest. */
  listActiveGoals(q: { userId: string; channels: string[]; includeBlocked: boolean; limit: number }): Promise<Goal[]>;
  /**
   * Open goals of the user in `channels` with their cosine similarity (0-1, Neo4j's
   * normalised cosine) to `embedding`; `similarity` is null for a goal without an embedding
   * or when no embedding is given. Most similar first, then as listActiveGoals; at most `limit`.
   */
  similarActiveGoals(q: { userId: string; channels: string[]; embedding?: number[]; limit: number }): Promise<Array<{ goal: Goal; similarity: number | null }>>;

  // Recall support (called by src/retrieval).

  /** Whether the user holds any goal (of any status) in `channels` (an index seek). */
  hasGoals(userId: string, channels: string[]): Promise<boolean>;
  /** Adds recall access counts to goals (see AccessCount); one not owned by the row's user is skipped. Returns the goals touched. */
  addAccessCounts(rows: AccessCount[]): Promise<number>;
}
