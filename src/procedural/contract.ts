import { z } from 'zod';
import type { TurnFilters } from '../episodic/contract';
import type { AccessCount } from '../infra/access-count';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';
import { TurnIdSchema } from '../semantic/contract';

/**
 * Procedural memory: which tools an agent used, how they went, and the strategies
 * (tool sequences for a kind of task) that worked. Owned by one user; the `(:Tool)` node
 * is shared by name, but every statistic a user sees is computed from their own
 * invocations.
 */

/** Tool names: what agent frameworks use ("web_search", "fs.read", "github:create_issue"). */
export const ToolNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/, 'must be letters, digits, _ . : / - (starting with a letter or digit)');

/** JSON values for tool inputs and outputs (stored as JSONB in Postgres, as JSON text in Neo4j). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export const JsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonSchema), z.record(z.string(), JsonSchema)]),
);
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
    timestamp: z.iso.datetime({ offset: true }).optional(),
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
    channels: z.array(ChannelSchema).min(1).max(20).default(['_global']),
    topK: z.number().int().min(1).max(100).default(5),
    /** Leave out strategies whose smoothed success rate is below this. */
    minSuccessRate: z.number().min(0).max(1).default(0),
  })
  .strict();
export type FindStrategiesQuery = z.input<typeof FindStrategiesQuerySchema>;

export const ToolStatsQuerySchema = z
  .object({
    userId: UserIdSchema,
    channels: z.array(ChannelSchema).min(1).max(20).default(['_global']),
    taskType: z.string().min(1).max(100).optional(),
    toolName: ToolNameSchema.optional(),
    sinceHours: z.number().positive().optional(),
  })
  .strict();
export type ToolStatsQuery = z.input<typeof ToolStatsQuerySchema>;

export interface ToolInvocation {
  id: string;
  userId: string;
  channel: string;
  conversationId: string;
  turnIndex: number;
  toolName: string;
  toolInput: Json;
  toolOutput: Json | null;
  success: boolean;
  latencyMs: number;
  errorMessage: string | null;
  taskType: string | null;
  timestamp: string;
}

export interface RecordInvocationResult {
  invocation: ToolInvocation;
  /** False when the invocation id was already recorded (nothing changed). */
  created: boolean;
}

export interface Strategy {
  id: string;
  userId: string;
  channel: string;
  description: string;
  contextPattern: string;
  toolSequence: string[];
  successCount: number;
  failureCount: number;
  /** Laplace-smoothed: (success + 1) / (success + failure + 2). */
  successRate: number;
  createdAt: string;
  lastUsed: string | null;
}

export interface LearnStrategyResult {
  strategy: Strategy;
  /** False when an existing strategy (same id) was reinforced instead. */
  created: boolean;
}

export interface ScoredStrategy {
  strategy: Strategy;
  /** Fused relevance (vector + full-text RRF) weighted by success rate; higher is better. */
  score: number;
}

export interface ToolStats {
  toolName: string;
  invocations: number;
  successes: number;
  failures: number;
  successRate: number;
  avgLatencyMs: number;
  lastUsed: string;
}

/** A validated invocation ready to persist. */
export interface NewInvocation {
  id: string;
  userId: string;
  channel: string;
  conversationId: string;
  turnIndex: number;
  toolName: string;
  toolInput: Json;
  toolOutput?: Json;
  success: boolean;
  latencyMs: number;
  errorMessage?: string;
  taskType?: string;
  timestamp: string;
}

export interface NewStrategy {
  userId: string;
  channel: string;
  id: string;
  description: string;
  contextPattern: string;
  toolSequence: string[];
  fromConversationId?: string;
  success: boolean;
  embedding?: number[];
}

/**
 * Procedural memory in Neo4j: `(:Conversation)-[:USED_TOOL]->(:ToolInvocation)-[:INVOKED]->(:Tool)`,
 * `(:User)-[:HAS_STRATEGY]->(:Strategy)-[:USES_TOOL]->(:Tool)`,
 * `(:Strategy)-[:SUCCEEDED_IN|FAILED_IN]->(:Conversation)`.
 */
export interface ProceduralStore {
  /**
   * Stores the invocation (creating the Conversation if it is new, owned by this user
   * and channel) and updates the shared Tool counters. Idempotent on `id`: a repeat
   * returns the stored invocation with `created: false` and changes no counter. Throws
   * ValidationError, writing nothing, when the conversation belongs to another user or
   * channel, or the id is another user's invocation.
   */
  recordInvocation(inv: NewInvocation): Promise<RecordInvocationResult>;
  /**
   * Creates the strategy, or reinforces the existing one with the same id: success or
   * failure count + 1, unless this conversation was already counted for it. Throws
   * NotFoundError when `fromConversationId` is not the caller's.
   */
  learnStrategy(s: NewStrategy): Promise<LearnStrategyResult>;
  getStrategy(userId: string, id: string): Promise<Strategy | null>;
  /** Nearest strategies by embedding in `channels`, over-fetching to survive the post-filter; score = cosine. */
  vectorSearchStrategies(embedding: number[], userId: string, channels: string[], limit: number): Promise<Array<{ strategy: Strategy; score: number }>>;
  /** BM25 over description and context pattern (`strategy_text_scoped`) for any word of `text` (plain text; the store makes it Lucene-safe); score = Lucene score. */
  fullTextSearchStrategies(text: string, userId: string, channels: string[], limit: number): Promise<Array<{ strategy: Strategy; score: number }>>;
  /** success or failure count + 1, last_used = now. NotFoundError if not the caller's. */
  reinforceStrategy(userId: string, id: string, success: boolean): Promise<Strategy>;
  /** Per-tool statistics over the caller's invocations, most used first. */
  getToolStats(q: { userId: string; channels: string[]; taskType?: string; toolName?: string; since?: string }): Promise<ToolStats[]>;
  /** The caller's invocations of a conversation, oldest first. */
  getInvocations(userId: string, conversationId: string): Promise<ToolInvocation[]>;

  // Recall support (called by src/retrieval).

  /** Whether the user holds any strategy in `channels` (an index seek). */
  hasStrategies(userId: string, channels: string[]): Promise<boolean>;
  /**
   * The ids among `ids` (the user's strategies) that SUCCEEDED_IN or FAILED_IN a conversation
   * with a turn matching every given metadata filter; one query, in no particular order.
   */
  strategiesWithMatchingSource(userId: string, ids: string[], filters: TurnFilters): Promise<string[]>;
  /** Adds recall access counts to strategies (see AccessCount); one not owned by the row's user is skipped. Returns the strategies touched. */
  addAccessCounts(rows: AccessCount[]): Promise<number>;
}

/** The Postgres invocation log (`tool_invocations`). */
export interface ToolInvocationLog {
  /** Inserts the row; an existing invocation_id is left as it is (ON CONFLICT DO NOTHING). */
  append(inv: NewInvocation): Promise<void>;
}
