import * as z from 'zod';
import { KEY_ROLES } from '../access/roles';
import {
  ConversationListQuerySchema,
  ConversationSummarySchema,
  DeleteConversationSchema,
  DeleteTurnSchema,
  DeletionReportSchema,
  EntityListQuerySchema,
  FactPageQuerySchema,
  MergeEntitiesSchema,
  RestoreFactSchema,
  StrategyListQuerySchema,
  TurnPageQuerySchema,
  UserListQuerySchema,
  UserSummarySchema,
  WhoAmISchema,
} from '../browse/schema';
import { defineRoutes, MEMORY_ROLES, REVIEW_ROLES } from './contract';
import { EntitySchema, FactSchema, StrategySchema, TurnSchema } from './schemas';

/*
 * Browsing and curation (src/browse): what the studio needs and every other client can use —
 * who the key is, the tenant's users with their counts, a user's conversations, turns,
 * entities and facts page by page, and the edits a person makes (restore a fact, merge two
 * entities, delete a turn or a conversation, each with a dry run that says what would go).
 * Same rules as route-defs.ts: zod only. Memory content is for admin and agent keys; a
 * reviewer key sees who it is and the users' counts, never content.
 */

const NextCursor = z.string().nullable().describe('pass as `cursor` for the next page; null on the last one');

export const BROWSE_ROUTE_DEFS = defineRoutes({
  whoami: {
    method: 'get',
    path: '/v1/whoami',
    summary: 'The calling key: its tenant, key id, role and the agent it is bound to',
    tag: 'browse',
    input: z.object({}).strict(),
    output: WhoAmISchema,
    status: 200,
    access: 'tenant',
    roles: KEY_ROLES,
  },
  listUsers: {
    method: 'get',
    path: '/v1/users',
    summary: "The tenant's users, by id, each with its memory's counts (nodes per label)",
    tag: 'browse',
    input: UserListQuerySchema,
    output: z.object({ users: z.array(UserSummarySchema), nextCursor: NextCursor }),
    status: 200,
    access: 'tenant',
    roles: REVIEW_ROLES,
  },
  listConversations: {
    method: 'get',
    path: '/v1/users/:userId/conversations',
    summary: "A user's conversations, latest activity first, with their turn counts",
    tag: 'browse',
    input: ConversationListQuerySchema,
    output: z.object({ conversations: z.array(ConversationSummarySchema), nextCursor: NextCursor }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  listTurns: {
    method: 'get',
    path: '/v1/users/:userId/conversations/:conversationId/turns',
    summary: 'A page of a conversation’s turns in order (after `afterIndex`), with the total',
    tag: 'browse',
    input: TurnPageQuerySchema,
    output: z.object({ turns: z.array(TurnSchema), total: z.number().int(), nextAfterIndex: z.number().int().nullable().describe('pass as afterIndex for the next page') }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  deleteConversation: {
    method: 'delete',
    path: '/v1/users/:userId/conversations/:conversationId',
    summary: 'Delete a conversation for real: its turns (Neo4j and the turn log) and working memory; dryRun=true reports what would go',
    tag: 'browse',
    input: DeleteConversationSchema,
    output: DeletionReportSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  deleteTurn: {
    method: 'delete',
    path: '/v1/users/:userId/conversations/:conversationId/turns/:index',
    summary: 'Delete one turn for real (its neighbours are relinked); dryRun=true reports what would go',
    tag: 'browse',
    input: DeleteTurnSchema,
    output: DeletionReportSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  listEntities: {
    method: 'get',
    path: '/v1/users/:userId/entities',
    summary: "A page of a user's entities, filtered by channel, type and name, sorted by name, recency or mentions",
    tag: 'browse',
    input: EntityListQuerySchema,
    output: z.object({ entities: z.array(EntitySchema), nextCursor: NextCursor }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  listFacts: {
    method: 'get',
    path: '/v1/users/:userId/facts',
    summary: "A page of a user's facts, current or past, filtered by channel, entity and predicate",
    tag: 'browse',
    input: FactPageQuerySchema,
    output: z.object({ facts: z.array(FactSchema), nextCursor: NextCursor }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  listStrategies: {
    method: 'get',
    path: '/v1/users/:userId/strategies',
    summary: "A page of a user's strategies (procedural memory), filtered by channel, text and tool, sorted by recency, success rate or uses",
    tag: 'browse',
    input: StrategyListQuerySchema,
    output: z.object({ strategies: z.array(StrategySchema), nextCursor: NextCursor }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  restoreFact: {
    method: 'post',
    path: '/v1/users/:userId/facts/:factId/restore',
    summary: 'Make a retracted fact active again (400 for a superseded one: correct its replacement instead)',
    tag: 'browse',
    input: RestoreFactSchema,
    output: FactSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  mergeEntities: {
    method: 'post',
    path: '/v1/entities/merge',
    summary: 'Fold one entity into another: names become aliases; facts, relationships and mentions move; the merged one is closed',
    tag: 'browse',
    input: MergeEntitiesSchema,
    output: z.object({
      entity: EntitySchema,
      merged: EntitySchema,
      moved: z.object({ facts: z.number().int(), relationships: z.number().int(), mentions: z.number().int() }),
    }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
});
