import { ValidationError } from '../errors';

/** A tenant id as TenantIdSchema (src/tenancy/contract.ts) accepts it. */
const TENANT_PREFIX = /^[a-z0-9][a-z0-9-]{1,31}$/;

/**
 * The service's own user: warm-up's rehearsals write and erase a made-up memory of it
 * (src/api/warm-up.ts). No tenant can hold it (a tenant's user ids are namespaced, with a
 * dot), it is as long as a tenant's user ids (Neo4j plans per size class of a string), and
 * the worker's consolidation leaves it alone (what it learnt would outlive the erasure).
 */
export const INTERNAL_USER = 'mnemograph-warm-up';

/** Largest internal user id (IdSchema's limit). */
const MAX_ID = 128;

/**
 * Maps a tenant's ids to internal ids and back. User ids and conversation ids are chosen
 * by callers, so both are namespaced as "<tenant>.<id>"; every store query is scoped by
 * the internal user id, so nothing a tenant sends can name another tenant's data.
 * Turn ids ("<conversation>:<index>") inherit the prefix from their conversation.
 */
export class TenantNamespace {
  readonly prefix: string;
  constructor(readonly tenantId: string) {
    this.prefix = `${tenantId}.`;
  }

  toInternal(id: string, field: string): string {
    const internal = this.prefix + id;
    if (internal.length > MAX_ID) {
      throw new ValidationError(`invalid request: ${field} must be at most ${MAX_ID - this.prefix.length} characters for tenant ${this.tenantId}`, {
        issues: [{ path: field, message: 'too long' }],
      });
    }
    return internal;
  }

  /** Whether an internal id is in this tenant's namespace. */
  owns(id: string): boolean {
    return id.startsWith(this.prefix);
  }

  toExternal(id: string): string {
    return this.owns(id) ? id.slice(this.prefix.length) : id;
  }

  /** Rewrites the namespaced fields (see NAMESPACED_KEYS) of a validated input, deeply. */
  mapIn<T>(value: T): T {
    return walk(value, (key, v) => (NAMESPACED_KEYS.has(key) && typeof v === 'string' ? this.toInternal(v, key) : v)) as T;
  }

  /** Rewrites namespaced fields of an output back to the tenant's ids, deeply. */
  mapOut<T>(value: T): T {
    return walk(value, (key, v) => ((NAMESPACED_KEYS.has(key) || key === 'id') && typeof v === 'string' ? this.toExternal(v) : v)) as T;
  }

  /**
   * The tenant whose namespace holds an internal id ("<tenant>.<id>"), or null when it has
   * no tenant prefix. Only for code that acts for no principal (the worker's audit rows);
   * the edge takes the tenant from the API key.
   */
  static tenantOf(internalId: string): string | null {
    const dot = internalId.indexOf('.');
    const tenant = dot > 0 ? internalId.slice(0, dot) : '';
    return TENANT_PREFIX.test(tenant) ? tenant : null;
  }

  /** Every (external) user id mentioned in an input, for the ownership registry. */
  static userIds(input: unknown): string[] {
    const found = new Set<string>();
    walk(input, (key, v) => {
      if (key === 'userId' && typeof v === 'string') found.add(v);
      return v;
    });
    return [...found];
  }
}

/**
 * Fields that carry caller-chosen ids which must be namespaced. Keys ending in these names
 * inside arrays (`turnIds`) are handled element by element.
 */
export const NAMESPACED_KEYS = new Set(['userId', 'conversationId', 'fromConversationId', 'turnId', 'sourceTurnId', 'turnIds', 'sourceTurnIds', 'poolId', 'poolIds']);

/** Applies `fn(key, value)` to every keyed primitive (and array-of-primitive element) of a JSON-like value. */
function walk(value: unknown, fn: (key: string, v: unknown) => unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => walk(v, fn, key));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = walk(v, fn, k);
    return out;
  }
  return key ? fn(key, value) : value;
}
