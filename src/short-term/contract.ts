import type { AccessScope } from '../access';
import type { UserDataPart } from '../tenancy/user-data';
import type { ShortTermEntry, ShortTermType } from './schema';

export * from './schema';

/** The time source; injected so expiry and promotion are tested on a fake clock. */
export interface Clock {
  now(): Date;
}

/** Counts of one scope's short-term entries at a moment. */
export interface ShortTermCounts {
  entries: number;
  expired: number;
  sessions: number;
  promoted: number;
}

/** An entry consolidation may promote, with what provenance needs. */
export type PromotableEntry = ShortTermEntry & { tenantId: string | null };

/**
 * The short-term tier (seed 001 AgentShortTermMemory) in PostgreSQL (`short_term_entries`):
 * durable, unlike working memory in Redis. Every operation takes the moment it runs at
 * (`now`) from the caller's clock; nothing reads the database clock, so expiry is testable.
 *
 * Visibility: an entry belongs to the scope's tenant, user and agent that wrote it (null:
 * an admin key). A scope with an agent sees only that agent's entries; a scope without one
 * (an admin key, the library) sees every entry of the tenant's user. Expired entries are
 * invisible to every read, until consolidation promotes or deletes them.
 */
export interface ShortTermStore {
  /**
   * Creates or replaces the scope's entry (session, key): value, type, TTL, and expiry
   * `now + ttl`. Replacing a live entry keeps its access count; replacing an expired one
   * starts afresh.
   */
  write(scope: AccessScope, sessionId: string, e: { key: string; type: ShortTermType; value: unknown; ttlSeconds: number }, now: Date): Promise<{ entry: ShortTermEntry; created: boolean }>;
  /** The live entries at (session, key) visible to the scope, each touched (access count + 1, last access `now`). */
  touch(scope: AccessScope, sessionId: string, key: string, now: Date): Promise<ShortTermEntry[]>;
  /** Live entries visible to the scope (of one session, or all), newest first, untouched. */
  list(scope: AccessScope, sessionId: string | null, limit: number, now: Date): Promise<ShortTermEntry[]>;
  /** Extends live entries at (session, key): expiry `now + ttl` (the given TTL becomes theirs). */
  refresh(scope: AccessScope, sessionId: string, key: string, ttlSeconds: number | null, now: Date): Promise<ShortTermEntry[]>;
  /** Deletes the visible entries at (session, key), live or expired; how many, and the facts they had been promoted to. */
  delete(scope: AccessScope, sessionId: string, key: string): Promise<{ deleted: number; promotedFactIds: string[] }>;
  /** Counts of the entries visible to the scope. */
  counts(scope: AccessScope, now: Date): Promise<ShortTermCounts>;
  /** Entries (any user, or `userIds`) read at least `minAccess` times and not promoted yet, oldest first. */
  promotable(minAccess: number, limit: number, userIds: readonly string[] | null): Promise<PromotableEntry[]>;
  /** Records the promotion of an entry to a long-term fact. */
  markPromoted(id: string, factId: string, now: Date): Promise<void>;
  /** Deletes entries expired at `now` (any user, or `userIds`); how many. */
  deleteExpired(now: Date, userIds: readonly string[] | null): Promise<number>;
  userData(): UserDataPart;
}
