import type { Queryable } from '../infra/postgres';
import { currentActor } from './actor';
import type { AuditTrail, ErasureReceipt, ErasureRecordRow, MemoryType } from './contract';
import { erasureReceipt } from './erasure-receipt';
import { actorColumns, actorValues } from './pg-audit-logger';

/**
 * The columns forget-user blanks on the erased user's rows: who the row is about and what
 * it says of them (ids the caller chose, item ids, query text, error text, metadata with
 * payloads). What stays says what happened, not to whom: id, timestamp, operation, memory
 * type, channels, counts, latency, success, promotion numbers, the settings snapshot, and
 * the actor (the operator's key, agent, surface, request, job), plus the chain's hashes.
 */
export const PERSONAL_AUDIT_COLUMNS = ['user_id', 'session_id', 'conversation_id', 'affected_ids', 'query_text', 'error_message', 'metadata'] as const;

// $1 first day (UTC date), $2 days -> {created}: daily partitions created (sql/001 ensure_audit_partitions)
const ENSURE = 'SELECT ensure_audit_partitions($1::date, $2::int) AS created';
// $1 retention days, $2 actor (column -> value) -> one row per dropped partition name; writes the chained
// audit_retention record when it dropped any (sql/011 drop_old_audit_partitions)
const DROP = 'SELECT drop_old_audit_partitions($1::int, $2::jsonb) AS dropped';
// $1 user, $2 redaction time -> {n}: the user's rows (not earlier erasure records) lose their personal columns
const REDACT_USER = `UPDATE memory_audit_log
  SET user_id = NULL, session_id = NULL, conversation_id = NULL, affected_ids = NULL, query_text = NULL, error_message = NULL, metadata = '{}', redacted_at = $2
  WHERE user_id = $1 AND operation <> 'forget_user'`;
// $1 user, $2 metadata, $3..$9 actor (tenant, key, agent, surface, request, job, run) -> the row as chained: the one row that outlives an erasure
const INSERT_ERASURE = `INSERT INTO memory_audit_log (operation, memory_type, user_id, affected_ids, success, metadata,
    tenant_id, key_id, agent_id, surface, request_id, job_name, job_run_id)
  VALUES ('forget_user', 'system', $1, '{}', TRUE, $2, $3, $4, $5, $6, $7, $8, $9)
  RETURNING id, timestamp, operation, chain_seq, content_hash, row_hash, user_id, metadata`;

// $1 operation, $2 memory type, $3 metadata, $4..$10 actor -> nothing: the record of a deletion a job made
const INSERT_DELETION = `INSERT INTO memory_audit_log (operation, memory_type, affected_ids, success, metadata,
    tenant_id, key_id, agent_id, surface, request_id, job_name, job_run_id)
  VALUES ($1, $2, '{}', TRUE, $3, $4, $5, $6, $7, $8, $9, $10)`;

/** AuditTrail over Postgres (`memory_audit_log` and its partition functions). */
export class PgAuditTrail implements AuditTrail {
  constructor(private readonly pg: Queryable) {}

  async ensurePartitions(firstDay: string, days: number): Promise<number> {
    return (await this.pg.query<{ created: number }>(ENSURE, [firstDay, days])).rows[0]?.created ?? 0;
  }

  async dropPartitionsBefore(retentionDays: number): Promise<number> {
    return (await this.pg.query<{ dropped: string }>(DROP, [retentionDays, actorColumns(currentActor())])).rows.length;
  }

  async redactUserRows(userId: string, at: Date): Promise<number> {
    return (await this.pg.query(REDACT_USER, [userId, at])).rowCount ?? 0;
  }

  async recordUserErased(userId: string, report: Record<string, unknown>): Promise<ErasureReceipt> {
    const row = (await this.pg.query<ErasureRecordRow>(INSERT_ERASURE, [userId, JSON.stringify(report), ...actorValues(currentActor())])).rows[0]!;
    return erasureReceipt(row);
  }

  async recordDeletion(operation: string, memoryType: MemoryType, deleted: Record<string, number>): Promise<void> {
    await this.pg.query(INSERT_DELETION, [operation, memoryType, JSON.stringify({ deleted }), ...actorValues(currentActor())]);
  }
}
