import * as z from 'zod';
import { ChannelSchema, ConnectionIdSchema, IdSchema, UserIdSchema } from '../schemas';

/*
 * The wire contract of observations: zod only (the HTTP client bundles it for browsers).
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
    /** The tool connection it was learned on: the facts made from it are scoped to that connection. */
    connectionId: ConnectionIdSchema.optional(),
    sourceMetadata: z.record(z.string().max(100), z.union([z.string().max(2_000), z.number(), z.boolean()])).optional(),
  })
  .strict();
export type ObservationInput = z.input<typeof ObservationInputSchema>;

/** A connection's learned-info document (seed 000 §3.E `persistent_learned_info`): a JSON object. */
export const LearnedInfoDocumentSchema = z.record(z.string().min(1).max(200), z.unknown()).refine((d) => JSON.stringify(d).length <= 64_000, 'at most 64,000 characters of JSON');

/** Replace or merge one connection's learned info. `merge`: top-level keys are set, a null removes its key. */
export const LearnedInfoWriteSchema = z
  .object({
    userId: UserIdSchema,
    connectionId: ConnectionIdSchema,
    info: LearnedInfoDocumentSchema,
    mode: z.enum(['replace', 'merge']).default('merge'),
  })
  .strict();
export type LearnedInfoWrite = z.input<typeof LearnedInfoWriteSchema>;

export const LearnedInfoSchema = z.object({ connectionId: z.string(), info: z.record(z.string(), z.unknown()), updatedAt: z.string() }).meta({ id: 'LearnedInfo' });
export type LearnedInfo = z.output<typeof LearnedInfoSchema>;
