import { randomUUID } from 'node:crypto';
import type { AccessScope } from '../access';
import type { Queryable } from '../infra/postgres';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';
import type { PromotableEntry, ShortTermCounts, ShortTermEntry, ShortTermStore, ShortTermType } from './contract';

interface Row {
  id: string;
  tenant_id: string | null;
  agent_id: string | null;
  user_id: string;
  channel: string;
  session_id: string;
  memory_key: string;
  memory_type: ShortTermType;
  memory_value: unknown;
  ttl_seconds: number;
  expires_at: Date;
  access_count: number;
  last_accessed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  promoted_fact_id: string | null;
}

const COLUMNS = `id, tenant_id, agent_id, user_id, channel, session_id, memory_key, memory_type, memory_value, ttl_seconds, expires_at,
  access_count, last_accessed_at, created_at, updated_at, promoted_fact_id`;
// Visible to the scope: its tenant and user ($1 user, $2 tenant), and its agent when it has one ($3, null: every agent).
const VISIBLE = `user_id = $1 AND tenant_id IS NOT DISTINCT FROM $2 AND ($3::text IS NULL OR agent_id = $3)`;

// $1 user, $2 tenant, $3 agent, $4 id, $5 channel, $6 session, $7 key, $8 type, $9 value, $10 ttl, $11 now -> the row, created
const WRITE = `
INSERT INTO short_term_entries AS s (id, tenant_id, agent_id, user_id, channel, session_id, memory_key, memory_type, memory_value, ttl_seconds,
  expires_at, created_at, updated_at)
VALUES ($4, $2, $3, $1, $5, $6, $7, $8, $9::jsonb, $10::int, $11::timestamptz + make_interval(secs => $10::int), $11::timestamptz, $11::timestamptz)
ON CONFLICT (user_id, session_id, memory_key, tenant_id, agent_id) DO UPDATE SET
  channel = EXCLUDED.channel, memory_type = EXCLUDED.memory_type, memory_value = EXCLUDED.memory_value, ttl_seconds = EXCLUDED.ttl_seconds,
  expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at,
  access_count = CASE WHEN s.expires_at <= $11::timestamptz THEN 0 ELSE s.access_count END,
  last_accessed_at = CASE WHEN s.expires_at <= $11::timestamptz THEN NULL ELSE s.last_accessed_at END,
  promoted_at = CASE WHEN s.expires_at <= $11::timestamptz THEN NULL ELSE s.promoted_at END,
  promoted_fact_id = CASE WHEN s.expires_at <= $11::timestamptz THEN NULL ELSE s.promoted_fact_id END,
  created_at = CASE WHEN s.expires_at <= $11::timestamptz THEN EXCLUDED.created_at ELSE s.created_at END
RETURNING ${COLUMNS}, (xmax = 0) AS created`;
// VISIBLE params, $4 session, $5 key, $6 now -> the live rows, touched
const TOUCH = `UPDATE short_term_entries SET access_count = access_count + 1, last_accessed_at = $6
WHERE ${VISIBLE} AND session_id = $4 AND memory_key = $5 AND expires_at > $6 RETURNING ${COLUMNS}`;
// VISIBLE params, $4 session (null: all), $5 limit, $6 now -> live rows, newest first
const LIST = `SELECT ${COLUMNS} FROM short_term_entries WHERE ${VISIBLE} AND ($4::text IS NULL OR session_id = $4) AND expires_at > $6
ORDER BY updated_at DESC, memory_key LIMIT $5`;
// VISIBLE params, $4 session, $5 key, $6 ttl (null: keep), $7 now -> the live rows, extended
const REFRESH = `UPDATE short_term_entries SET ttl_seconds = coalesce($6::int, ttl_seconds),
  expires_at = $7::timestamptz + make_interval(secs => coalesce($6::int, ttl_seconds)), updated_at = $7::timestamptz
WHERE ${VISIBLE} AND session_id = $4 AND memory_key = $5 AND expires_at > $7 RETURNING ${COLUMNS}`;
// VISIBLE params, $4 session, $5 key -> deleted count
const DELETE = `DELETE FROM short_term_entries WHERE ${VISIBLE} AND session_id = $4 AND memory_key = $5 RETURNING promoted_fact_id`;
// VISIBLE params, $4 now -> {entries, expired, sessions, promoted}
const COUNTS = `SELECT count(*) FILTER (WHERE expires_at > $4)::int AS entries, count(*) FILTER (WHERE expires_at <= $4)::int AS expired,
  count(DISTINCT session_id) FILTER (WHERE expires_at > $4)::int AS sessions, count(*) FILTER (WHERE promoted_fact_id IS NOT NULL)::int AS promoted
FROM short_term_entries WHERE ${VISIBLE}`;
// $1 min access, $2 limit, $3 users (null: all) -> rows to promote, oldest first
const PROMOTABLE = `SELECT ${COLUMNS} FROM short_term_entries WHERE promoted_at IS NULL AND access_count >= $1 AND ($3::text[] IS NULL OR user_id = ANY($3))
ORDER BY created_at, id LIMIT $2`;
// $1 id, $2 fact id, $3 now
const MARK_PROMOTED = `UPDATE short_term_entries SET promoted_at = $3, promoted_fact_id = $2 WHERE id = $1`;
// $1 now, $2 users (null: all) -> deleted count
const DELETE_EXPIRED = `DELETE FROM short_term_entries WHERE expires_at <= $1 AND ($2::text[] IS NULL OR user_id = ANY($2))`;

export class PgShortTermStore implements ShortTermStore {
  constructor(private readonly pg: Queryable) {}

  async write(scope: AccessScope, sessionId: string, e: { key: string; type: ShortTermType; value: unknown; ttlSeconds: number }, now: Date) {
    const params = [...visible(scope), randomUUID(), scope.channel, sessionId, e.key, e.type, JSON.stringify(e.value), e.ttlSeconds, now];
    const row = (await this.pg.query<Row & { created: boolean }>(WRITE, params)).rows[0]!;
    return { entry: toEntry(row), created: row.created };
  }

  async touch(scope: AccessScope, sessionId: string, key: string, now: Date): Promise<ShortTermEntry[]> {
    return (await this.pg.query<Row>(TOUCH, [...visible(scope), sessionId, key, now])).rows.map(toEntry);
  }

  async list(scope: AccessScope, sessionId: string | null, limit: number, now: Date): Promise<ShortTermEntry[]> {
    return (await this.pg.query<Row>(LIST, [...visible(scope), sessionId, limit, now])).rows.map(toEntry);
  }

  async refresh(scope: AccessScope, sessionId: string, key: string, ttlSeconds: number | null, now: Date): Promise<ShortTermEntry[]> {
    return (await this.pg.query<Row>(REFRESH, [...visible(scope), sessionId, key, ttlSeconds, now])).rows.map(toEntry);
  }

  async delete(scope: AccessScope, sessionId: string, key: string): Promise<{ deleted: number; promotedFactIds: string[] }> {
    const r = await this.pg.query<{ promoted_fact_id: string | null }>(DELETE, [...visible(scope), sessionId, key]);
    return { deleted: r.rowCount ?? 0, promotedFactIds: r.rows.flatMap((x) => x.promoted_fact_id ?? []) };
  }

  async counts(scope: AccessScope, now: Date): Promise<ShortTermCounts> {
    return (await this.pg.query<ShortTermCounts>(COUNTS, [...visible(scope), now])).rows[0]!;
  }

  async promotable(minAccess: number, limit: number, userIds: readonly string[] | null): Promise<PromotableEntry[]> {
    return (await this.pg.query<Row>(PROMOTABLE, [minAccess, limit, userIds])).rows.map((r) => ({ ...toEntry(r), tenantId: r.tenant_id }));
  }

  async markPromoted(id: string, factId: string, now: Date): Promise<void> {
    await this.pg.query(MARK_PROMOTED, [id, factId, now]);
  }

  async deleteExpired(now: Date, userIds: readonly string[] | null): Promise<number> {
    return (await this.pg.query(DELETE_EXPIRED, [now, userIds])).rowCount ?? 0;
  }

  userData(): UserDataPart {
    return new PgUserRows(this.pg, 'short-term', ['short_term_entries'], { agentColumn: 'agent_id' });
  }
}

/** The VISIBLE parameters of a scope: $1 user, $2 tenant, $3 agent. */
function visible(scope: AccessScope): [string, string | null, string | null] {
  return [scope.userId, scope.tenantId, scope.agentId];
}

function toEntry(r: Row): ShortTermEntry {
  return {
    id: r.id,
    userId: r.user_id,
    agentId: r.agent_id,
    channel: r.channel,
    sessionId: r.session_id,
    key: r.memory_key,
    type: r.memory_type,
    value: r.memory_value,
    ttlSeconds: r.ttl_seconds,
    expiresAt: r.expires_at.toISOString(),
    accessCount: r.access_count,
    lastAccessedAt: r.last_accessed_at?.toISOString() ?? null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    promotedFactId: r.promoted_fact_id,
  };
}
