import type { AuditTrail } from '../../audit';
import type { JobContext, JobStats } from '../contract';

/** `audit_partitions` (daily): creates tomorrow's and the next days' partitions, drops those past retention. Both are idempotent. */
export function auditPartitionsJob(deps: { trail: AuditTrail; daysAhead: number; retentionDays: number }) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const today = ctx.clock.now().toISOString().slice(0, 10);
    const created = await deps.trail.ensurePartitions(today, deps.daysAhead + 1);
    const dropped = await deps.trail.dropPartitionsBefore(deps.retentionDays);
    return { created, dropped };
  };
}
