import type { Queryable } from '../infra/postgres';
import type { AuditTrail } from './contract';

// $1 first day (UTC date), $2 days -> {created}: daily partitions created (sql/001 ensure_audit_partitions)
const ENSURE = 'SELECT ensure_audit_partitions($1::date, $2::int) AS created';
// $1 retention days -> one row per dropped partition name (sql/001 drop_old_audit_partitions)
const DROP = 'SELECT drop_old_audit_partitions($1::int) AS dropped';
// $1 user -> {n}
const DELETE_USER = 'DELETE FROM memory_audit_log WHERE user_id = $1';
// $1 user, $2 metadata -> nothing: the one row that outlives an erasure
const INSERT_ERASURE = `INSERT INTO memory_audit_log (operation, memory_type, user_id, affected_ids, success, metadata)
  VALUES ('forget_user', 'system', $1, '{}', TRUE, $2)`;

/** AuditTrail over Postgres (`memory_audit_log` and its partition functions). */
export class PgAuditTrail implements AuditTrail {
  constructor(private readonly pg: Queryable) {}

  async ensurePartitions(firstDay: string, days: number): Promise<number> {
    return (await this.pg.query<{ created: number }>(ENSURE, [firstDay, days])).rows[0]?.created ?? 0;
  }

  async dropPartitionsBefore(retentionDays: number): Promise<number> {
    return (await this.pg.query<{ dropped: string }>(DROP, [retentionDays])).rows.length;
  }

  async deleteUserRows(userId: string): Promise<number> {
    return (await this.pg.query(DELETE_USER, [userId])).rowCount ?? 0;
  }

  async recordUserErased(userId: string, report: Record<string, unknown>): Promise<void> {
    await this.pg.query(INSERT_ERASURE, [userId, JSON.stringify(report)]);
  }
}
