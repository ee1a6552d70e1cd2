import { z } from 'zod';
import type { AccessScope } from '../access';
import type { AccessCount } from '../infra/access-count';
import type { SearchTerm } from '../infra/fulltext-scope';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

export const MAX_TURN_CHARS = 100_000;

const MetadataValue = z.union([z.string().max(2_000), z.number(), z.boolean()]);

/** Metadata carried by a turn; the named keys are indexed and usable as recall filters. */
export const TurnMetadataSchema = z
  .object({
    source: z.string().max(200).optional(),
    sessionId: z.string().max(200).optional(),
    connectionId: z.string().max(200).optional(),
    contextType: z.string().max(200).optional(),
    toolName: z.string().max(200).optional(),
    speaker: z.string().max(200).optional(),
  })
  .catchall(MetadataValue)
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 metadata keys');

export const TurnRoleSchema = z.enum(['user', 'assistant', 'system', 'tool']);

export const TurnInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    conversationId: IdSchema,
    /** Position in the conversation; assigned (next free) when omitted. */
    index: z.number().int().min(0).max(10_000_000).optional(),
    role: TurnRoleSchema,
    content: z
      .string()
      .max(MAX_TURN_CHARS, `must be at most ${MAX_TURN_CHARS} characters; split long documents into several turns`)
      .refine((s) => s.trim().length > 0, 'must not be empty'),
    timestamp: z.iso.datetime({ offset: true }).optional(),
    model: z.string().max(100).optional(),
    metadata: TurnMetadataSchema.optional(),
  })
  .strict();

export type TurnInput = z.input<typeof TurnInputSchema>;
export type TurnMetadata = z.output<typeof TurnMetadataSchema>;

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
  /** Stores many turns in one transaction per chunk; same idempotency. */
  storeTurns(turns: NewTurn[]): Promise<StoreTurnResult[]>;
  getConversation(userId: string, conversationId: string): Promise<Turn[]>;
  getRecentTurns(q: TurnQuery): Promise<Turn[]>;
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
  countPendingEmbeddings(): Promise<number>;

  // Recall support (called by src/retrieval).

  /** Adds recall access counts to the given turns (see AccessCount); a turn not owned by the row's user is skipped. Returns the turns touched. */
  addAccessCounts(rows: AccessCount[]): Promise<number>;
}

/** The Postgres turn log (conversation_logs): a time-series copy of every turn. */
export interface TurnLog {
  /** Inserts rows; an existing turn id is left as it is. */
  append(turns: Array<NewTurn & { id: string; index: number }>): Promise<void>;
}
