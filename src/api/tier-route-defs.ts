import * as z from 'zod';
import { LearnedInfoDocumentSchema, LearnedInfoSchema } from '../observations/schema';
import { ChannelSchema, ConnectionIdSchema, UserIdSchema } from '../schemas';
import { MemorySettingsSchema, SettingsUpdateSchema } from '../settings/schema';
import { SessionIdSchema, ShortTermEntrySchema, ShortTermKeySchema, ShortTermListSchema, ShortTermTtlSchema, ShortTermTypeSchema } from '../short-term/schema';
import { TierStatsSchema } from '../tiers/schema';
import { defineRoutes, MEMORY_ROLES, REVIEW_ROLES } from './contract';

/*
 * Route definitions of the memory tiers: the short-term tier (seed 001), per-user settings
 * (seed 002), connection learned info (seed 000 §3.E) and per-tier statistics. Zod only.
 */

const EntryPath = { userId: UserIdSchema, sessionId: SessionIdSchema, key: ShortTermKeySchema };
const ConnectionPath = { userId: UserIdSchema, connectionId: ConnectionIdSchema };

export const TIER_ROUTE_DEFS = defineRoutes({
  writeShortTerm: {
    method: 'put',
    path: '/v1/users/:userId/short-term/:sessionId/:key',
    summary: "Create or replace a short-term entry of the caller's agent session (TTL default 1 h; an agent key's entries are its agent's)",
    tag: 'short-term',
    input: z
      .object({
        ...EntryPath,
        type: ShortTermTypeSchema,
        value: z.unknown().describe('any JSON value (required)'),
        ttlSeconds: ShortTermTtlSchema.optional(),
        channel: ChannelSchema,
      })
      .strict(),
    output: z.object({ entry: ShortTermEntrySchema, created: z.boolean() }),
    status: 200,
    access: 'claim',
    roles: MEMORY_ROLES,
  },
  getShortTerm: {
    method: 'get',
    path: '/v1/users/:userId/short-term/:sessionId/:key',
    summary: 'Read a live short-term entry, counting the access (404 when expired, missing or another agent’s)',
    tag: 'short-term',
    input: z.object(EntryPath).strict(),
    output: ShortTermEntrySchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  listShortTerm: {
    method: 'get',
    path: '/v1/users/:userId/short-term',
    summary: 'Live short-term entries the caller sees (its agent’s; an admin key: the tenant’s), newest first; not counted as access',
    tag: 'short-term',
    input: ShortTermListSchema,
    output: z.object({ entries: z.array(ShortTermEntrySchema) }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  refreshShortTerm: {
    method: 'post',
    path: '/v1/users/:userId/short-term/:sessionId/:key/refresh',
    summary: 'Extend a live short-term entry to now + its TTL (or the given one)',
    tag: 'short-term',
    input: z.object({ ...EntryPath, ttlSeconds: ShortTermTtlSchema.optional() }).strict(),
    output: ShortTermEntrySchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  deleteShortTerm: {
    method: 'delete',
    path: '/v1/users/:userId/short-term/:sessionId/:key',
    summary: 'Delete a short-term entry (404 when the caller sees none)',
    tag: 'short-term',
    input: z.object(EntryPath).strict(),
    output: z.object({ deleted: z.number().int() }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  getSettings: {
    method: 'get',
    path: '/v1/users/:userId/settings',
    summary: "The user's memory settings (the defaults when never changed)",
    tag: 'settings',
    input: z.object({ userId: UserIdSchema }).strict(),
    output: MemorySettingsSchema,
    status: 200,
    access: 'owned',
    roles: REVIEW_ROLES,
  },
  updateSettings: {
    method: 'put',
    path: '/v1/users/:userId/settings',
    summary: "Change the user's memory settings: absent keys keep their value, an agent set to null loses its override (admin keys only)",
    tag: 'settings',
    input: SettingsUpdateSchema,
    output: MemorySettingsSchema,
    status: 200,
    access: 'claim',
    roles: ['admin'],
  },
  listLearnedInfo: {
    method: 'get',
    path: '/v1/users/:userId/connections',
    summary: "Every connection's learned info of the user",
    tag: 'connections',
    input: z.object({ userId: UserIdSchema }).strict(),
    output: z.object({ connections: z.array(LearnedInfoSchema) }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  getLearnedInfo: {
    method: 'get',
    path: '/v1/users/:userId/connections/:connectionId/learned-info',
    summary: "One connection's learned info (404 when there is none)",
    tag: 'connections',
    input: z.object(ConnectionPath).strict(),
    output: LearnedInfoSchema,
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  writeLearnedInfo: {
    method: 'put',
    path: '/v1/users/:userId/connections/:connectionId/learned-info',
    summary: "Replace or merge (default) a connection's learned info; merge sets top-level keys and removes those given as null; stringified JSON values are parsed",
    tag: 'connections',
    input: z.object({ ...ConnectionPath, info: LearnedInfoDocumentSchema, mode: z.enum(['replace', 'merge']).default('merge') }).strict(),
    output: LearnedInfoSchema,
    status: 200,
    access: 'claim',
    roles: MEMORY_ROLES,
  },
  deleteLearnedInfo: {
    method: 'delete',
    path: '/v1/users/:userId/connections/:connectionId/learned-info',
    summary: "Delete a connection's learned info",
    tag: 'connections',
    input: z.object(ConnectionPath).strict(),
    output: z.object({ deleted: z.literal(true) }),
    status: 200,
    access: 'owned',
    roles: MEMORY_ROLES,
  },
  tierStats: {
    method: 'get',
    path: '/v1/users/:userId/tiers',
    summary: 'Counts per memory tier: working (Redis keys), short-term (the caller’s entries), long-term (episodic, semantic, procedural, goals), shared',
    tag: 'users',
    input: z.object({ userId: UserIdSchema }).strict(),
    output: TierStatsSchema,
    status: 200,
    access: 'owned',
    roles: REVIEW_ROLES,
  },
});
