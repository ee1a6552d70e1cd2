import * as z from 'zod';
import { IdSchema, UserIdSchema } from '../schemas';

/*
 * The wire contract of memory pools: zod only (the HTTP client bundles it for browsers).
 */

export const POOL_TYPES = ['shared', 'agent_private', 'team_shared', 'task_scoped'] as const;
export type PoolType = (typeof POOL_TYPES)[number];
export const POOL_SCOPES = ['global', 'account', 'team', 'agent', 'task'] as const;
export type PoolScope = (typeof POOL_SCOPES)[number];
export const ENTRY_KINDS = ['fact', 'observation', 'reflection', 'decision', 'plan', 'tool_output', 'conversation_summary'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];
export const ENTRY_SOURCES = ['agent', 'user', 'system', 'tool', 'workflow'] as const;
export type EntrySource = (typeof ENTRY_SOURCES)[number];
export const GRANT_LEVELS = ['read', 'write'] as const;
export type GrantLevel = (typeof GRANT_LEVELS)[number];

/** An agent of the tenant, as API keys name it (the same alphabet as `keys create --agent`). */
export const AgentRefSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 letters, digits, _, - or . (starting with a letter or digit)');
export const PoolIdSchema = IdSchema.describe('the pool, unique within the tenant');
export const EntryIdSchema = z.string().uuid().describe('a pool entry (generated)');
const IsoTime = z.iso.datetime({ offset: true });
const Unit = z.number().min(0).max(1);

/** Who reads and who writes; the owner always does both, and a write grant implies read. */
export const PoolAccessSchema = z
  .object({
    read: z.array(AgentRefSchema).max(500).default([]),
    write: z.array(AgentRefSchema).max(500).default([]),
    /** Every agent of the tenant may read (never write). */
    publicRead: z.boolean().default(false),
  })
  .strict();

export const CreatePoolInputSchema = z
  .object({
    /** Caller-chosen id (idempotent: a repeat returns the stored pool, `created: false`); generated when absent. */
    poolId: PoolIdSchema.optional(),
    name: z.string().trim().min(1).max(200).optional(),
    type: z.enum(POOL_TYPES).default('shared'),
    /** What the pool serves; defaults from the type (shared: account, agent_private: agent, team_shared: team, task_scoped: task). */
    scope: z.enum(POOL_SCOPES).optional(),
    /** The owning agent. An agent key may only name itself (the default); an admin key any agent, or none. */
    ownerAgent: AgentRefSchema.optional(),
    access: PoolAccessSchema.default({ read: [], write: [], publicRead: false }),
    /** When the pool and its entries are removed by the `pools` job. */
    expiresAt: IsoTime.optional(),
  })
  .strict();
export type CreatePoolInput = z.input<typeof CreatePoolInputSchema>;

export const PoolRefSchema = z.object({ poolId: PoolIdSchema }).strict();

export const GrantInputSchema = z.object({ poolId: PoolIdSchema, agentId: AgentRefSchema, level: z.enum(GRANT_LEVELS).default('read') }).strict();
export type GrantInput = z.input<typeof GrantInputSchema>;
/** A revoke without a level removes both read and write. */
export const RevokeInputSchema = z.object({ poolId: PoolIdSchema, agentId: AgentRefSchema, level: z.enum(GRANT_LEVELS).optional() }).strict();
export type RevokeInput = z.input<typeof RevokeInputSchema>;
export const PublicReadInputSchema = z.object({ poolId: PoolIdSchema, publicRead: z.boolean() }).strict();

/** Where an entry came from: the agent and key are the caller's (never sent); these say which turn or tool call. */
export const ProvenanceInputSchema = z
  .object({
    conversationId: IdSchema.optional(),
    turnId: z.string().min(1).max(300).optional(),
    toolCallId: z.string().min(1).max(200).optional(),
    note: z.string().max(1_000).optional(),
  })
  .strict();

export const EntryInputSchema = z
  .object({
    poolId: PoolIdSchema,
    kind: z.enum(ENTRY_KINDS).default('fact'),
    source: z.enum(ENTRY_SOURCES).default('agent'),
    /** Kept verbatim. */
    content: z
      .string()
      .min(1)
      .max(20_000)
      .refine((s) => s.trim().length > 0, 'must not be blank'),
    importance: Unit.default(0.5),
    confidence: Unit.default(0.8),
    /** The user the entry is about: then it is that user's personal data (export, forget-user) and only that user's recall sees it. */
    userId: UserIdSchema.optional(),
    provenance: ProvenanceInputSchema.default({}),
    expiresAt: IsoTime.optional(),
    embedding: z.array(z.number()).min(1).max(8192).optional(),
  })
  .strict();
export type EntryInput = z.input<typeof EntryInputSchema>;

export const EntryRefSchema = z.object({ poolId: PoolIdSchema, entryId: EntryIdSchema }).strict();

/** A new version of an entry: at least one of content, kind, importance, confidence. */
export const EntryUpdateSchema = z
  .object({
    poolId: PoolIdSchema,
    entryId: EntryIdSchema,
    content: z
      .string()
      .min(1)
      .max(20_000)
      .refine((s) => s.trim().length > 0, 'must not be blank')
      .optional(),
    kind: z.enum(ENTRY_KINDS).optional(),
    importance: Unit.optional(),
    confidence: Unit.optional(),
    /** Why it changed, kept in the history. */
    note: z.string().max(1_000).optional(),
  })
  .strict()
  .refine((u) => u.content !== undefined || u.kind !== undefined || u.importance !== undefined || u.confidence !== undefined, 'give content, kind, importance or confidence');
export type EntryUpdate = z.input<typeof EntryUpdateSchema>;

export const RestoreVersionSchema = z.object({ poolId: PoolIdSchema, entryId: EntryIdSchema, version: z.number().int().min(1) }).strict();
export const ImportanceInputSchema = z.object({ poolId: PoolIdSchema, entryId: EntryIdSchema, direction: z.enum(['boost', 'reduce']), amount: z.number().min(0.01).max(1).default(0.1) }).strict();

export const ListEntriesSchema = z
  .object({
    poolId: PoolIdSchema,
    /** Only entries about this user (and none about others). */
    userId: UserIdSchema.optional(),
    kind: z.enum(ENTRY_KINDS).optional(),
    includeArchived: z.boolean().default(false),
    limit: z.number().int().min(1).max(1_000).default(100),
    /** The `nextCursor` of the previous page (an offset in the newest-first order). */
    cursor: z
      .string()
      .regex(/^\d{1,9}$/, 'pass the nextCursor of the previous page unchanged')
      .optional(),
  })
  .strict();

export const PoolSearchSchema = z
  .object({
    query: z
      .string()
      .max(10_000)
      .refine((s) => s.trim().length > 0, 'must not be empty'),
    /** Whose recall: entries about another user are left out (entries about no user always count). */
    userId: UserIdSchema.optional(),
    /** Only these pools (each must be readable); default every pool the caller may read. */
    poolIds: z.array(PoolIdSchema).max(100).optional(),
    topK: z.number().int().min(1).max(100).default(10),
  })
  .strict();
export type PoolSearch = z.input<typeof PoolSearchSchema>;

export const SnapshotInputSchema = z.object({ poolId: PoolIdSchema, note: z.string().max(1_000).optional() }).strict();
export const SnapshotRefSchema = z.object({ poolId: PoolIdSchema, snapshotId: z.string().uuid() }).strict();
