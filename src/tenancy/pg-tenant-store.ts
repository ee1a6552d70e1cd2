import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../infra/postgres';
import { NotFoundError, StoreUnavailableError, ValidationError } from '../errors';
import { parseInput } from '../schemas';
import { AgentIdSchema, KeyRoleSchema, TenantIdSchema, type ApiKeyInfo, type KeyOptions, type KeyRole, type Principal, type Tenant, type TenantStore } from './contract';

// $1 id, $2 name -> {id, name, created_at}
const UPSERT_TENANT = `INSERT INTO tenants (id, name) VALUES ($1, $2)
  ON CONFLICT (id) DO UPDATE SET name = CASE WHEN $2 = '' THEN tenants.name ELSE EXCLUDED.name END
  RETURNING id, name, created_at`;
// $1 id, $2 tenant, $3 hash, $4 name, $5 role, $6 agent -> key row
const INSERT_KEY = `INSERT INTO api_keys (id, tenant_id, key_hash, name, role, agent_id) VALUES ($1, $2, $3, $4, $5, $6)
  RETURNING id, tenant_id, name, role, agent_id, created_at, revoked_at, last_used_at`;
// $1 key id -> {id} of the key just revoked (none when unknown or already revoked)
const REVOKE_KEY = 'UPDATE api_keys SET revoked_at = NOW() WHERE id = $1 AND revoked_at IS NULL RETURNING id';
// $1 tenant or null -> key rows, newest first
const LIST_KEYS = `SELECT id, tenant_id, name, role, agent_id, created_at, revoked_at, last_used_at FROM api_keys
  WHERE $1::text IS NULL OR tenant_id = $1 ORDER BY created_at DESC`;
// $1 key id -> {tenant_id, key_hash, role, agent_id} of a live key
const FIND_LIVE_KEY = 'SELECT tenant_id, key_hash, role, agent_id FROM api_keys WHERE id = $1 AND revoked_at IS NULL';
// $1 key id -> nothing (coarse: at most once per cache period per process)
const TOUCH_KEY = 'UPDATE api_keys SET last_used_at = NOW() WHERE id = $1';
// $1 tenant, $2 user ids -> nothing
const REGISTER_USERS = 'INSERT INTO tenant_users (tenant_id, user_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING';
// $1 tenant, $2 user -> {found}
const OWNS_USER = 'SELECT EXISTS (SELECT 1 FROM tenant_users WHERE tenant_id = $1 AND user_id = $2) AS found';
// $1 tenant, $2 user -> nothing
const UNREGISTER_USER = 'DELETE FROM tenant_users WHERE tenant_id = $1 AND user_id = $2';
// $1 tenant, $2 limit -> {user_id}
const LIST_USERS = 'SELECT user_id FROM tenant_users WHERE tenant_id = $1 ORDER BY user_id LIMIT $2';
// $1 tenant, $2 after (user id or null), $3 limit -> {user_id}: one page, by user id
const LIST_USERS_AFTER = 'SELECT user_id FROM tenant_users WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id > $2) ORDER BY user_id LIMIT $3';

/** Key format: "mg_<key id>_<secret>". The id lets verification find one row; the secret is hashed. */
const KEY_FORMAT = /^mg_([a-z0-9]{12})_([A-Za-z0-9_-]{32,64})$/;

interface KeyRow {
  id: string;
  tenant_id: string;
  name: string;
  role: KeyRole;
  agent_id: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

/**
 * TenantStore on Postgres. Verified keys and known users are cached in process for
 * `cacheSeconds` (revocation takes effect within that delay; 0 disables the key cache).
 *
 * While Postgres is unreachable, a key this process last saw live less than
 * `outageGraceSeconds` ago keeps verifying from memory, so reads served by Neo4j and Redis
 * keep working through a Postgres restart. The trade-off: a key revoked shortly before the
 * outage (and not verified here since) works until Postgres answers again or the grace
 * ends; revoking needs Postgres, so no key can be revoked during the outage anyway. A key
 * never seen, or last seen revoked or unknown, is refused with 503 (unknown) or 401.
 */
export class PgTenantStore implements TenantStore {
  private readonly keyCache = new Map<string, { principal: Principal | null; until: number; verifiedAt: number }>();
  /** Per "<tenant>\0<user>": the erasure epoch (UserWriteFence) at which this process saw the user registered. */
  private readonly userCache = new Map<string, number>();

  constructor(
    private readonly db: Queryable,
    private readonly cacheSeconds: number,
    private readonly outageGraceSeconds = 300,
  ) {}

  async ensureTenant(id: string, name = ''): Promise<Tenant> {
    const tenantId = parseInput(TenantIdSchema, id, 'tenant id');
    const row = (await this.db.query<{ id: string; name: string; created_at: Date }>(UPSERT_TENANT, [tenantId, name])).rows[0]!;
    return { id: row.id, name: row.name, createdAt: row.created_at.toISOString() };
  }

  async createKey(tenantId: string, opts: KeyOptions = {}): Promise<{ key: string; info: ApiKeyInfo }> {
    const role = parseInput(KeyRoleSchema, opts.role ?? (opts.agentId ? 'agent' : 'admin'), 'key role');
    const agentId = opts.agentId == null ? null : parseInput(AgentIdSchema, opts.agentId, 'agent id');
    if ((role === 'agent') !== (agentId !== null)) throw new ValidationError(role === 'agent' ? 'an agent key needs the agent it acts as (--agent)' : `a ${role} key is not bound to an agent`);
    await this.ensureTenant(tenantId);
    const id = randomBytes(6).toString('hex');
    const key = `mg_${id}_${randomBytes(32).toString('base64url')}`;
    const row = (await this.db.query<KeyRow>(INSERT_KEY, [id, tenantId, sha256(key), opts.name ?? '', role, agentId])).rows[0]!;
    return { key, info: toInfo(row) };
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const revoked = (await this.db.query(REVOKE_KEY, [keyId])).rowCount === 1;
    for (const [k, v] of this.keyCache) if (v.principal?.keyId === keyId) this.keyCache.delete(k);
    return revoked;
  }

  async listKeys(tenantId?: string): Promise<ApiKeyInfo[]> {
    return (await this.db.query<KeyRow>(LIST_KEYS, [tenantId ?? null])).rows.map(toInfo);
  }

  async verify(key: string): Promise<Principal | null> {
    const m = KEY_FORMAT.exec(key);
    if (!m) return null;
    const hash = sha256(key);
    const cached = this.keyCache.get(hash);
    if (cached && cached.until > Date.now()) return cached.principal;
    let row: { tenant_id: string; key_hash: string; role: KeyRole; agent_id: string | null } | undefined;
    try {
      row = (await this.db.query<{ tenant_id: string; key_hash: string; role: KeyRole; agent_id: string | null }>(FIND_LIVE_KEY, [m[1]])).rows[0];
    } catch (err) {
      // Postgres is away: a key seen live recently enough keeps working (see the class comment).
      const graceful = cached?.principal && err instanceof StoreUnavailableError && Date.now() - cached.verifiedAt < this.outageGraceSeconds * 1000;
      if (graceful) return cached.principal;
      throw err;
    }
    // Compare hashes in constant time so response timing says nothing about the secret.
    const ok = row !== undefined && timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash));
    const principal: Principal | null = ok && row ? { tenantId: row.tenant_id, keyId: m[1]!, role: row.role, agentId: row.agent_id } : null;
    if (this.cacheSeconds > 0 || this.outageGraceSeconds > 0) {
      if (this.keyCache.size > 10_000) this.keyCache.clear();
      this.keyCache.set(hash, { principal, until: Date.now() + this.cacheSeconds * 1000, verifiedAt: Date.now() });
    }
    // Bookkeeping, not authorisation: a failure here must not fail the request.
    if (principal) this.db.query(TOUCH_KEY, [principal.keyId]).catch(() => undefined);
    return principal;
  }

  /**
   * `epochs` (one per user, from UserWriteFence.enter) key the in-process cache: an erasure
   * anywhere moves the user's epoch, so a registration this process cached before it is
   * written again, never skipped (which would leave the user's new memory unregistered).
   */
  async registerUsers(tenantId: string, userIds: string[], epochs: readonly number[] = []): Promise<void> {
    const epochOf = (u: string) => epochs[userIds.indexOf(u)] ?? 0;
    const fresh = userIds.filter((u) => this.userCache.get(`${tenantId}\u0000${u}`) !== epochOf(u));
    if (fresh.length === 0) return;
    await this.db.query(REGISTER_USERS, [tenantId, fresh]);
    if (this.userCache.size > 100_000) this.userCache.clear();
    for (const u of fresh) this.userCache.set(`${tenantId}\u0000${u}`, epochOf(u));
  }

  async ownsUser(tenantId: string, userId: string, epoch = 0): Promise<boolean> {
    if (this.userCache.get(`${tenantId}\u0000${userId}`) === epoch) return true;
    const found = (await this.db.query<{ found: boolean }>(OWNS_USER, [tenantId, userId])).rows[0]!.found;
    if (found) this.userCache.set(`${tenantId}\u0000${userId}`, epoch);
    return found;
  }

  async unregisterUser(tenantId: string, userId: string): Promise<void> {
    this.userCache.delete(`${tenantId}\u0000${userId}`);
    await this.db.query(UNREGISTER_USER, [tenantId, userId]);
  }

  async listUsers(tenantId: string, limit: number): Promise<string[]> {
    return (await this.db.query<{ user_id: string }>(LIST_USERS, [tenantId, limit])).rows.map((r) => r.user_id);
  }

  /** One page of the tenant's (external) user ids in id order, after `after` (the last id of the previous page). */
  async listUsersAfter(tenantId: string, after: string | null, limit: number): Promise<string[]> {
    return (await this.db.query<{ user_id: string }>(LIST_USERS_AFTER, [tenantId, after, limit])).rows.map((r) => r.user_id);
  }

  /** Throws NotFoundError unless the tenant owns the user. */
  async requireUser(tenantId: string, userId: string, epoch = 0): Promise<void> {
    if (!(await this.ownsUser(tenantId, userId, epoch))) throw new NotFoundError('user', userId);
  }
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function toInfo(r: KeyRow): ApiKeyInfo {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    role: r.role,
    agentId: r.agent_id,
    createdAt: r.created_at.toISOString(),
    revokedAt: r.revoked_at?.toISOString() ?? null,
    lastUsedAt: r.last_used_at?.toISOString() ?? null,
  };
}
