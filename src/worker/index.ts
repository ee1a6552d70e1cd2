import type pg from 'pg';
import type { AuditLogger } from '../audit';
import type { Config } from '../config';
import type { Extractor } from '../extraction/contract';
import type { CypherRunner } from '../infra/neo4j';
import type { Logger } from '../infra/logger';
import type { ObservationQueue } from '../observations/contract';
import { PgProfileStore } from '../observations/profile';
import { KnowledgeApplier } from './apply-extraction';
import type { JobFn, JobName, KnowledgeWriter, LockService } from './contract';
import { auditPartitionsJob } from './jobs/audit-partitions';
import { cleanupJob } from './jobs/cleanup';
import { consolidateJob } from './jobs/consolidate';
import { decayJob } from './jobs/decay';
import { patternsJob } from './jobs/patterns';
import { promoteJob } from './jobs/promote';
import { ConsolidationLedger } from './ledger';

export * from './contract';
export { Worker, type JobRunResult, type WorkerOptions } from './worker';
export { RedisLockService, withLock } from './redis-lock';
export { ConsolidationLedger, itemKey } from './ledger';
export { KnowledgeApplier } from './apply-extraction';

export interface JobDeps {
  config: Config;
  neo4j: CypherRunner;
  pg: pg.Pool;
  knowledge: KnowledgeWriter;
  extractor: Extractor;
  observations: ObservationQueue;
  audit: AuditLogger;
  locks: LockService;
  log: Logger;
  facadeAuditsPromotions: boolean;
}

/** The six jobs, wired from the composition root's pieces and the configuration. */
export function createJobs(d: JobDeps): Record<JobName, JobFn> {
  const w = d.config.worker;
  const ledger = new ConsolidationLedger(d.pg);
  const applier = new KnowledgeApplier(d.knowledge, ledger, d.config.extraction.contradictionPolicy, d.log);
  return {
    consolidate: consolidateJob({
      neo4j: d.neo4j,
      pg: d.pg,
      extractor: d.extractor,
      applier,
      observations: d.observations,
      profiles: new PgProfileStore(),
      locks: d.locks,
      windowTurns: d.config.extraction.windowTurns,
      batchSize: w.batchSize,
      lockTtlMs: w.lockTtlMs,
    }),
    patterns: patternsJob({ neo4j: d.neo4j, pg: d.pg, knowledge: d.knowledge, locks: d.locks, lockTtlMs: w.lockTtlMs, batchSize: w.batchSize }),
    decay: decayJob({ neo4j: d.neo4j, rate: w.decayRate, weeklyRate: w.inferredDecayRate }),
    cleanup: cleanupJob({
      neo4j: d.neo4j,
      ledger,
      archiveDays: w.archiveDays,
      minSalience: w.cleanupMinSalience,
      unusedDays: w.cleanupUnusedDays,
      duplicateSimilarity: w.duplicateSimilarity,
    }),
    promote: promoteJob({ knowledge: d.knowledge, audit: d.audit, thresholds: w.promotion, facadeAuditsPromotions: d.facadeAuditsPromotions, batchSize: w.batchSize }),
    audit_partitions: auditPartitionsJob({ pg: d.pg, daysAhead: d.config.audit.partitionDaysAhead, retentionDays: d.config.audit.retentionDays }),
  };
}
