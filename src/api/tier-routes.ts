import { NotFoundError } from '../errors';
import type { Handlers } from './handlers';
import type { TIER_ROUTE_DEFS } from './tier-route-defs';

/* Handlers of tier-route-defs.ts: the short-term tier, settings, learned info, tier statistics. */
export const TIER_HANDLERS = {
  writeShortTerm: (input, { memory }) => memory.shortTerm.write(input),
  getShortTerm: (input, { memory }) => memory.shortTerm.get(input),
  listShortTerm: async (input, { memory }) => ({ entries: await memory.shortTerm.list(input) }),
  refreshShortTerm: (input, { memory }) => memory.shortTerm.refresh(input),
  deleteShortTerm: (input, { memory }) => memory.shortTerm.delete(input),
  getSettings: ({ userId }, { memory }) => memory.getSettings(userId),
  updateSettings: (input, { memory }) => memory.updateSettings(input),
  listLearnedInfo: async ({ userId }, { memory }) => ({ connections: await memory.getLearnedInfo(userId) }),
  getLearnedInfo: async ({ userId, connectionId }, { memory }) => {
    const [doc] = await memory.getLearnedInfo(userId, [connectionId]);
    if (!doc) throw new NotFoundError('learned info', connectionId);
    return doc;
  },
  writeLearnedInfo: (input, { memory }) => memory.writeLearnedInfo(input),
  deleteLearnedInfo: ({ userId, connectionId }, { memory }) => memory.deleteLearnedInfo(userId, connectionId),
  tierStats: ({ userId }, { memory }) => memory.tierStats(userId),
} satisfies Handlers<typeof TIER_ROUTE_DEFS>;
