import { Readable } from 'node:stream';
import { primed } from '../audit/export';
import { TenantNamespace } from '../access';
import { externalExportLine } from '../browse/memory-browser';
import { NotFoundError } from '../errors';
import { AUDIT_HANDLERS } from './audit-routes';
import { BROWSE_HANDLERS } from './browse-routes';
import { bindRoutes, type Handlers, type Route } from './handlers';
import { KNOWLEDGE_HANDLERS } from './knowledge-routes';
import { OPS_HANDLERS } from './ops-routes';
import { POOL_HANDLERS } from './pool-routes';
import { TIER_HANDLERS } from './tier-routes';
import { ROUTE_DEFS, type TURN_ROUTE_DEFS } from './route-defs';

/*
 * The server side of the route table: each definition of route-defs.ts bound to the facade
 * under the same key. Handlers receive validated input in internal (tenant-namespaced) ids.
 */

const TURN_HANDLERS = {
  storeTurn: (input, { memory }) => memory.storeTurn(input),
  storeTurns: async (input, { memory }) => ({ results: await memory.storeTurns(input.turns) }),
  getConversation: async (input, { memory }) => {
    const turns = await memory.getConversation(input.userId, input.conversationId);
    if (turns.length === 0) throw new NotFoundError('conversation', input.conversationId);
    return { turns };
  },
  getRecentTurns: async (input, { memory }) => ({ turns: await memory.getRecentTurns(input) }),
  vectorSearch: async (input, { memory }) => ({ results: await memory.vectorSearch(input) }),
  getSession: async ({ userId, conversationId, channel }, { memory }) => {
    const s = memory.session({ userId, conversationId, channel });
    const [recentTurns, context, thoughts, activeGoal] = await Promise.all([s.recentTurns(20), s.context(), s.thoughts(20), s.activeGoal()]);
    return { recentTurns, context, thoughts, activeGoal };
  },
  setContextValue: async ({ userId, conversationId, channel, key, value, ttlSeconds }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).set(key, value, ttlSeconds);
    return { ok: true as const };
  },
  getContextValue: async ({ userId, conversationId, channel, key }, { memory }) => {
    const value = await memory.session({ userId, conversationId, channel }).get(key);
    if (value === null || value === undefined) throw new NotFoundError('context value', key);
    return { key, value };
  },
  deleteContextValue: async ({ userId, conversationId, channel, key }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).delete(key);
    return { ok: true as const };
  },
  pushThought: async ({ userId, conversationId, channel, thought }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).pushThought(thought);
    return { ok: true as const };
  },
  setActiveGoal: async ({ userId, conversationId, channel, goalId, description }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).setActiveGoal({ goalId, description });
    return { ok: true as const };
  },
  clearSession: async ({ userId, conversationId, channel }, { memory }) => {
    await memory.session({ userId, conversationId, channel }).clear();
    return { ok: true as const };
  },
  // An agent key sees what its routes show it (src/tenancy AgentView): pools it may read, its own short-term entries.
  userStats: async ({ userId }, { users, memory }) => users.stats(userId, await memory.agentView()),
  // Started (first line read) before the answer begins, so a store outage is an error answer, not an empty export.
  // Ids in the tenant's terms, like every answer (the CLI's export keeps them as stored).
  exportUser: async ({ userId }, { users, memory, tenantId }) => {
    const prefix = new TenantNamespace(tenantId).prefix;
    const lines = await primed(users.export(userId, await memory.agentView()));
    return {
      contentType: 'application/x-ndjson; charset=utf-8',
      body: Readable.from(
        memory.browse.exportLines(userId, lines, (l) => externalExportLine(l, prefix)),
        { objectMode: false },
      ),
    };
  },
  forgetUser: async ({ userId }, { users, unregister, answered, tenantId }) => {
    const report = await users.erase(userId, { then: unregister, openAfter: answered });
    if (!report.receipt) return report;
    // The receipt names the user as the tenant knows them, with the tenant: verify-receipt maps it back.
    const receipt = JSON.parse(report.receipt) as { userId: string };
    return { ...report, receipt: JSON.stringify({ ...receipt, userId: new TenantNamespace(tenantId).toExternal(receipt.userId), tenantId }) };
  },
} satisfies Handlers<typeof TURN_ROUTE_DEFS>;

/** Every route with its handler, in documentation order. */
export const ROUTES: readonly Route[] = bindRoutes(ROUTE_DEFS, { ...TURN_HANDLERS, ...KNOWLEDGE_HANDLERS, ...POOL_HANDLERS, ...TIER_HANDLERS, ...AUDIT_HANDLERS, ...BROWSE_HANDLERS, ...OPS_HANDLERS });
