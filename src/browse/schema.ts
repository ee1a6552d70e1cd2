import * as z from 'zod';
import { KEY_ROLES } from '../access/roles';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';

/*
 * The wire contract of browsing and curation: listing a tenant's users, a user's
 * conversations, turns, entities and facts page by page, and the edits a person makes from
 * the studio (restore a fact, merge entities, delete a turn or a conversation). Zod only:
 * the browser client bundles it. Inputs of GET and DELETE routes travel in the query string,
 * so numbers and flags are coerced from text.
 */

/** A channel to narrow a listing to (no default: every channel of the user). */
const OnlyChannelSchema = ChannelSchema.unwrap().optional().describe('only this channel (default: every channel)');

/** Page size of a listing (query string). */
export const PageLimitSchema = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt);
/** An opaque position returned by the previous page as `nextCursor`. */
export const CursorSchema = z.string().min(1).max(500).optional().describe('opaque: the nextCursor of the previous page');
/** A flag: true/false, or "true"/"false" in a query string. */
const FlagSchema = z
  .union([z.boolean(), z.enum(['true', 'false'])])
  .default(false)
  .transform((v) => v === true || v === 'true');

export const UserListQuerySchema = z.object({ cursor: CursorSchema, limit: PageLimitSchema(200, 50) }).strict();

export const ConversationListQuerySchema = z.object({ userId: UserIdSchema, channel: OnlyChannelSchema, cursor: CursorSchema, limit: PageLimitSchema(500, 100) }).strict();
export type ConversationListQuery = z.input<typeof ConversationListQuerySchema>;

export const TurnPageQuerySchema = z
  .object({
    userId: UserIdSchema,
    conversationId: IdSchema,
    afterIndex: z.coerce.number().int().min(-1).default(-1).describe('turns with a larger index (default: from the first)'),
    limit: PageLimitSchema(1000, 200),
  })
  .strict();
export type TurnPageQuery = z.input<typeof TurnPageQuerySchema>;

export const ENTITY_SORTS = ['name', 'recent', 'mentions'] as const;
export const EntityListQuerySchema = z
  .object({
    userId: UserIdSchema,
    channel: OnlyChannelSchema,
    type: z.string().min(1).max(40).optional(),
    q: z.string().trim().min(1).max(200).optional().describe('a part of the name or an alias (case-insensitive)'),
    includeDeleted: FlagSchema,
    sort: z.enum(ENTITY_SORTS).default('name'),
    cursor: CursorSchema,
    limit: PageLimitSchema(500, 100),
  })
  .strict();
export type EntityListQuery = z.input<typeof EntityListQuerySchema>;

export const FACT_STATUSES = ['current', 'past', 'all'] as const;
export const FACT_SORTS = ['recent', 'confidence'] as const;
export const FactPageQuerySchema = z
  .object({
    userId: UserIdSchema,
    channel: OnlyChannelSchema,
    status: z.enum(FACT_STATUSES).default('current').describe('current: active; past: superseded or retracted; all'),
    entityId: IdSchema.optional(),
    predicate: z.string().min(1).max(100).optional(),
    sort: z.enum(FACT_SORTS).default('recent'),
    cursor: CursorSchema,
    limit: PageLimitSchema(500, 100),
  })
  .strict();
export type FactPageQuery = z.input<typeof FactPageQuerySchema>;

export const STRATEGY_SORTS = ['recent', 'success', 'uses'] as const;
export const StrategyListQuerySchema = z
  .object({
    userId: UserIdSchema,
    channel: OnlyChannelSchema,
    q: z.string().trim().min(1).max(200).optional().describe('a part of the description or context pattern (case-insensitive)'),
    tool: z.string().min(1).max(100).optional().describe('only strategies whose tool sequence uses this tool'),
    minSuccessRate: z.coerce.number().min(0).max(1).default(0).describe('leave out strategies whose smoothed success rate is below this'),
    sort: z.enum(STRATEGY_SORTS).default('recent').describe('recent: last used (or learned) first; success: best success rate first; uses: most used first'),
    cursor: CursorSchema,
    limit: PageLimitSchema(500, 100),
  })
  .strict();
export type StrategyListQuery = z.input<typeof StrategyListQuerySchema>;

export const RestoreFactSchema = z.object({ userId: UserIdSchema, factId: IdSchema, reason: z.string().max(1_000).optional() }).strict();
export type RestoreFactInput = z.input<typeof RestoreFactSchema>;

export const MergeEntitiesSchema = z
  .object({
    userId: UserIdSchema,
    keepId: IdSchema.describe('the entity that stays'),
    mergeId: IdSchema.describe('the entity folded into it: its names become aliases, its facts, relationships and mentions move, then it is deleted (kept as history)'),
  })
  .strict()
  .refine((m) => m.keepId !== m.mergeId, 'keepId and mergeId must differ');
export type MergeEntitiesInput = z.input<typeof MergeEntitiesSchema>;

const DeletionFlags = {
  dryRun: FlagSchema.describe('"true": report what would go, change nothing'),
  keepDerived: FlagSchema.describe('"true": keep what was learned from the deleted turns (facts, entities, profile); only the turns and their links go'),
};

export const DeleteConversationSchema = z.object({ userId: UserIdSchema, conversationId: IdSchema, ...DeletionFlags }).strict();
export type DeleteConversationInput = z.input<typeof DeleteConversationSchema>;

export const DeleteTurnSchema = z.object({ userId: UserIdSchema, conversationId: IdSchema, index: z.coerce.number().int().min(0), ...DeletionFlags }).strict();
export type DeleteTurnInput = z.input<typeof DeleteTurnSchema>;

const DERIVED_KINDS = ['fact', 'relationship', 'entity', 'strategy', 'toolInvocation', 'poolEntry', 'profile'] as const;
const DERIVED_ACTIONS = ['delete', 'keep', 'restore'] as const;

export const DerivedItemSchema = z
  .object({
    kind: z.enum(DERIVED_KINDS),
    id: z.string().describe("the item's id (a profile entry: its key)"),
    label: z.string().describe("what a person recognises it by: a fact's claim, an entity's name, a profile entry"),
    action: z.enum(DERIVED_ACTIONS).describe('delete: goes with the turns; keep: stays, without the link to them; restore: a fact they had replaced is current again'),
    why: z.string(),
  })
  .meta({ id: 'DerivedItem' });

/** What a deletion removes and what stays: the studio shows it before asking to confirm. */
export const DeletionReportSchema = z
  .object({
    dryRun: z.boolean(),
    turns: z.number().int().describe('turns deleted (Neo4j and the Postgres turn log)'),
    conversation: z.boolean().describe('whether the conversation itself goes'),
    workingMemory: z.boolean().describe("whether the session's working memory is cleared"),
    keepDerived: z.boolean(),
    derivedFacts: z.number().int().describe('facts learned from these turns (deleted, kept with another source, or kept as asked)'),
    counts: z.record(z.enum(DERIVED_KINDS), z.record(z.enum(DERIVED_ACTIONS), z.number().int())).describe('items per kind and action'),
    items: z.array(DerivedItemSchema).describe('everything learned from the turns, each with what happens to it and why'),
    summary: z.string().describe('the same, in one sentence'),
  })
  .meta({ id: 'DeletionReport' });
export type DeletionReport = z.output<typeof DeletionReportSchema>;

export const ConversationSummarySchema = z
  .object({
    conversationId: z.string(),
    channel: z.string(),
    turns: z.number().int(),
    startedAt: z.string().nullable(),
    lastTurnAt: z.string().nullable(),
    archived: z.boolean(),
  })
  .meta({ id: 'ConversationSummary' });
export type ConversationSummary = z.output<typeof ConversationSummarySchema>;

export const UserSummarySchema = z.object({ userId: z.string(), counts: z.record(z.string(), z.number().int()).describe("the user's Neo4j nodes per label") }).meta({ id: 'UserSummary' });

export const WhoAmISchema = z
  .object({
    tenantId: z.string(),
    keyId: z.string(),
    role: z.enum(KEY_ROLES),
    agentId: z.string().nullable(),
  })
  .meta({ id: 'WhoAmI' });
