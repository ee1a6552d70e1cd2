import * as z from 'zod';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

/*
 * The wire contract of the short-term tier (seed 001 AgentShortTermMemory): zod only (the
 * HTTP client bundles it for browsers).
 */

export const SHORT_TERM_TYPES = ['task_context', 'conversation', 'tool_result', 'reflection', 'observation'] as const;
export const ShortTermTypeSchema = z.enum(SHORT_TERM_TYPES);
export type ShortTermType = z.output<typeof ShortTermTypeSchema>;

/** Seed 001's DEFAULT_TTL: one hour. */
export const DEFAULT_SHORT_TERM_TTL_SECONDS = 3_600;
/** 1 s to 30 days. */
export const ShortTermTtlSchema = z
  .number()
  .int()
  .min(1)
  .max(30 * 86_400);
/** An entry's key within its session (a URL path segment: no '/'). */
export const ShortTermKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@:-]*$/, 'must be 1-200 characters of letters, digits, _ . @ : - (starting with a letter or digit)');
export const SessionIdSchema = IdSchema.describe('the agent session the entries belong to');

const Ref = { userId: UserIdSchema, sessionId: SessionIdSchema, key: ShortTermKeySchema };

export const ShortTermWriteSchema = z
  .object({
    ...Ref,
    type: ShortTermTypeSchema,
    value: z
      .unknown()
      .refine((v) => v !== undefined, 'value is required')
      .describe('any JSON value (required)'),
    ttlSeconds: ShortTermTtlSchema.default(DEFAULT_SHORT_TERM_TTL_SECONDS),
    /** The channel a promoted fact is written to. */
    channel: ChannelSchema,
  })
  .strict()
  .refine((e) => JSON.stringify(e.value ?? null).length <= 64_000, { message: 'value must be at most 64,000 characters of JSON', path: ['value'] });
export type ShortTermWrite = z.input<typeof ShortTermWriteSchema>;

export const ShortTermRefSchema = z.object(Ref).strict();
export type ShortTermRef = z.input<typeof ShortTermRefSchema>;

export const ShortTermRefreshSchema = z.object({ ...Ref, ttlSeconds: ShortTermTtlSchema.optional() }).strict();
export type ShortTermRefresh = z.input<typeof ShortTermRefreshSchema>;

export const ShortTermListSchema = z.object({ userId: UserIdSchema, sessionId: SessionIdSchema.optional(), limit: z.coerce.number().int().min(1).max(1000).default(100) }).strict();
export type ShortTermList = z.input<typeof ShortTermListSchema>;

export const ShortTermEntrySchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    agentId: z.string().nullable().describe('the agent that wrote it (null: an admin key)'),
    channel: z.string(),
    sessionId: z.string(),
    key: z.string(),
    type: ShortTermTypeSchema,
    value: z.unknown(),
    ttlSeconds: z.number().int(),
    expiresAt: z.string(),
    accessCount: z.number().int(),
    lastAccessedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    promotedFactId: z.string().nullable().describe('the long-term fact it was promoted to'),
  })
  .meta({ id: 'ShortTermEntry' });
export type ShortTermEntry = z.output<typeof ShortTermEntrySchema>;
