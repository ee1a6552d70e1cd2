import * as z from 'zod';
import { ChannelSchema, ChannelsSchema, IdSchema, TimestampSchema, UserIdSchema } from '../schemas';

/*
 * The wire contract of goals: zod only (the HTTP client bundles it for browsers).
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
    deadline: TimestampSchema.optional(),
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
    channels: ChannelsSchema,
    /** Also list goals waiting on a blocker (default true). */
    includeBlocked: z.boolean().default(true),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .strict();
export type ActiveGoalsQuery = z.input<typeof ActiveGoalsQuerySchema>;
