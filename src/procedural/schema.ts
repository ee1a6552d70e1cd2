import * as z from 'zod';
import { ChannelSchema, ChannelsSchema, IdSchema, TimestampSchema, UserIdSchema, WindowHoursSchema } from '../schemas';
import { TurnIdSchema } from '../semantic/schema';

/*
 * The wire contract of procedural memory: zod only (the HTTP client bundles it for browsers).
 */

/** Tool names: what agent frameworks use ("web_search", "fs.read", "github:create_issue"). */
export const ToolNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/, 'must be letters, digits, _ . : / - (starting with a letter or digit)');

/** JSON values for tool inputs and outputs (stored as JSONB in Postgres, as JSON text in Neo4j). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export const JsonSchema: z.ZodType<Json> = z.lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonSchema), z.record(z.string(), JsonSchema)]));
/** At most this many characters of JSON per tool input/output. */
export const MAX_TOOL_JSON_CHARS = 100_000;

export const InvocationInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    /** Idempotency key: a repeated call with the same id writes nothing new. Random when omitted. */
    invocationId: IdSchema.optional(),
    conversationId: IdSchema,
    /** The turn that made the call; its index becomes `turn_index`. */
    turnId: TurnIdSchema.optional(),
    turnIndex: z.number().int().min(0).max(10_000_000).optional(),
    toolName: ToolNameSchema,
    toolInput: JsonSchema.default({}),
    toolOutput: JsonSchema.optional(),
    success: z.boolean(),
    latencyMs: z.number().int().min(0).max(86_400_000),
    errorMessage: z.string().max(10_000).optional(),
    /** A label for the kind of task ("code_review"), used by getToolStats. */
    taskType: z.string().min(1).max(100).optional(),
    timestamp: TimestampSchema.optional(),
  })
  .strict()
  .refine((i) => JSON.stringify(i.toolInput).length <= MAX_TOOL_JSON_CHARS, `toolInput must be at most ${MAX_TOOL_JSON_CHARS} characters of JSON`)
  .refine((i) => i.toolOutput === undefined || JSON.stringify(i.toolOutput).length <= MAX_TOOL_JSON_CHARS, `toolOutput must be at most ${MAX_TOOL_JSON_CHARS} characters of JSON`);
export type InvocationInput = z.input<typeof InvocationInputSchema>;

export const StrategyInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    /** Explicit id; by default the id is derived from (user, channel, context pattern, tool sequence), so relearning reinforces. */
    id: IdSchema.optional(),
    description: z.string().trim().min(1).max(5_000),
    /** What kind of task it fits ("debug failing CI build"); full-text indexed. */
    contextPattern: z.string().max(1_000).default(''),
    toolSequence: z.array(ToolNameSchema).max(50).default([]),
    /** The conversation it was learned from (must be the caller's): SUCCEEDED_IN / FAILED_IN. */
    fromConversationId: IdSchema.optional(),
    success: z.boolean().default(true),
    embedding: z.array(z.number()).min(1).max(8192).optional(),
  })
  .strict();
export type StrategyInput = z.input<typeof StrategyInputSchema>;

export const FindStrategiesQuerySchema = z
  .object({
    userId: UserIdSchema,
    task: z.string().trim().min(1).max(10_000),
    channels: ChannelsSchema,
    topK: z.number().int().min(1).max(100).default(5),
    /** Leave out strategies whose smoothed success rate is below this. */
    minSuccessRate: z.number().min(0).max(1).default(0),
  })
  .strict();
export type FindStrategiesQuery = z.input<typeof FindStrategiesQuerySchema>;

export const ToolStatsQuerySchema = z
  .object({
    userId: UserIdSchema,
    channels: ChannelsSchema,
    taskType: z.string().min(1).max(100).optional(),
    toolName: ToolNameSchema.optional(),
    sinceHours: WindowHoursSchema.optional(),
  })
  .strict();
export type ToolStatsQuery = z.input<typeof ToolStatsQuerySchema>;
