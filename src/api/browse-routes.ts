import { TenantNamespace } from '../access';
import type { BROWSE_ROUTE_DEFS } from './browse-route-defs';
import type { Handlers } from './handlers';

/* The handlers of browse-route-defs.ts: each binds its definition to the facade's browse part (src/browse). */

export const BROWSE_HANDLERS = {
  whoami: async (_input, { principal }) => ({ tenantId: principal.tenantId, keyId: principal.keyId, role: principal.role, agentId: principal.agentId }),
  listUsers: async ({ cursor, limit }, { principal, tenants, users }) => {
    const ids = await tenants.listUsersAfter(principal.tenantId, cursor ?? null, limit);
    // Counted under the internal ids; the response maps them back to the tenant's.
    const ns = new TenantNamespace(principal.tenantId);
    const counts = await users.nodeCounts(ids.map((id) => ns.toInternal(id, 'userId')));
    return {
      users: ids.map((id) => ({ userId: id, counts: counts.get(ns.toInternal(id, 'userId')) ?? {} })),
      nextCursor: ids.length === limit ? (ids.at(-1) ?? null) : null,
    };
  },
  listConversations: (input, { memory }) => memory.browse.listConversations(input),
  listTurns: (input, { memory }) => memory.browse.listTurns(input),
  deleteConversation: (input, { memory }) => memory.browse.deleteConversation(input),
  deleteTurn: (input, { memory }) => memory.browse.deleteTurn(input),
  listEntities: (input, { memory }) => memory.browse.listEntities(input),
  listFacts: (input, { memory }) => memory.browse.listFacts(input),
  listStrategies: (input, { memory }) => memory.browse.listStrategies(input),
  restoreFact: (input, { memory }) => memory.browse.restoreFact(input),
  mergeEntities: (input, { memory }) => memory.browse.mergeEntities(input),
} satisfies Handlers<typeof BROWSE_ROUTE_DEFS>;
