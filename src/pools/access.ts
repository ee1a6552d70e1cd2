import type { AccessPrincipal } from '../access';

/**
 * Who may do what with a pool: pure rules over the pool as stored, checked inside the
 * transaction of every pool operation (so a revoke holds for the very next request; grants
 * are never cached). The tenant boundary is not here: a pool of another tenant is never
 * loaded at all.
 *
 * - An admin key (no agent) and the library act for the whole tenant: they read, write and
 *   administer every pool of it.
 * - The owner agent reads, writes and administers (grant, revoke, delete, snapshots).
 * - A write grant implies read; `publicRead` lets every agent of the tenant read.
 * - Anyone else: the pool does not exist for them (404), even by id.
 */
export interface PoolAcl {
  ownerAgent: string | null;
  access: { read: string[]; write: string[]; publicRead: boolean };
}

export type PoolRight = 'read' | 'write' | 'admin';

/** Whether `actor` acts for the whole tenant (no agent: an admin key, the CLI, the library). */
export function actsForTenant(actor: Pick<AccessPrincipal, 'agentId'>): boolean {
  return actor.agentId === null;
}

export function canRead(pool: PoolAcl, actor: Pick<AccessPrincipal, 'agentId'>): boolean {
  const a = actor.agentId;
  return a === null || pool.ownerAgent === a || pool.access.publicRead || pool.access.read.includes(a) || pool.access.write.includes(a);
}

export function canWrite(pool: PoolAcl, actor: Pick<AccessPrincipal, 'agentId'>): boolean {
  const a = actor.agentId;
  return a === null || pool.ownerAgent === a || pool.access.write.includes(a);
}

export function canAdmin(pool: PoolAcl, actor: Pick<AccessPrincipal, 'agentId'>): boolean {
  return actor.agentId === null || pool.ownerAgent === actor.agentId;
}

/** The check for a right: 'hidden' (answer 404), 'forbidden' (403) or 'ok'. */
export function check(pool: PoolAcl, actor: Pick<AccessPrincipal, 'agentId'>, right: PoolRight): 'hidden' | 'forbidden' | 'ok' {
  if (!canRead(pool, actor)) return 'hidden';
  if (right === 'read') return 'ok';
  if (right === 'write') return canWrite(pool, actor) ? 'ok' : 'forbidden';
  return canAdmin(pool, actor) ? 'ok' : 'forbidden';
}
