import type { z } from 'zod';
import type { TurnMetadata, TurnRoleSchema } from './schema';
import type { AccessScope } from '../access';
import type { AccessCount } from '../infra/access-count';
import type { SearchTerm } from '../infra/fulltext-scope';

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

/** How `EpisodicStore.storeTurns` runs its transaction. */
export interface StoreTurnsOptions {
  /** Runs inside the transaction with its results, before the commit (a throw commits nothing). */
  beforeCommit?: (results: StoreTurnResult[]) => Promise<void>;
  /** Turns written per statement (default: all in one). */
  slice?: number;
  /** Awaited between two slices' statements, and before the commit of more than one slice. */
  pause?: () => Promise<void>;
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

/** What a search of the turns in a scope is narrowed by: a time range and exact metadata. */
export interface TurnWindow {
  /** Only turns at or after this instant. */
  since?: string;
  /** Only turns at or before this instant. */
  until?: string;
  filters?: TurnFilters;
}

/** A turn search: its window and how many hits to return. */
export interface TurnSearch extends TurnWindow {
  limit: number;
}

export type { SearchTerm };

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
  /**
   * Stores many turns in one transaction; same idempotency. `beforeCommit` runs inside the
   * transaction with its results, after the turns are written and before they are committed:
   * if it throws, nothing is committed (the facade writes the Postgres turn log there, so a
   * turn is never in Neo4j without its row). With `slice`, the turns are written `slice` at a
   * time in that transaction, awaiting `pause` between two slices (bulk imports yield there).
   */
  storeTurns(turns: NewTurn[], opts?: StoreTurnsOptions): Promise<StoreTurnResult[]>;
  /** Every turn of the scope user's conversation, in index order; empty when it is missing or another user's. */
  getConversation(scope: AccessScope, conversationId: string): Promise<Turn[]>;
  /** The user's turns (archived ones too) of `scope.channels` between `since` and `until`, newest first, at most `limit`. */
  getRecentTurns(scope: AccessScope, q: { since?: string; until?: string; limit: number }): Promise<Turn[]>;
  /**
   * Keyword (BM25) search of the turns `scope` may read, over content and search text: any of
   * the terms (plain words, weighted; the store makes them Lucene-safe and requires the
   * scope's keys inside the index, `scope_key`, so other users' turns never compete for the
   * limit). Best first, at most `limit`; [] when no word is left to search for.
   */
  fulltextSearch(terms: readonly SearchTerm[], scope: AccessScope, q: TurnSearch): Promise<TurnHit[]>;
  /**
   * The names that speak in the scope's user's conversations (`speaker` of their turns, kept
   * on the User node as turns are written, up to 200), so recall can tell a question's person
   * from its topic. One seek, however many conversations the user has.
   */
  speakers(scope: AccessScope): Promise<string[]>;
  /**
   * Nearest turns of the scope by cosine similarity (Neo4j's (1 + cos) / 2), best first.
   * Hits (recall): the vector index; when its neighbours hold fewer than `limit` of the
   * user's turns (other users', or outside the window), an exact scan of a user with up to
   * 2,000 turns, the index again 8× wider for a larger one. At least `limit` when the user
   * has that many, and up to twice it: the user's turns the index reached anyway (a deeper
   * list costs nothing and ranks better). Light (no content); hydrate with getTurnsByIds.
   * With `content: true` (the facade's vectorSearch): whole turns, at most `limit`; the index
   * (k 4× the limit, at least 100) and, when it reaches too few, an exact scan.
   */
  similarTurns(embedding: number[], scope: AccessScope, q: TurnSearch): Promise<TurnHit[]>;
  similarTurns(embedding: number[], scope: AccessScope, q: TurnSearch & { content: true }): Promise<ScoredTurn[]>;
  /** The given turns that `scope` may read and that pass the window, in no particular order; unknown ids are left out. */
  getTurnsByIds(ids: string[], scope: AccessScope, q: TurnWindow): Promise<Turn[]>;
  /** Turns still waiting for an embedding, oldest first. */
  pendingEmbeddings(limit: number): Promise<Array<{ id: string; content: string }>>; // content: the text to embed (speaker-prefixed)
  /** Stores embeddings; a turn whose id is gone is skipped. */
  setEmbeddings(rows: Array<{ id: string; embedding: number[] }>): Promise<number>;
  /** Turns waiting for an embedding: every user's, or only those whose user id starts with `userPrefix` (a tenant's). */
  countPendingEmbeddings(userPrefix?: string): Promise<number>;

  // Recall support (called by src/retrieval).

  /** Adds recall access counts to the given turns (see AccessCount); a turn not owned by the row's user is skipped. Returns the turns touched. */
  addAccessCounts(rows: AccessCount[]): Promise<number>;
}

/** The Postgres turn log (conversation_logs): a time-series copy of every turn. */
export interface TurnLog {
  /**
   * Inserts rows. The row of a turn this write `created` replaces any row already under its
   * id (one left by a write whose Neo4j commit failed after its row was written); the row of
   * a turn that already existed is left as it is.
   */
  append(turns: Array<NewTurn & { id: string; index: number; created: boolean }>): Promise<void>;
  /** Deletes the user's rows of one conversation: every turn, or the one at `index`. Returns how many went. */
  deleteTurns(userId: string, conversationId: string, index?: number): Promise<number>;
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
  /**
   * Up to `limit` live conversations with turns past their checkpoint, oldest activity first;
   * `userIds` null = everyone's; the users in `skipUserIds` (automatic mining off) left out.
   */
  findUnconsolidated(limit: number, userIds: readonly string[] | null, skipUserIds?: readonly string[]): Promise<UnconsolidatedConversation[]>;
  /** The conversation's checkpoint and turn count; null when it no longer exists (its user was erased). */
  consolidationState(conversationId: string): Promise<{ through: number; turnCount: number } | null>;
  /** Up to `limit` turns of the user's conversation after index `after`, in order. */
  turnsAfter(conversationId: string, userId: string, after: number, limit: number): Promise<ConsolidationTurn[]>;
  /** Moves the consolidation checkpoint to `through` (never back). */
  checkpointConsolidation(conversationId: string, through: number): Promise<void>;
  /** Stamps the conversation consolidated as of `now` (ISO). */
  markConsolidated(conversationId: string, now: string): Promise<void>;
  /**
   * Up to `limit` conversations idle for `idleMinutes` at `now` that used tools and grew since
   * their patterns were extracted; the users in `skipUserIds` (automatic mining off) left out.
   */
  findPatternCandidates(p: { now: string; idleMinutes: number; limit: number; userIds: readonly string[] | null; skipUserIds?: readonly string[] }): Promise<PatternCandidate[]>;
  /** Records that patterns were extracted up to turn count `through`. */
  markPatternsExtracted(conversationId: string, through: number): Promise<void>;
  /** Up to `limit` conversations idle for more than `days` at `now` (the retention rule's), oldest first. */
  expiredConversations(p: { now: string; days: number; limit: number; userIds: readonly string[] | null }): Promise<Array<{ id: string; userId: string }>>;
  /** Marks up to `limit` conversations (and their turns) idle for `days` at `now` archived (a colder tier: still recalled and mined; a new turn brings it back); returns how many. */
  archiveIdle(p: { now: string; days: number; limit: number; userIds: readonly string[] | null }): Promise<number>;
  /** How many conversations wait for consolidation and the last activity of the oldest (ISO), for metrics. */
  consolidationBacklog(userPrefix?: string): Promise<{ oldest: string | null; conversations: number }>;
}

// ------------------------------------------------------------------ browsing (the studio)

/** A conversation as a listing shows it. */
export interface ConversationInfo {
  conversationId: string;
  channel: string;
  /** Turns it holds now (deleted ones are not counted). */
  turns: number;
  startedAt: string | null;
  lastTurnAt: string | null;
  archived: boolean;
}

/**
 * Reading one user's conversations page by page, and deleting turns for real (the studio's
 * browser and its delete control). Every operation is scoped to `scope.userId`: another
 * user's conversation behaves as missing.
 */
export interface ConversationBrowser {
  /** The user's conversations, latest activity first, at most `limit`, after `cursor` (from the previous page). */
  listConversations(scope: AccessScope, q: { channel?: string; cursor?: string; limit: number }): Promise<{ conversations: ConversationInfo[]; nextCursor: string | null }>;
  /** Up to `limit` turns of the conversation with an index above `afterIndex`, in order, and how many it holds; null when it is not the user's. */
  turnsPage(scope: AccessScope, conversationId: string, q: { afterIndex: number; limit: number }): Promise<{ turns: Turn[]; total: number } | null>;
  /** The user's conversation's channel and how many turns a deletion would take (all, or the one at `index`); null when it (or that turn) is not the user's. */
  describe(scope: AccessScope, conversationId: string, index?: number): Promise<{ channel: string; turns: number } | null>;
  /** Deletes one turn (its neighbours are linked to each other); returns how many were deleted (0 or 1). */
  deleteTurn(scope: AccessScope, conversationId: string, index: number): Promise<number>;
  /** Deletes every turn of the conversation and the conversation, in batches; returns the turns deleted. */
  deleteConversation(scope: AccessScope, conversationId: string): Promise<number>;
}
