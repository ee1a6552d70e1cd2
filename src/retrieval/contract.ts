import type { AccessScope } from '../access';
import type { Turn, TurnFilters } from '../episodic/contract';
import type { ParsedRecallQuery, Techniques } from './schema';

export * from './schema';

/**
 * Why an item was recalled: the signals that found it, with its rank (1-based) and raw score
 * in each; `turnId` names the turn a neighbour signal came from.
 */
export type Signals = Record<string, { rank?: number; score?: number; note?: string; turnId?: string }>;

export interface RecalledTurn {
  turn: Turn;
  /** Final score after fusion and boosts (comparable within one bundle only). */
  score: number;
  signals: Signals;
}

export type RecallItemKind = 'fact' | 'entity' | 'strategy' | 'goal' | 'pool';

/** A fact, entity, strategy, goal or pool entry found by a RecallSource, in a source-neutral shape. */
export interface RecallItem {
  id: string;
  kind: RecallItemKind;
  channel: string;
  /** The text shown in a prompt. */
  text: string;
  /** The source's own relevance, higher is better (only compared within the source). */
  score: number;
  timestamp?: string;
  /** Facts: whether the fact holds now; drives the temporal boost (current 1.2x, past 0.7x). */
  temporal?: 'current' | 'past' | 'future';
  /** Related items reached by graph expansion (entities), depth-limited. */
  related?: Array<{ id: string; text: string; relation: string }>;
  /** Source-specific fields (confidence, status...), passed through. */
  data?: Record<string, unknown>;
  /** The source's own signals (full-text / vector rank, graph hop...), merged into the item's signals. */
  signals?: Signals;
}

export interface RecalledItem extends RecallItem {
  /** Weighted relevance across sources, what formatContext orders by. */
  relevance: number;
  signals: Signals;
}

/** What a source is asked: the same scope and filters as the turns. */
export interface SourceRequest {
  /** Whose memory, and which channels, the source may read. */
  scope: AccessScope;
  query: string;
  /** The query embedding, when the embedder answered. */
  embedding?: number[];
  limit: number;
  since?: string;
  until?: string;
  filters: TurnFilters;
  /** The moment "current" is judged against (the query's asOf, default now). */
  asOf?: string;
}

/**
 * A pluggable source of non-episodic memories (facts, entities, strategies, goals). Each
 * subsystem provides one; an unwired source is simply absent and its list stays empty.
 * `search` returns the best `limit` items of the user within the channels and filters, best
 * first; it may reject, and recall then answers without it (marked in `bundle.degraded`).
 */
export interface RecallSource {
  readonly kind: RecallItemKind;
  search(req: SourceRequest): Promise<RecallItem[]>;
}

/** The user profile (schema-free, from consolidation); null when there is none. */
export interface ProfileSource {
  getProfile(userId: string): Promise<Record<string, unknown> | null>;
}

/** What `remember()` returns. Every list is best first. */
export interface MemoryBundle {
  query: string;
  userId: string;
  channels: string[];
  turns: RecalledTurn[];
  facts: RecalledItem[];
  entities: RecalledItem[];
  strategies: RecalledItem[];
  goals: RecalledItem[];
  /** Entries of the memory pools the acting agent may read (`data.poolId`, `data.poolName` say which); empty without an agent. */
  pools: RecalledItem[];
  profile: Record<string, unknown> | null;
  /** The time range applied or boosted, and where it came from. */
  time?: { since?: string; until?: string; from: 'window' | 'filters' | 'self-query' | 'self-query (llm)'; mode: 'filter' | 'boost' };
  /** Sources or signals that failed or were unavailable; the rest still answered. */
  degraded: string[];
  /** Milliseconds per stage (RecallMetrics). */
  timings: Record<string, number>;
  /** Set when recall did not run, and why (memory disabled, recall off for this agent in the user's settings). */
  skipped?: string;
  /** The active connections' learned info (seed 000 §3.E), for the context block. */
  learnedInfo?: Array<{ connectionId: string; info: Record<string, unknown> }>;
}

/** Counts access on everything a recall returned; written in batches off the request path. */
export interface Reinforcer {
  record(userId: string, items: Array<{ kind: 'turn' | RecallItemKind; id: string }>): void;
  /** Writes everything queued so far. */
  flush(): Promise<void>;
  /**
   * Writes access counts for `items` now, past the queue, in batches of 1, 2 and 11 rows of
   * each kind (Neo4j plans per size class of a list), so that the writes' statements are
   * planned before the first flush (warm-up's rehearsal).
   */
  rehearse?(userId: string, items: Array<{ kind: 'turn' | RecallItemKind; id: string }>): Promise<void>;
  close(): Promise<void>;
}

/** Generates text for the LLM techniques (HyDE, query expansion, self-query, rerank); optional. */
export interface TextGenerator {
  /** `userId`: whose request it serves, for the usage record. */
  generate(prompt: string, opts?: { maxTokens?: number; userId?: string }): Promise<string>;
}

/** The read path behind `AgentMemory.remember()`. */
export interface RecallEngine {
  /**
   * Answers a validated query for `scope` (whose turns and knowledge may be read; built from
   * `q.userId` and `q.channels`, plus `_global`, when absent). Every list best first. Never
   * throws for a failing optional source or signal: it is listed in `degraded`.
   */
  recall(q: ParsedRecallQuery, scope?: AccessScope): Promise<MemoryBundle>;
  /** Answers as `recall` does, without the audit row and the reinforcement (warm-up's rehearsal). */
  rehearse?(q: ParsedRecallQuery, scope: AccessScope): Promise<MemoryBundle>;
  /** Rehearses the reinforcement of what `bundle` returned (`Reinforcer.rehearse`; warm-up). */
  rehearseReinforcement?(userId: string, bundle: MemoryBundle): Promise<void>;
}

/** Source weights (seed 003): how much each kind counts when sources are ranked together. */
export interface SourceWeights {
  episodic: number;
  facts: number;
  entities: number;
  procedural: number;
  recency: number;
}

/** Resolved recall settings (from configuration). */
export interface RecallSettings {
  weights: SourceWeights;
  techniques: Required<Omit<Techniques, 'diversityCap'>> & { diversityCap: number };
  /** How the full-text and vector lists are fused: reciprocal rank or normalised score. */
  fusion: 'rrf' | 'score';
  /** RRF constant k. */
  rrfK: number;
  /** RRF weight of the vector list relative to full-text (1). */
  vectorWeight: number;
  /** Least vector score (index scale, (1 + cosine) / 2) of a fact or entity no keyword found. */
  minVectorScore: number;
  /** The same for entities (names are short texts; some models score them higher against any question). */
  minEntityVectorScore: number;
  /** Share of an adjacent turn's score a turn gains (halved per further step). */
  neighbourWeight: number;
  /** How many turns either side count as neighbours. */
  neighbourWindow: number;
  /** Share of the neighbour weight a turn gains from the turns after it (1 = both directions alike). */
  neighbourBackward: number;
  /**
   * The neighbour weight between turns of a user–assistant chat (no speaker names): the
   * adjacent turn only, without the answer boost.
   */
  chatNeighbourWeight: number;
  /** Multiplier for a turn that ends with a question mark (1 = off); its match passes to its reply. */
  questionWeight: number;
  /** Multiplier on what a question passes to the next turn, its reply (1 = off). */
  answerBoost: number;
  /** Multiplier for turns spoken by someone the query names. */
  speakerBoost: number;
  /** Multiplier for turns that mention a time, when the query asks when (1 = off). */
  timeAnswerBoost: number;
  /** Multiplier for turns inside a self-query time hint (mode boost). */
  timeHintBoost: number;
  recencyHalfLifeDays: number;
  /** Candidates fetched per signal before fusion. */
  candidates: number;
  /** How many fused top turns a reranker reorders (RECALL_RERANK). */
  rerankDepth: number;
  /** Graph expansion depth asked of entity sources. */
  entityDepth: number;
}
