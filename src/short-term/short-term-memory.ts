import type { AuditLogger } from '../audit';
import { NotFoundError } from '../errors';
import { LOCAL_PRINCIPAL, principalScope, type AccessPrincipal, type AccessScope } from '../access';
import { parseInput } from '../schemas';
import {
  ShortTermListSchema,
  ShortTermRefreshSchema,
  ShortTermRefSchema,
  ShortTermWriteSchema,
  type Clock,
  type ShortTermEntry,
  type ShortTermList,
  type ShortTermRef,
  type ShortTermRefresh,
  type ShortTermStore,
  type ShortTermWrite,
} from './contract';

export interface ShortTermDeps {
  store: ShortTermStore;
  audit: AuditLogger;
  clock: Clock;
  /** Deletes the long-term facts deleted entries had been promoted to (the semantic store's deleteFacts). */
  forgetFacts?: (scope: AccessScope, factIds: readonly string[]) => Promise<number>;
}

/**
 * The short-term tier through the facade: validates, builds the scope from the principal
 * (an agent key's entries are its agent's; an admin key sees the tenant's), reads the time
 * from the injected clock, and audits writes. A read of an expired entry, or of another
 * agent's, is not found.
 */
export class ShortTermMemory {
  constructor(
    private readonly d: ShortTermDeps,
    private readonly principal: AccessPrincipal = LOCAL_PRINCIPAL,
  ) {}

  private scope(userId: string, channel?: string): AccessScope {
    return principalScope(this.principal, userId, channel ? { channel } : {});
  }

  /** Creates or replaces an entry (TTL default 1 h); resolves with it and whether it is new. */
  async write(input: ShortTermWrite): Promise<{ entry: ShortTermEntry; created: boolean }> {
    const w = parseInput(ShortTermWriteSchema, input, 'short-term entry');
    const t0 = performance.now();
    const scope = this.scope(w.userId, w.channel);
    const result = await this.d.store.write(scope, w.sessionId, { key: w.key, type: w.type, value: w.value, ttlSeconds: w.ttlSeconds }, this.d.clock.now());
    this.audit('short_term_write', scope, w.sessionId, [result.entry.id], t0, { key: w.key, type: w.type, ttlSeconds: w.ttlSeconds, created: result.created });
    return result;
  }

  /** Reads a live entry, counting the access (seed 001 touch_access!); NotFoundError when expired, missing or another agent's. */
  async get(input: ShortTermRef): Promise<ShortTermEntry> {
    const r = parseInput(ShortTermRefSchema, input, 'short-term entry');
    const found = await this.d.store.touch(this.scope(r.userId), r.sessionId, r.key, this.d.clock.now());
    return pick(found) ?? Promise.reject(new NotFoundError('short-term entry', `${r.sessionId}/${r.key}`));
  }

  /** Live entries (of one session, or all visible), newest first; does not count as access. */
  async list(input: ShortTermList): Promise<ShortTermEntry[]> {
    const q = parseInput(ShortTermListSchema, input, 'short-term list');
    return this.d.store.list(this.scope(q.userId), q.sessionId ?? null, q.limit, this.d.clock.now());
  }

  /** Extends a live entry to now + TTL (its own, or the given one, which becomes its TTL). */
  async refresh(input: ShortTermRefresh): Promise<ShortTermEntry> {
    const r = parseInput(ShortTermRefreshSchema, input, 'short-term refresh');
    const t0 = performance.now();
    const scope = this.scope(r.userId);
    const found = pick(await this.d.store.refresh(scope, r.sessionId, r.key, r.ttlSeconds ?? null, this.d.clock.now()));
    if (!found) throw new NotFoundError('short-term entry', `${r.sessionId}/${r.key}`);
    this.audit('short_term_refresh', scope, r.sessionId, [found.id], t0, { key: r.key, expiresAt: found.expiresAt });
    return found;
  }

  /** Deletes an entry (live or expired); NotFoundError when the scope sees none. */
  async delete(input: ShortTermRef): Promise<{ deleted: number }> {
    const r = parseInput(ShortTermRefSchema, input, 'short-term entry');
    const t0 = performance.now();
    const scope = this.scope(r.userId);
    const { deleted, promotedFactIds } = await this.d.store.delete(scope, r.sessionId, r.key);
    if (deleted === 0) throw new NotFoundError('short-term entry', `${r.sessionId}/${r.key}`);
    // A promoted entry's fact was learned only from it: it goes too.
    const factsDeleted = promotedFactIds.length > 0 && this.d.forgetFacts ? await this.d.forgetFacts(scope, promotedFactIds) : 0;
    this.audit('short_term_delete', scope, r.sessionId, promotedFactIds, t0, { key: r.key, deleted, factsDeleted });
    return { deleted };
  }

  private audit(operation: string, scope: AccessScope, sessionId: string, ids: string[], t0: number, payload: Record<string, unknown>): void {
    this.d.audit.logWrite({
      operation,
      memoryType: 'short_term',
      userId: scope.userId,
      channel: scope.channel,
      sessionId,
      affectedIds: ids,
      latencyMs: performance.now() - t0,
      payload,
      metadata: { agentId: scope.agentId, tenantId: scope.tenantId },
    });
  }
}

/** The entry an admin key means when several agents hold the key: its own (no agent) first, else the newest. */
function pick(entries: ShortTermEntry[]): ShortTermEntry | undefined {
  return [...entries].sort((a, b) => Number(a.agentId !== null) - Number(b.agentId !== null) || b.updatedAt.localeCompare(a.updatedAt))[0];
}
