import * as z from 'zod';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

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
    sourceMetadata: z.record(z.string().max(100), z.union([z.string().max(2_000), z.number(), z.boolean()])).optional(),
  })
  .strict();
export type ObservationInput = z.input<typeof ObservationInputSchema>;
