import type { Json } from './schema';

export * from './schema';

/**
 * Procedural memory: which tools an agent used, how they went, and the strategies
 * (tool sequences for a kind of task) that worked. Owned by one user; the `(:Tool)` node
 * is shared by name, but every statistic a user sees is computed from their own
 * invocations.
 */

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
  /** BM25 over description and context pattern (`strategy_text_scoped`); score = Lucene score. */
  fullTextSearchStrategies(text: string, userId: string, channels: string[], limit: number): Promise<Array<{ strategy: Strategy; score: number }>>;
  /** success or failure count + 1, last_used = now. NotFoundError if not the caller's. */
  reinforceStrategy(userId: string, id: string, success: boolean): Promise<Strategy>;
  /** Per-tool statistics over the caller's invocations, most used first. */
  getToolStats(q: { userId: string; channels: string[]; taskType?: string; toolName?: string; since?: string }): Promise<ToolStats[]>;
  /** The caller's invocations of a conversation, oldest first. */
  getInvocations(userId: string, conversationId: string): Promise<ToolInvocation[]>;
}

/** The Postgres invocation log (`tool_invocations`). */
export interface ToolInvocationLog {
  /** Inserts the row; an existing invocation_id is left as it is (ON CONFLICT DO NOTHING). */
  append(inv: NewInvocation): Promise<void>;
}
