import type { Json } from './schema';

export * from './schema';
import type { AccessScope } from '../access';
import type { AccessCount } from '../infra/access-count';
import type { TurnFilters } from '../episodic/contract';

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

/** A page of a user's strategies, as the browse listing asks for it. */
export interface StrategyListPage {
  channel?: string;
  /** Part of the description or context pattern (case-insensitive). */
  q?: string;
  /** Only strategies whose tool sequence uses this tool. */
  tool?: string;
  minSuccessRate: number;
  sort: 'recent' | 'success' | 'uses';
  offset: number;
  limit: number;
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

/** A validated invocation ready to persist; its user and channel are the scope's. */
export interface NewInvocation {
  id: string;
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

/** A strategy to learn; its user and channel are the scope's. */
export interface NewStrategy {
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
 * `(:Strategy)-[:SUCCEEDED_IN|FAILED_IN]->(:Conversation)`. Every operation takes the caller's
 * `AccessScope`: writes go to `scope.channel`, reads cover `scope.channels`.
 */
export interface ProceduralStore {
  /**
   * Stores the invocation (creating the Conversation if it is new, owned by the scope's user
   * and write channel) and updates the shared Tool counters. Idempotent on `id`: a repeat
   * returns the stored invocation with `created: false` and changes no counter. Throws
   * ValidationError, writing nothing, when the conversation belongs to another user or
   * channel, or the id is another user's invocation.
   */
  recordInvocation(scope: AccessScope, inv: NewInvocation): Promise<RecordInvocationResult>;
  /**
   * Creates the strategy in `scope.channel`, or reinforces the existing one with the same id: success or
   * failure count + 1, unless this conversation was already counted for it. Throws
   * NotFoundError when `fromConversationId` is not the caller's.
   */
  learnStrategy(scope: AccessScope, s: NewStrategy): Promise<LearnStrategyResult>;
  /** The caller's strategy (any channel), or null when it is missing or another user's. */
  getStrategy(scope: AccessScope, id: string): Promise<Strategy | null>;
  /** Nearest strategies by embedding in `scope.channels`, best first, over-fetching to survive the post-filter; score = cosine. */
  vectorSearchStrategies(scope: AccessScope, embedding: number[], limit: number): Promise<Array<{ strategy: Strategy; score: number }>>;
  /** BM25 over description and context pattern (`strategy_text_scoped`, requiring the scope's read keys) for any word of `text` (plain text; the store makes it Lucene-safe), best first; score = Lucene score. */
  fullTextSearchStrategies(scope: AccessScope, text: string, limit: number): Promise<Array<{ strategy: Strategy; score: number }>>;
  /** success or failure count + 1, last_used = now. NotFoundError if not the caller's. */
  reinforceStrategy(scope: AccessScope, id: string, success: boolean): Promise<Strategy>;
  /** A page of the user's strategies (any channel unless `q.channel`), filtered and sorted; ties broken by id, so pages are stable. */
  listStrategies(scope: AccessScope, q: StrategyListPage): Promise<Strategy[]>;
  /** Per-tool statistics over the caller's invocations in `scope.channels`, most used first. */
  getToolStats(scope: AccessScope, q: { taskType?: string; toolName?: string; since?: string }): Promise<ToolStats[]>;
  /** The caller's invocations of a conversation, oldest first. */
  getInvocations(scope: AccessScope, conversationId: string): Promise<ToolInvocation[]>;

  // Recall support (called by src/retrieval).

  /**
   * The ids among `ids` (the scope user's strategies) that SUCCEEDED_IN or FAILED_IN a conversation
   * with a turn matching every given metadata filter; one query, in no particular order.
   */
  strategiesWithMatchingSource(scope: AccessScope, ids: string[], filters: TurnFilters): Promise<string[]>;
  /** Adds recall access counts to strategies (see AccessCount); one not owned by the row's user is skipped. Returns the strategies touched. */
  addAccessCounts(rows: AccessCount[]): Promise<number>;
}

/** The Postgres invocation log (`tool_invocations`). */
export interface ToolInvocationLog {
  /** Inserts the row for the scope's user and write channel; an existing invocation_id is left as it is (ON CONFLICT DO NOTHING). */
  append(scope: AccessScope, inv: NewInvocation): Promise<void>;
  /** The tool calls of one user's conversation in call order (turn, then time), for the patterns job. */
  callsOf(userId: string, conversationId: string): Promise<Array<{ toolName: string; success: boolean | null }>>;
  /** Deletes the user's rows of one conversation (every call, or those of the turn at `index`); returns how many went. */
  deleteCalls(userId: string, conversationId: string, index?: number): Promise<number>;
}
