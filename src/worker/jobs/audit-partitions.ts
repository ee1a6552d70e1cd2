import type { Queryable } from '../../infra/postgres';
import type { JobContext, JobStats } from '../contract';

// $1 first day (UTC date), $2 days -> {created}: daily partitions created (sql/001 ensure_audit_partitions)
const ENSURE = 'SELECT ensure_audit_partitions($1::date, $2::int) AS created';
// $1 retention days -> one row per dropped partition name (sql/001 drop_old_audit_partitions)
const DROP = 'SELECT drop_old_audit_partitions($1::int) AS dropped';

/** `audit_partitions` (daily): creates tomorrow's and the next days' partitions, drops those past retention. Both are idempotent. */
export function auditPartitionsJob(deps: { pg: Queryable; daysAhead: number; retentionDays: number }) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const today = ctx.clock.now().toISOString().slice(0, 10);
    const created = (await deps.pg.query<{ created: number }>(ENSURE, [today, deps.daysAhead + 1])).rows[0]?.created ?? 0;
    const dropped = (await deps.pg.query<{ dropped: string }>(DROP, [deps.retentionDays])).rows.length;
    return { created, dropped };
  };
}
