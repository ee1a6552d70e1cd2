import * as z from 'zod';
import { ChannelSchema, ChannelsSchema, IdSchema, TimestampSchema, UserIdSchema, WindowHoursSchema } from '../schemas';

/*
 * The wire contract of episodic memory: zod only (the HTTP client bundles it for browsers).
 */

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
    timestamp: TimestampSchema.optional(),
    model: z.string().max(100).optional(),
    metadata: TurnMetadataSchema.optional(),
  })
  .strict();

export type TurnInput = z.input<typeof TurnInputSchema>;
export type TurnMetadata = z.output<typeof TurnMetadataSchema>;

/** Input of `storeTurns()`: 1-10,000 turns of any conversations. */
export const BatchSchema = z.array(TurnInputSchema).min(1).max(10_000);

/** Input of `getRecentTurns()`. */
export const RecentTurnsQuerySchema = z
  .object({
    userId: UserIdSchema,
    channels: ChannelsSchema,
    hours: WindowHoursSchema.default(24),
    limit: z.number().int().min(1).max(1000).default(50),
  })
  .strict();

/** Input of `vectorSearch()`: exactly one of `query` or `queryEmbedding`. */
export const VectorSearchQuerySchema = z
  .object({
    userId: UserIdSchema,
    channels: ChannelsSchema,
    query: z.string().min(1).max(10_000).optional(),
    queryEmbedding: z.array(z.number()).min(1).max(8192).optional(),
    topK: z.number().int().min(1).max(200).default(10),
    timeWindowHours: WindowHoursSchema.optional(),
  })
  .strict()
  .refine((q) => (q.query === undefined) !== (q.queryEmbedding === undefined), 'give exactly one of query or queryEmbedding');
