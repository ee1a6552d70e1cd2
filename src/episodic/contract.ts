import type { z } from 'zod';
import type { TurnMetadata, TurnRoleSchema } from './schema';
import type { AccessScope } from '../access';
import type { AccessCount } from '../schemas';

export * from './schema';

/** A stored turn, as every read returns it. */
export interface Turn {
  id: string;
  userId: string;
  channel: string;
  conversationId: string;
  index: number;
  role: z.output<typeof TurnRoleSchema>;
  content: string;
  timestamp: string;
  tokenCount: number;
  metadata: TurnMetadata;
  /** False until the background embedder has embedded it (deferred mode). */
  embedded: boolean;
}

export interface StoreTurnResult {
  turn: Turn;
  /** False when (conversation, index) was already stored: the call was a no-op. */
  created: boolean;
}

export interface ScoredTurn {
  turn: Turn;
  score: number;
}

/** A search hit without the turn's content: what ranking needs, hydrated later by id. */
export interface TurnHit {
  id: string;
  conversationId: string;
  index: number;
  channel: string;
  speaker: string | null;
  role: z.output<typeof TurnRoleSchema>;
  timestamp: string;
  score: number;
  /** The turn ends with a question mark: what answers it is usually the next turn. */
  asks: boolean;
  /** The turn places something in time ("yesterday", "in May"): what a "when" question wants. */
  dated: boolean;
}

/** A validated turn ready to persist (ids and derived fields resolved). */
export interface NewTurn {
  userId: string;
  channel: string;
  conversationId: string;
  index?: number;
  role: Turn['role'];
  content: string;
  timestamp: string;
  tokenCount: number;
  contentHash: string;
  model?: string;
  metadata: TurnMetadata;
  /** Extra keyword text for full-text search (speaker, date words). */
  searchText: string;
  embedding?: number[];
}

export interface TurnQuery {
  userId: string;
  channels: string[];
  /** Only turns at or after this instant. */
  since?: string;
  until?: string;
  limit: number;
  /** Exact-match metadata filters (used by the recall queries). */
  filters?: TurnFilters;
}

/** Metadata a recall can be narrowed by; each given key must match exactly. */
export interface TurnFilters {
  source?: string;
  sessionId?: string;
  connectionId?: string;
  contextType?: string;
}

/**
 * Episodic memory in Neo4j: (:User)-[:HAS_CONVERSATION]->(:Conversation)-[:HAS_TURN]->(:Turn),
 * (:Turn)-[:FOLLOWED_BY]->(:Turn). Every read is scoped to one user.
 */
export interface EpisodicStore {
  /**
   * Stores a turn. Idempotent on (conversationId, index): a repeat, even a concurrent one,
   * returns the stored turn with `created: false`. Rejects a conversation that belongs to
   * another user or channel without writing anything.
   */
  storeTurn(turn: NewTurn): Promise<StoreTurnResult>;
  /** Stores many turns in one transaction per chunk; same idempotency. */
  storeTurns(turns: NewTurn[]): Promise<StoreTurnResult[]>;
  /** Every turn of the scope user's conversation, in index order; empty when it is missing or another user's. */
  getConversation(scope: AccessScope, conversationId: string): Promise<Turn[]>;
  /** The user's unarchived turns of `scope.channels` between `since` and `until`, newest first, at most `limit`. */
  getRecentTurns(scope: AccessScope, q: { since?: string; until?: string; limit: number }): Promise<Turn[]>;
  /** Approximate nearest turns of one user, over-fetching to survive post-filtering. */
  vectorSearch(embedding: number[], q: TurnQuery): Promise<ScoredTurn[]>;
  /**
   * Keyword (BM25) search over content and search text with a Lucene query that this store
   * scopes to the user's channels inside the index (`scope_key`), so other users' turns never
   * compete for the limit. Best first. The query text must already be Lucene-safe.
   */
  fulltextSearch(luceneQuery: string, q: TurnQuery): Promise<TurnHit[]>;
  /**
   * The names that speak in the user's conversations (`speaker` of their turns, kept on
   * the User node as turns are written, up to 200), so recall can tell a question's person
   * from its topic. One seek, however many conversations the user has.
   */
  speakers(userId: string): Promise<string[]>;
  /**
   * Nearest turns by cosine similarity, best first: the vector index with over-fetch, and an
   * exact scan of the user's turns when the index's neighbours are mostly other users'.
   * At least `limit` when the user has that many, and up to twice it: the user's turns the
   * index's over-fetch reached anyway (a deeper list costs recall nothing and ranks better).
   * Hits are light (no content); fetch the ones you keep with getTurnsByIds.
   */
  similarTurns(embedding: number[], q: TurnQuery): Promise<TurnHit[]>;
  /** The given turns of one user that pass the query's channel, time and metadata filters. */
  getTurnsByIds(ids: string[], q: Omit<TurnQuery, 'limit'>): Promise<Turn[]>;
  /** Turns still waiting for an embedding, oldest first. */
  pendingEmbeddings(limit: number): Promise<Array<{ id: string; content: string }>>; // content: the text to embed (speaker-prefixed)
  /** Stores embeddings; a turn whose id is gone is skipped. */
  setEmbeddings(rows: Array<{ id: string; embedding: number[] }>): Promise<number>;
  countPendingEmbeddings(): Promise<number>;
}

/** The Postgres turn log (conversation_logs): a time-series copy of every turn. */
export interface TurnLog {
  /** Inserts rows; an existing turn id is left as it is. */
  append(turns: Array<NewTurn & { id: string; index: number }>): Promise<void>;
}

// ------------------------------------------------------------------ upkeep (worker jobs)


/** A conversation with turns the consolidate job has not read yet. */
export interface UnconsolidatedConversation {
  id: string;
  userId: string;
  channel: string;
  /** The last turn index already consolidated (-1: none). */
  through: number;
  turnCount: number;
}

/** An idle conversation that used tools and grew since its patterns were last extracted. */
export interface PatternCandidate {
  id: string;
  userId: string;
  channel: string;
  turnCount: number;
  /** The content of its first user turn (the task), null when it has none. */
  firstUserTurn: string | null;
}

/** A turn as the extractor reads it. */
export interface ConsolidationTurn {
  id: string;
  index: number;
  role: Turn['role'];
  content: string;
  timestamp: string;
  speaker: string | null;
}

/**
 * The cross-user progress of conversations through the worker: the consolidation
 * checkpoint (`consolidated_through`, `consolidated`), the patterns checkpoint and
 * archiving. Checkpoints only move forward; every write is idempotent.
 */
export interface ConversationUpkeep {
  /** Up to `limit` live conversations with turns past their checkpoint, oldest activity first; `userIds` null = everyone's. */
  findUnconsolidated(limit: number, userIds: readonly string[] | null): Promise<UnconsolidatedConversation[]>;
  /** The conversation's checkpoint and turn count; null when it no longer exists (its user was erased). */
  consolidationState(conversationId: string): Promise<{ through: number; turnCount: number } | null>;
  /** Up to `limit` turns of the user's conversation after index `after`, in order. */
  turnsAfter(conversationId: string, userId: string, after: number, limit: number): Promise<ConsolidationTurn[]>;
  /** Moves the consolidation checkpoint to `through` (never back). */
  checkpointConsolidation(conversationId: string, through: number): Promise<void>;
  /** Stamps the conversation consolidated as of `now` (ISO). */
  markConsolidated(conversationId: string, now: string): Promise<void>;
  /** Up to `limit` conversations idle for `idleMinutes` at `now` that used tools and grew since their patterns were extracted. */
  findPatternCandidates(p: { now: string; idleMinutes: number; limit: number; userIds: readonly string[] | null }): Promise<PatternCandidate[]>;
  /** Records that patterns were extracted up to turn count `through`. */
  markPatternsExtracted(conversationId: string, through: number): Promise<void>;
  /** Archives up to `limit` conversations (and their turns) idle for `days` at `now`; returns how many. */
  archiveIdle(p: { now: string; days: number; limit: number; userIds: readonly string[] | null }): Promise<number>;
  /** How many conversations wait for consolidation and the last activity of the oldest (ISO), for metrics. */
  consolidationBacklog(): Promise<{ oldest: string | null; conversations: number }>;
  /**
   * Adds accesses (reinforcement): access_count + n and last_accessed moved forward only;
   * a row whose node is not its user's is ignored. Returns how many turns were touched.
   */
  addAccessCounts(rows: AccessCount[]): Promise<number>;
}
