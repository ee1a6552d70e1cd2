import { createHash } from 'node:crypto';
import { GLOBAL_CHANNEL } from '../schemas';

/**
 * What one request may read and write: the one value every store operation takes instead of
 * loose user ids and channel lists. It is built once at the edge (the facade for library
 * callers, the API key for HTTP and MCP, the flags for the CLI) and never rebuilt from ids
 * further down. Only this module builds `scope_key` tokens, namespaced ids and turn ids.
 *
 * `agentId` is the agent an API key is bound to (null: the whole tenant acts); it is where
 * agent-level rules (shared pools, who reads and who writes) attach.
 */
export interface AccessScope {
  /** The tenant the request acts for; null for the library and the CLI without --tenant. */
  readonly tenantId: string | null;
  /** The agent acting, when the key is bound to one. */
  readonly agentId: string | null;
  /** The internal user id whose memory is read or written (tenant-namespaced at the edge). */
  readonly userId: string;
  /** The channel writes go to. */
  readonly channel: string;
  /** The channels reads cover: the requested ones plus `_global`, deduplicated, in order. */
  readonly channels: readonly string[];
  /**
   * The tool connections active for reads (seed 000 §3.D): items without a connection plus
   * those of these connections are visible. Null: the caller named none, and connection
   * scoping is off (every item of the user and channels, as before connections existed).
   */
  readonly connections: readonly string[] | null;
}

export interface ScopeOptions {
  /** The write channel; defaults to the first read channel, else `_global`. */
  channel?: string;
  /** The channels to read (`_global` is always added); defaults to the write channel. */
  channels?: readonly string[];
  tenantId?: string | null;
  agentId?: string | null;
  /** The active connections (see AccessScope.connections); null or absent: no connection scoping. */
  connections?: readonly string[] | null;
}

/** The scope of one user's memory. */
export function userScope(userId: string, opts: ScopeOptions = {}): AccessScope {
  const channel = opts.channel ?? opts.channels?.[0] ?? GLOBAL_CHANNEL;
  return Object.freeze({
    tenantId: opts.tenantId ?? null,
    agentId: opts.agentId ?? null,
    userId,
    channel,
    channels: Object.freeze(withGlobal(opts.channels ?? [channel])),
    connections: opts.connections ? Object.freeze([...new Set(opts.connections)]) : null,
  });
}

/** The same principal and user, reading or writing other channels. */
export function withChannels(scope: AccessScope, channels: readonly string[], channel = channels[0] ?? scope.channel): AccessScope {
  return userScope(scope.userId, { channel, channels, tenantId: scope.tenantId, agentId: scope.agentId, connections: scope.connections });
}

/** The channels a read covers: the given ones plus `_global`, deduplicated. */
export function withGlobal(channels: readonly string[]): string[] {
  return [...new Set([...channels, GLOBAL_CHANNEL])];
}

/**
 * The token a node's (user, channel) is indexed under in the scoped full-text indexes.
 * Letters and digits only, starting with "k" and ending with a digit, so the English
 * analyzer keeps it as one unstemmed token.
 */
export function scopeKey(userId: string, channel: string): string {
  return `k${createHash('sha256').update(`${userId}\u0000${channel}`).digest('hex').slice(0, 24)}0`;
}

/**
 * The token a memory pool's entries are indexed under in the pool full-text index
 * (`pool_key`, cypher/009): one per (tenant, pool), built like `scopeKey`, so a search
 * requires the pools the agent may read inside Lucene. `tenantId` null is the library's own.
 */
export function poolKey(tenantId: string | null, poolId: string): string {
  return `p${createHash('sha256')
    .update(`pool\u0000${tenantId ?? ''}\u0000${poolId}`)
    .digest('hex')
    .slice(0, 24)}0`;
}

/** The tokens a read of `scope` may match: one per readable channel. */
export function readKeys(scope: AccessScope): string[] {
  return scope.channels.map((c) => scopeKey(scope.userId, c));
}

/** The token a node written under `scope` carries: its user and write channel. */
export function writeKey(scope: AccessScope): string {
  return scopeKey(scope.userId, scope.channel);
}

/**
 * Who is acting, as the edge knows it: the API key's tenant and key, the agent the key is
 * bound to (null for admin keys, which act for the whole tenant). The library and the CLI act as
 * `LOCAL_PRINCIPAL`. The facade puts the tenant and agent into every scope it builds.
 */
export interface AccessPrincipal {
  readonly tenantId: string | null;
  readonly keyId: string | null;
  readonly agentId: string | null;
}

/** The library caller: no tenant, no key, no agent. */
export const LOCAL_PRINCIPAL: AccessPrincipal = Object.freeze({ tenantId: null, keyId: null, agentId: null });

/**
 * The principal of a verified API key (with the agent an `agent` key is bound to), or of a
 * tenant named on the command line (no key). The agent comes from the key, never from input.
 */
export function keyPrincipal(tenantId: string | null, keyId: string | null = null, agentId: string | null = null): AccessPrincipal {
  return tenantId === null && keyId === null && agentId === null ? LOCAL_PRINCIPAL : Object.freeze({ tenantId, keyId, agentId });
}

/** The scope of `userId`'s memory for `principal`, reading `opts.channels` and writing `opts.channel`. */
export function principalScope(principal: AccessPrincipal, userId: string, opts: Omit<ScopeOptions, 'tenantId' | 'agentId'> = {}): AccessScope {
  return userScope(userId, { ...opts, tenantId: principal.tenantId, agentId: principal.agentId });
}

/** Turn ids are derived, so (conversation, index) is unique through the id constraint. */
export function turnId(conversationId: string, index: number): string {
  return `${conversationId}:${index}`;
}

/** The conversation and index of a turn id; null when `id` is not one. */
export function parseTurnId(id: string): { conversationId: string; index: number } | null {
  const at = id.lastIndexOf(':');
  if (at <= 0) return null;
  const index = Number(id.slice(at + 1));
  return Number.isInteger(index) && index >= 0 ? { conversationId: id.slice(0, at), index } : null;
}

/**
 * What a delete names, in the shape every store's statements take it: one of the user's
 * conversations, and one turn of it (`index`, `turnId`) or all of it (both null).
 */
export type DeletionParams = {
  userId: string;
  conversationId: string;
  index: number | null;
  turnId: string | null;
};

/** The statements' parameters of a delete of a conversation (`index` undefined) or one of its turns. */
export function deletionParams(scope: AccessScope, conversationId: string, index?: number): DeletionParams {
  return { userId: scope.userId, conversationId, index: index ?? null, turnId: index === undefined ? null : turnId(conversationId, index) };
}
