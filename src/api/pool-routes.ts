import { NotFoundError } from '../errors';
import type { Handlers } from './handlers';
import type { POOL_ROUTE_DEFS } from './pool-route-defs';

/** The pool routes bound to `memory.pools` (acting as the key's principal); a null read is 404. */
export const POOL_HANDLERS = {
  searchPools: async (input, { memory }) => ({ results: await memory.pools.search(input) }),
  createPool: (input, { memory }) => memory.pools.createPool(input),
  listPools: async (_input, { memory }) => ({ pools: await memory.pools.listPools() }),
  getPool: async ({ poolId }, { memory }) => (await memory.pools.getPool(poolId)) ?? notFound('pool', poolId),
  deletePool: ({ poolId }, { memory }) => memory.pools.deletePool(poolId),
  grantPoolAccess: (input, { memory }) => memory.pools.grant(input),
  revokePoolAccess: (input, { memory }) => memory.pools.revoke(input),
  setPoolPublicRead: ({ poolId, publicRead }, { memory }) => memory.pools.setPublicRead(poolId, publicRead),
  poolStats: ({ poolId }, { memory }) => memory.pools.stats(poolId),
  addPoolEntry: (input, { memory }) => memory.pools.addEntry(input),
  listPoolEntries: async (input, { memory }) => {
    const entries = await memory.pools.listEntries(input);
    return { entries, nextCursor: entries.length === input.limit ? String(Number(input.cursor ?? 0) + input.limit) : null };
  },
  getPoolEntry: async ({ poolId, entryId }, { memory }) => (await memory.pools.getEntry(poolId, entryId)) ?? notFound('pool entry', entryId),
  updatePoolEntry: (input, { memory }) => memory.pools.updateEntry(input),
  deletePoolEntry: async ({ poolId, entryId }, { memory }) => {
    if (!(await memory.pools.deleteEntry(poolId, entryId))) notFound('pool entry', entryId);
    return { deleted: true };
  },
  poolEntryHistory: async ({ poolId, entryId }, { memory }) => ({ versions: (await memory.pools.history(poolId, entryId)) ?? notFound('pool entry', entryId) }),
  restorePoolEntryVersion: (input, { memory }) => memory.pools.restoreVersion(input),
  adjustPoolEntryImportance: (input, { memory }) => memory.pools.adjustImportance(input),
  takePoolSnapshot: ({ poolId, note }, { memory }) => memory.pools.takeSnapshot(poolId, note),
  listPoolSnapshots: async ({ poolId }, { memory }) => ({ snapshots: await memory.pools.listSnapshots(poolId) }),
  restorePoolSnapshot: ({ poolId, snapshotId }, { memory }) => memory.pools.restoreSnapshot(poolId, snapshotId),
} satisfies Handlers<typeof POOL_ROUTE_DEFS>;

function notFound(what: string, id: string): never {
  throw new NotFoundError(what, id);
}
