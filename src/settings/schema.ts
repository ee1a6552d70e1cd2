import * as z from 'zod';
import { IdSchema, UserIdSchema } from '../schemas';

/*
 * The wire contract of per-user memory settings (seed 002, Settings → Memory): zod only
 * (the HTTP client bundles it for browsers).
 */

/** What one agent does differently for this user: `recall: false` skips recall for it (mining goes on). */
export const AgentOverrideSchema = z.object({ recall: z.boolean().optional() }).strict();
export type AgentOverride = z.output<typeof AgentOverrideSchema>;

/** A user's memory settings as stored; a user who never changed them has the defaults. */
export const MemorySettingsSchema = z
  .object({
    userId: z.string(),
    /** Off: recall returns nothing (and says why) and automatic mining skips the user. */
    memoryEnabled: z.boolean(),
    /** topK of a recall that names none; null: the library default (10). */
    defaultTopK: z.number().int().min(1).max(200).nullable(),
    /** Rerank recall's top turns; null: the configuration's RECALL_RERANK. A call's `techniques.rerank` wins. */
    rerank: z.boolean().nullable(),
    /** Off: the worker's extraction jobs skip the user (mining on demand still runs). */
    autoMine: z.boolean(),
    /** Per-agent overrides by agent id. */
    agents: z.record(z.string(), AgentOverrideSchema),
    /** When they were last changed; null for the defaults. */
    updatedAt: z.string().nullable(),
  })
  .meta({ id: 'MemorySettings' });
export type MemorySettings = z.output<typeof MemorySettingsSchema>;

/** A partial update: absent keys keep their value; an agent set to null loses its override. */
export const SettingsUpdateSchema = z
  .object({
    userId: UserIdSchema,
    memoryEnabled: z.boolean().optional(),
    defaultTopK: z.number().int().min(1).max(200).nullable().optional(),
    rerank: z.boolean().nullable().optional(),
    autoMine: z.boolean().optional(),
    agents: z
      .record(IdSchema, AgentOverrideSchema.nullable())
      .refine((m) => Object.keys(m).length <= 100, 'at most 100 agent overrides')
      .optional(),
  })
  .strict();
export type SettingsUpdate = z.input<typeof SettingsUpdateSchema>;
