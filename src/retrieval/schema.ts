import * as z from 'zod';
import { ActiveConnectionsSchema, ChannelsSchema, TimestampSchema, UserIdSchema, WindowHoursSchema } from '../schemas';

/*
 * The wire contract of recall: zod only (the HTTP client bundles it for browsers).
 */

/** Per-call switches of the recall techniques; unset keys fall back to the configuration. */
export const TechniquesSchema = z
  .object({
    fulltext: z.boolean().optional(),
    vector: z.boolean().optional(),
    neighbours: z.boolean().optional(),
    speakerBoost: z.boolean().optional(),
    timeAnswerBoost: z.boolean().optional(),
    recency: z.boolean().optional(),
    selfQuery: z.enum(['off', 'boost', 'filter']).optional(),
    /** When the rules find no time expression, ask the recall LLM for the period a question means. */
    selfQueryLlm: z.boolean().optional(),
    diversityCap: z.number().int().min(0).max(1000).optional(),
    queryExpansion: z.enum(['off', 'feedback', 'llm']).optional(),
    hyde: z.boolean().optional(),
    statementQuery: z.boolean().optional(),
    rerank: z.boolean().optional(),
  })
  .strict();
export type Techniques = z.output<typeof TechniquesSchema>;

const IsoTime = TimestampSchema;

/** Input of `remember()`. */
export const RecallQuerySchema = z
  .object({
    userId: UserIdSchema,
    query: z
      .string()
      .max(10_000)
      .refine((s) => s.trim().length > 0, 'must not be empty'),
    /** Active channels; `_global` is always added. */
    channels: ChannelsSchema,
    topK: z.number().int().min(1).max(200).default(10),
    includeEpisodic: z.boolean().default(true),
    includeFacts: z.boolean().default(true),
    includeEntities: z.boolean().default(true),
    includeStrategies: z.boolean().default(true),
    includeGoals: z.boolean().default(true),
    /** Entries of the memory pools the acting agent (an agent-bound key) may read; nothing for other callers. */
    includePools: z.boolean().default(true),
    includeProfile: z.boolean().default(true),
    /** Only memories of the last N hours. */
    timeWindowHours: WindowHoursSchema.optional(),
    /** Narrow every source; all given keys must match. */
    filters: z
      .object({
        source: z.string().min(1).max(200).optional(),
        sessionId: z.string().min(1).max(200).optional(),
        connectionId: z.string().min(1).max(200).optional(),
        contextType: z.string().min(1).max(200).optional(),
        since: IsoTime.optional(),
        until: IsoTime.optional(),
      })
      .strict()
      .optional(),
    /**
     * The user's tool connections active now (seed 000 §3.D): turns and facts without a
     * connection plus those of these connections come back, and the context block shows
     * their learned info. Absent: no connection scoping (everything of the user).
     */
    activeConnections: ActiveConnectionsSchema.optional(),
    /** The moment relative expressions ("last week") are read against; default now. */
    asOf: IsoTime.optional(),
    techniques: TechniquesSchema.optional(),
  })
  .strict();
export type RecallQuery = z.input<typeof RecallQuerySchema>;
export type ParsedRecallQuery = z.output<typeof RecallQuerySchema>;

/** Options of `formatContext()`. */
export const FormatOptionsSchema = z.object({ tokenBudget: z.number().int().min(1).max(1_000_000).optional() }).strict();
