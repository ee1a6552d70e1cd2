import type { AuditTrail } from '../audit';
import type { Config } from '../config';
import type { ConversationUpkeep } from '../episodic/contract';
import type { Extractor } from '../extraction/contract';
import type { Logger } from '../infra/logger';
import type { ObservationQueue } from '../observations/contract';
import type { PgProfileStore } from '../observations/profile';
import type { ToolInvocationLog } from '../procedural/contract';
import type { SemanticUpkeep } from '../semantic/contract';
import { KnowledgeApplier } from './apply-extraction';
import type { ConsolidationLedger, JobFn, JobName, KnowledgeWriter, LockService } from './contract';
import { auditPartitionsJob } from './jobs/audit-partitions';
import { cleanupJob } from './jobs/cleanup';
import { consolidateJob } from './jobs/consolidate';
import { decayJob } from './jobs/decay';
import { patternsJob } from './jobs/patterns';
import { promoteJob } from './jobs/promote';
import { poolsJob } from './jobs/pools';
import type { PoolUpkeep } from '../pools/contract';
import { shortTermJob } from './jobs/short-term';
import type { ShortTermStore } from '../short-term/contract';
import type { SettingsStore } from '../settings/contract';

export * from './contract';
export { Worker, type JobRunResult, type WorkerOptions } from './worker';
export { RedisLockService } from './redis-lock';
export { PgJobStore } from './pg-job-store';

/**
 * The owning stores' operations the jobs run (the jobs hold no Cypher or SQL of their own):
 * conversation progress (episodic), decay and cleanup of entities and facts (semantic),
 * tool calls (procedural), profiles (observations), audit partitions, the ledger.
 */
export interface JobStores {
  conversations: ConversationUpkeep;
  semantic: SemanticUpkeep;
  toolLog: Pick<ToolInvocationLog, 'callsOf'>;
  profiles: Pick<PgProfileStore, 'learn'>;
  auditTrail: AuditTrail;
  ledger: ConsolidationLedger;
  /** Memory pools' maintenance (expiry, near-duplicates, stale context). */
  pools: PoolUpkeep;
  /** The short-term tier's promotion and expiry operations. */
  shortTerm: Pick<ShortTermStore, 'promotable' | 'markPromoted' | 'deleteExpired'>;
  /** Who has automatic mining off (the extraction jobs skip them). */
  settings: Pick<SettingsStore, 'miningOff'>;
  /** The retention rule's delete of one conversation, with what was learned only from it (src/forgetting). */
  forget?: (userId: string, conversationId: string) => Promise<unknown>;
}

export interface JobDeps {
  config: Config;
  stores: JobStores;
  knowledge: KnowledgeWriter;
  extractor: Extractor;
  observations: ObservationQueue;
  locks: LockService;
  log: Logger;
}

/** The jobs, wired from the composition root's pieces and the configuration. */
export function createJobs(d: JobDeps): Record<JobName, JobFn> {
  const w = d.config.worker;
  const s = d.stores;
  const applier = new KnowledgeApplier(d.knowledge, s.ledger, d.config.extraction.contradictionPolicy, d.log);
  return {
    consolidate: consolidateJob({
      conversations: s.conversations,
      extractor: d.extractor,
      applier,
      observations: d.observations,
      profiles: s.profiles,
      settings: s.settings,
      locks: d.locks,
      windowTurns: d.config.extraction.windowTurns,
      batchSize: w.batchSize,
      lockTtlMs: w.lockTtlMs,
    }),
    patterns: patternsJob({ conversations: s.conversations, toolLog: s.toolLog, knowledge: d.knowledge, settings: s.settings, locks: d.locks, lockTtlMs: w.lockTtlMs, batchSize: w.batchSize }),
    decay: decayJob({ semantic: s.semantic, rate: w.decayRate, weeklyRate: w.inferredDecayRate }),
    cleanup: cleanupJob({
      conversations: s.conversations,
      semantic: s.semantic,
      ledger: s.ledger,
      archiveDays: w.archiveDays,
      duplicateSimilarity: w.duplicateSimilarity,
      retention: w.deleteDays === undefined || !s.forget ? undefined : { days: w.deleteDays, forget: s.forget },
    }),
    promote: promoteJob({ knowledge: d.knowledge, thresholds: w.promotion, batchSize: w.batchSize }),
    short_term: shortTermJob({ store: s.shortTerm, knowledge: d.knowledge, trail: s.auditTrail, minAccess: w.shortTermMinAccess, batchSize: w.batchSize }),
    audit_partitions: auditPartitionsJob({ trail: s.auditTrail, daysAhead: d.config.audit.partitionDaysAhead, retentionDays: d.config.audit.retentionDays }),
    pools: poolsJob({
      pools: s.pools,
      trail: s.auditTrail,
      duplicateCosine: d.config.pools.duplicateCosine,
      staleThreshold: d.config.pools.staleThreshold,
      staleHalfLifeDays: d.config.pools.staleHalfLifeDays,
    }),
  };
}
