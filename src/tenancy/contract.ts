import { z } from 'zod';
import { KEY_ROLES, type KeyRole } from '../access/roles';

export type { KeyRole };

/**
 * A tenant id: lowercase letters, digits and '-', no '.', so "<tenant>.<user>" splits
 * unambiguously at the first dot.
 */
export const TenantIdSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{1,31}$/, 'must be 2-32 characters of lowercase letters, digits and - (starting with a letter or digit)');

/** An agent of a tenant, as an API key names it: 1-64 of letters, digits, '_', '-', '.'. */
export const AgentIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 letters, digits, _, - or . (starting with a letter or digit)');

/** A key's role (src/access/roles.ts). */
export const KeyRoleSchema = z.enum(KEY_ROLES);

export interface Tenant {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyInfo {
  id: string;
  tenantId: string;
  name: string;
  role: KeyRole;
  /** The agent the key acts as (role `agent` only). */
  agentId: string | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** What a verified key grants: the tenant whose memory it may touch, its role and the agent it acts as. */
export interface Principal {
  tenantId: string;
  keyId: string;
  role: KeyRole;
  agentId: string | null;
}

export interface KeyOptions {
  /** A note to recognise the key by. */
  name?: string;
  /** Default `admin`; `agent` requires `agentId`, which only `agent` takes. */
  role?: KeyRole;
  agentId?: string | null;
}

/**
 * Tenants, API keys and the user ids each tenant owns, in Postgres. Only a SHA-256 hash
 * of a key is stored; the key itself is shown once, by `createKey`.
 */
export interface TenantStore {
  /** Creates the tenant if missing (idempotent); returns it. */
  ensureTenant(id: string, name?: string): Promise<Tenant>;
  /** Issues a key for a tenant (created if missing). The returned `key` is not stored anywhere. */
  createKey(tenantId: string, opts?: KeyOptions): Promise<{ key: string; info: ApiKeyInfo }>;
  /** Revokes a key by id; false when no such live key exists. Takes effect within the verification cache TTL. */
  revokeKey(keyId: string): Promise<boolean>;
  listKeys(tenantId?: string): Promise<ApiKeyInfo[]>;
  /** The principal of a live key, or null for an unknown, malformed or revoked key. Never throws for a bad key. */
  verify(key: string): Promise<Principal | null>;
  /** Records that a tenant owns these (external) user ids. Idempotent. `epochs`: the users' erasure epochs (UserWriteFence), one per id. */
  registerUsers(tenantId: string, userIds: string[], epochs?: readonly number[]): Promise<void>;
  /** Whether the tenant owns the (external) user id (`epoch`: its erasure epoch, for the cache). */
  ownsUser(tenantId: string, userId: string, epoch?: number): Promise<boolean>;
  /** Drops the ownership record (after the user's memory was erased). */
  unregisterUser(tenantId: string, userId: string): Promise<void>;
  listUsers(tenantId: string, limit: number): Promise<string[]>;
}
