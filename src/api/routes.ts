import { z } from 'zod';
import { BatchSchema, RecentTurnsQuerySchema, VectorSearchQuerySchema } from '../episodic/schema';
import { TurnInputSchema } from '../episodic/contract';
import { NotFoundError } from '../errors';
import { ChannelSchema, IdSchema, UserIdSchema } from '../schemas';
import { route, type Route } from './contract';
import { KNOWLEDGE_ROUTES } from './knowledge-routes';
import {
  ErasureReportSchema,
  OkSchema,
  ScoredTurnsSchema,
  SessionSnapshotSchema,
  StoreTurnResultSchema,
  TurnsSchema,
  UserStatsSchema,
} from './schemas';

/*
 * The route table: every operation of the HTTP API, one definition each. Adding a facade
 * method to the API is adding an entry here; the server, the OpenAPI document and the
 * client pick it up. Input schemas are the library's own wherever the facade has one.
 */

const SessionPath = { userId: UserIdSchema, conversationId: IdSchema };
const ContextKey = z.string().min(1).max(200);

export const storeTurn = route({
  id: 'storeTurn',
  method: 'post',
  path: '/v1/turns',
  summary: 'Store one conversation turn (idempotent on conversationId + index)',
  tag: 'turns',
  input: TurnInputSchema,
  output: StoreTurnResultSchema,
  status: 201,
  access: 'claim',
  handler: (input, { memory }) => memory.storeTurn(input),
});

export const storeTurns = route({
  id: 'storeTurns',
  method: 'post',
  path: '/v1/turns/batch',
  summary: 'Store many turns (any conversations and users of the tenant) in one call',
  tag: 'turns',
  input: z.object({ turns: BatchSchema }).strict(),
  output: z.object({ results: z.array(StoreTurnResultSchema) }),
  status: 201,
  access: 'claim',
  handler: async (input, { memory }) => ({ results: await memory.storeTurns(input.turns) }),
});

export const getConversation = route({
  id: 'getConversation',
  method: 'get',
  path: '/v1/users/:userId/conversations/:conversationId',
  summary: 'Every turn of a conversation, in order (404 when the user has no such conversation)',
  tag: 'turns',
  input: z.object({ userId: UserIdSchema, conversationId: IdSchema }).strict(),
  output: TurnsSchema,
  status: 200,
  access: 'owned',
  handler: async (input, { memory }) => {
    const turns = await memory.getConversation(input.userId, input.conversationId);
    if (turns.length === 0) throw new NotFoundError('conversation', input.conversationId);
    return { turns };
  },
});

export const getRecentTurns = route({
  id: 'getRecentTurns',
  method: 'post',
  path: '/v1/turns/recent',
  summary: 'Turns of the last `hours` in the given channels (plus _global), newest first',
  tag: 'turns',
  input: RecentTurnsQuerySchema,
  output: TurnsSchema,
  status: 200,
  access: 'owned',
  handler: async (input, { memory }) => ({ turns: await memory.getRecentTurns(input) }),
});

export const vectorSearch = route({
  id: 'vectorSearch',
  method: 'post',
  path: '/v1/search/vector',
  summary: 'Nearest turns by embedding of `query` (or a given `queryEmbedding`)',
  tag: 'recall',
  input: VectorSearchQuerySchema,
  output: ScoredTurnsSchema,
  status: 200,
  access: 'owned',
  handler: async (input, { memory }) => ({ results: await memory.vectorSearch(input) }),
});

export const getSession = route({
  id: 'getSession',
  method: 'get',
  path: '/v1/users/:userId/sessions/:conversationId',
  summary: 'Working memory of a session: recent turns, context values, thoughts, active goal',
  tag: 'working memory',
  input: z.object({ ...SessionPath, channel: ChannelSchema }).strict(),
  output: SessionSnapshotSchema,
  status: 200,
  access: 'owned',
  handler: async ({ userId, conversationId, channel }, { memory }) => {
    const s = memory.session({ userId, conversationId, channel });
    const [recentTurns, context, thoughts, activeGoal] = await Promise.all([s.recentTurns(20), s.context(), s.thoughts(20), s.activeGoal()]);
    return { recentTurns, context, thoughts, activeGoal };
  },
});

export const setContextValue = route({
  id: 'setContextValue',
  method: 'put',
  path: '/v1/users/:userId/sessions/:conversationId/context/:key',
  summary: 'Set a working-memory context value (expires after ttlSeconds, default the working-memory TTL)',
  tag: 'working memory',
  input: z
    .object({ ...SessionPath, key: ContextKey, channel: ChannelSchema, value: z.unknown().describe('any JSON value (required)'), ttlSeconds: z.number().int().positive().max(30 * 86400).optional() })
    .strict(),
  output: OkSchema,
  status: 200,
  access: 'claim',
  handler: async ({ userId, conversationId, channel, key, value, ttlSeconds }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).set(key, value, ttlSeconds);
    return { ok: true as const };
  },
});

export const getContextValue = route({
  id: 'getContextValue',
  method: 'get',
  path: '/v1/users/:userId/sessions/:conversationId/context/:key',
  summary: 'Read a working-memory context value (404 when unset or expired)',
  tag: 'working memory',
  input: z.object({ ...SessionPath, key: ContextKey, channel: ChannelSchema }).strict(),
  output: z.object({ key: z.string(), value: z.unknown() }),
  status: 200,
  access: 'owned',
  handler: async ({ userId, conversationId, channel, key }, { memory }) => {
    const value = await memory.session({ userId, conversationId, channel }).get(key);
    if (value === null || value === undefined) throw new NotFoundError('context value', key);
    return { key, value };
  },
});

export const deleteContextValue = route({
  id: 'deleteContextValue',
  method: 'delete',
  path: '/v1/users/:userId/sessions/:conversationId/context/:key',
  summary: 'Delete a working-memory context value',
  tag: 'working memory',
  input: z.object({ ...SessionPath, key: ContextKey, channel: ChannelSchema }).strict(),
  output: OkSchema,
  status: 200,
  access: 'owned',
  handler: async ({ userId, conversationId, channel, key }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).delete(key);
    return { ok: true as const };
  },
});

export const pushThought = route({
  id: 'pushThought',
  method: 'post',
  path: '/v1/users/:userId/sessions/:conversationId/thoughts',
  summary: "Append to the session's scratchpad of thoughts",
  tag: 'working memory',
  input: z.object({ ...SessionPath, channel: ChannelSchema, thought: z.string().min(1).max(10_000) }).strict(),
  output: OkSchema,
  status: 201,
  access: 'claim',
  handler: async ({ userId, conversationId, channel, thought }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).pushThought(thought);
    return { ok: true as const };
  },
});

export const setActiveGoal = route({
  id: 'setActiveGoal',
  method: 'put',
  path: '/v1/users/:userId/sessions/:conversationId/active-goal',
  summary: "Set the session's active goal",
  tag: 'working memory',
  input: z.object({ ...SessionPath, channel: ChannelSchema, goalId: IdSchema, description: z.string().min(1).max(5_000) }).strict(),
  output: OkSchema,
  status: 200,
  access: 'claim',
  handler: async ({ userId, conversationId, channel, goalId, description }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).setActiveGoal({ goalId, description });
    return { ok: true as const };
  },
});

export const clearSession = route({
  id: 'clearSession',
  method: 'delete',
  path: '/v1/users/:userId/sessions/:conversationId',
  summary: 'Remove every working-memory key of the session',
  tag: 'working memory',
  input: z.object({ ...SessionPath, channel: ChannelSchema }).strict(),
  output: OkSchema,
  status: 200,
  access: 'owned',
  handler: async ({ userId, conversationId, channel }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).clear();
    return { ok: true as const };
  },
});

export const userStats = route({
  id: 'userStats',
  method: 'get',
  path: '/v1/users/:userId/stats',
  summary: "Counts of a user's memory: nodes per label, rows per table, working-memory keys",
  tag: 'users',
  input: z.object({ userId: UserIdSchema }).strict(),
  output: UserStatsSchema,
  status: 200,
  access: 'owned',
  handler: ({ userId }, { users }) => users.stats(userId),
});

export const forgetUser = route({
  id: 'forgetUser',
  method: 'delete',
  path: '/v1/users/:userId',
  summary: 'Erase a user from Neo4j, PostgreSQL and Redis, keeping only an audit record of the erasure',
  tag: 'users',
  input: z.object({ userId: UserIdSchema }).strict(),
  output: ErasureReportSchema,
  status: 200,
  access: 'erase',
  handler: ({ userId }, { users }) => users.erase(userId),
});

/** Every route, in documentation order. */
export const ROUTES = [
  storeTurn,
  storeTurns,
  getConversation,
  getRecentTurns,
  vectorSearch,
  getSession,
  setContextValue,
  getContextValue,
  deleteContextValue,
  pushThought,
  setActiveGoal,
  clearSession,
  userStats,
  forgetUser,
  ...KNOWLEDGE_ROUTES,
] as const satisfies readonly Route[];

export * from './knowledge-routes';
