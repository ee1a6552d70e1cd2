import type { AccessScope } from '../access';
import type { Queryable } from '../infra/postgres';
import type { ObservationCategory } from './schema';

export * from './schema';

/**
 * Observations (seed 000's event bus): short statements an agent records about a user
 * while chatting ("prefers short emails"), queued durably in Postgres and turned into
 * facts, the profile and the narrative by the `consolidate` job, each exactly once.
 */
export interface Observation {
  id: string;
  userId: string;
  channel: string;
  category: ObservationCategory;
  content: string;
  sourceMetadata: Record<string, string | number | boolean>;
  /** The tool connection it was learned on (facts made from it carry it); null: user-level. */
  connectionId: string | null;
  createdAt: string;
  processedAt: string | null;
  attempts: number;
  lastError: string | null;
}

export interface BatchOutcome {
  claimed: number;
  processed: number;
  /** Set when the handler threw: the batch was rolled back and stays queued. */
  error?: string;
}

/**
 * The durable queue. Claiming uses `FOR UPDATE SKIP LOCKED` inside one transaction that
 * also marks the rows processed, so two workers never apply the same observation and a
 * crash before commit leaves every claimed row queued.
 */
export interface ObservationQueue {
  /**
   * Queues one observation for the scope's user in its write channel (idempotent on id).
   * Resolves once it is committed; an id another user holds is refused (ValidationError).
   */
  record(
    scope: AccessScope,
    input: { id: string; category: ObservationCategory; content: string; sourceMetadata: Record<string, string | number | boolean>; connectionId?: string | null },
  ): Promise<{ observation: Observation; created: boolean }>;
  get(userId: string, id: string): Promise<Observation | null>;
  /** Users with pending observations, oldest pending first. */
  pendingUsers(limit: number): Promise<string[]>;
  countPending(userId: string): Promise<number>;
  /**
   * Claims up to `limit` pending observations of one user (oldest first, skipping rows
   * another worker holds) and runs `handler` with them and the open transaction. When the
   * handler resolves, the rows are marked processed in that transaction and it commits;
   * when it throws, the transaction rolls back, each row's `attempts` / `last_error` are
   * bumped, and they stay queued. Never throws the handler's error: it is in the outcome.
   */
  processBatch(userId: string, limit: number, handler: (batch: Observation[], tx: Queryable) => Promise<void>): Promise<BatchOutcome>;
}
