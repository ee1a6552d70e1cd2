import * as z from 'zod';
import { BatchSchema, RecentTurnsQuerySchema, TurnInputSchema, VectorSearchQuerySchema } from '../episodic/schema';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';
import { ContextKeySchema, ContextTtlSchema } from '../working/schema';
import { AUDIT_ROUTE_DEFS } from './audit-route-defs';
import { defineRoutes, ERASE_ROLES, MEMORY_ROLES, REVIEW_ROLES } from './contract';
import { BROWSE_ROUTE_DEFS } from './browse-route-defs';
import { KNOWLEDGE_ROUTE_DEFS } from './knowledge-route-defs';
import { OPS_ROUTE_DEFS } from './ops-route-defs';
import { POOL_ROUTE_DEFS } from './pool-route-defs';
import { TIER_ROUTE_DEFS } from './tier-route-defs';
import { ErasureReportSchema, OkSchema, ScoredTurnsSchema, SessionSnapshotSchema, StoreTurnResultSchema, TurnsSchema, UserStatsSchema } from './schemas';

/*
 * The route table without handlers: every operation of the HTTP API, one definition each,
 * zod only. Adding a facade method to the API is adding a definition here (or in
 * knowledge-route-defs.ts) and its handler in routes.ts (knowledge-routes.ts); the server,
 * the OpenAPI document and the client pick it up. Input schemas are the library's own
 * wherever the facade has one.
 */

const SessionPath = { userId: UserIdSchema, conversationId: IdSchema };

/** Turns, working memory and whole users. */
export const TURN_ROUTE_DEFS = defineRoutes({
  storeTurn: {
    method: 'post',
    path: '/v1/turns',
    summary: 'Store one conversation turn (idempotent on conversationId + index)',
    tag: 'turns',
    input: TurnInputSchema,
    output: StoreTurnResultSchema,
    status: 201,
    access: 'claim',
    roles: MEMORY_ROLES,
  },
  storeTurns: {
    method: 'post',
    path: '/v1/turns/batch',
    summary: 'Store many turns (any conversations and users of the tenant) in one call',
    tag: 'turns',
    input: z.object({ turns: BatchSchema }).strict(),
    output: z.object({ results: z.array(StoreTurnResultSchema) }),
    status: 201,
    access: 'claim',
    roles: MEMORY_ROLES,
  },
  getConversation: {
    method: 'get',
    path: '/v1/users/:userId/conversations/:conversationId',
    summary: 'Every turn of a conversation, in order (404 when the user has no such conversation)',
    tag: 'turns',
    input: z.object({ userId: UserIdSchema, conversationId: IdSchema }).strict(),
    output: TurnsSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  getRecentTurns: {
    method: 'post',
    path: '/v1/turns/recent',
    summary: 'Turns of the last `hours` in the given channels (plus _global), newest first',
    tag: 'turns',
    input: RecentTurnsQuerySchema,
    output: TurnsSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  vectorSearch: {
    method: 'post',
    path: '/v1/search/vector',
    summary: 'Nearest turns by embedding of `query` (or a given `queryEmbedding`)',
    tag: 'recall',
    input: VectorSearchQuerySchema,
    output: ScoredTurnsSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  getSession: {
    method: 'get',
    path: '/v1/users/:userId/sessions/:conversationId',
    summary: 'Working memory of a session: recent turns, context values, thoughts, active goal',
    tag: 'working memory',
    input: z.object({ ...SessionPath, channel: ChannelSchema }).strict(),
    output: SessionSnapshotSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  setContextValue: {
    method: 'put',
    path: '/v1/users/:userId/sessions/:conversationId/context/:key',
    summary: 'Set a working-memory context value (expires after ttlSeconds, default the working-memory TTL)',
    tag: 'working memory',
    input: z
      .object({
        ...SessionPath,
        key: ContextKeySchema,
        channel: ChannelSchema,
        value: z.unknown().describe('any JSON value (required)'),
        ttlSeconds: ContextTtlSchema.optional(),
      })
      .strict(),
    output: OkSchema,
    status: 200,
    access: 'claim',
    roles: MEMORY_ROLES,
  },
  getContextValue: {
    method: 'get',
    path: '/v1/users/:userId/sessions/:conversationId/context/:key',
    summary: 'Read a working-memory context value (404 when unset or expired)',
    tag: 'working memory',
    input: z.object({ ...SessionPath, key: ContextKeySchema, channel: ChannelSchema }).strict(),
    output: z.object({ key: z.string(), value: z.unknown() }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  deleteContextValue: {
    method: 'delete',
    path: '/v1/users/:userId/sessions/:conversationId/context/:key',
    summary: 'Delete a working-memory context value',
    tag: 'working memory',
    input: z.object({ ...SessionPath, key: ContextKeySchema, channel: ChannelSchema }).strict(),
    output: OkSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  pushThought: {
    method: 'post',
    path: '/v1/users/:userId/sessions/:conversationId/thoughts',
    summary: "Append to the session's scratchpad of thoughts",
    tag: 'working memory',
    input: z.object({ ...SessionPath, channel: ChannelSchema, thought: z.string().min(1).max(10_000) }).strict(),
    output: OkSchema,
    status: 201,
    access: 'claim',
    roles: MEMORY_ROLES,
  },
  setActiveGoal: {
    method: 'put',
    path: '/v1/users/:userId/sessions/:conversationId/active-goal',
    summary: "Set the session's active goal",
    tag: 'working memory',
    input: z.object({ ...SessionPath, channel: ChannelSchema, goalId: IdSchema, description: z.string().min(1).max(5_000) }).strict(),
    output: OkSchema,
    status: 200,
    access: 'claim',
    roles: MEMORY_ROLES,
  },
  clearSession: {
    method: 'delete',
    path: '/v1/users/:userId/sessions/:conversationId',
    summary: 'Remove every working-memory key of the session',
    tag: 'working memory',
    input: z.object({ ...SessionPath, channel: ChannelSchema }).strict(),
    output: OkSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  userStats: {
    method: 'get',
    path: '/v1/users/:userId/stats',
    summary: "Counts of a user's memory: nodes per label, rows per table, working-memory keys",
    tag: 'users',
    input: z.object({ userId: UserIdSchema }).strict(),
    output: UserStatsSchema,
    status: 200,
    access: 'owned',
    roles: REVIEW_ROLES,
  },
  exportUser: {
    method: 'get',
    path: '/v1/users/:userId/export',
    summary:
      "A user's whole memory as JSON lines, streamed: the same lines as `mnemograph export` (a header, Neo4j nodes and relationships, PostgreSQL rows) with the tenant's ids; audited as export_user",
    tag: 'users',
    input: z.object({ userId: UserIdSchema }).strict(),
    output: z.string().describe('one JSON object per line: {kind: header|node|rel|row, ...}'),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
    response: { kind: 'stream', contentTypes: ['application/x-ndjson'] },
  },
  forgetUser: {
    method: 'delete',
    path: '/v1/users/:userId',
    summary: 'Erase a user from Neo4j, PostgreSQL and Redis, keeping only an audit record of the erasure',
    tag: 'users',
    input: z.object({ userId: UserIdSchema }).strict(),
    output: ErasureReportSchema,
    status: 200,
    access: 'erase',
    roles: ERASE_ROLES,
  },
});

/** Every route definition, keyed by id, in documentation order. */
export const ROUTE_DEFS = { ...TURN_ROUTE_DEFS, ...KNOWLEDGE_ROUTE_DEFS, ...POOL_ROUTE_DEFS, ...TIER_ROUTE_DEFS, ...AUDIT_ROUTE_DEFS, ...BROWSE_ROUTE_DEFS, ...OPS_ROUTE_DEFS };
