import { z } from 'zod';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';
import type { Queryable } from '../infra/postgres';

/**
 * Observations (seed 000's event bus): short statements an agent records about a user
 * while chatting ("prefers short emails"), queued durably in Postgres and turned into
 * facts, the profile and the narrative by the `consolidate` job, each exactly once.
 */
export const OBSERVATION_CATEGORIES = ['fact', 'preference', 'project_details', 'correction'] as const;
export const ObservationCategorySchema = z.enum(OBSERVATION_CATEGORIES);
export type ObservationCategory = z.output<typeof ObservationCategorySchema>;

export const ObservationInputSchema = z
  .object({
    userId: UserIdSchema,
    channel: ChannelSchema,
    content: z.string().trim().min(1).max(10_000),
    category: ObservationCategorySchema,
    /** Idempotency key: recording the same id twice queues one observation. Random when omitted. */
    id: IdSchema.optional(),
    /** Where it came from: {source, sessionId, connectionId, ...} (kept for the audit trail). */
    sourceMetadata: z.record(z.string().max(100), z.union([z.string().max(2_000), z.number(), z.boolean()])).optional(),
  })
  .strict();
export type ObservationInput = z.input<typeof ObservationInputSchema>;

export interface Observation {
  id: string;
  userId: string;
  channel: string;
  category: ObservationCategory;
  content: string;
  sourceMetadata: Record<string, string | number | boolean>;
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
  /** Queues one observation (idempotent on id). Resolves once it is committed. */
  record(input: { id: string; userId: string; channel: string; category: ObservationCategory; content: string; sourceMetadata: Record<string, string | number | boolean> }): Promise<{ observation: Observation; created: boolean }>;
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
