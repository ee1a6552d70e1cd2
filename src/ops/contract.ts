import type { ConversationUpkeep, EpisodicStore } from '../episodic/contract';
import type { PgUsageSink } from '../llm/pg-usage-sink';
import type { JobRunLog } from '../worker/contract';
import type { OpsReport } from './schema';

export type { OpsQuery, OpsReport } from './schema';

/** Where the operations report comes from: each owning store's own read, and a readiness probe. */
export interface OpsSources {
  jobRuns: Pick<JobRunLog, 'recentRuns'>;
  turns: Pick<EpisodicStore, 'countPendingEmbeddings'>;
  conversations: Pick<ConversationUpkeep, 'consolidationBacklog'>;
  llm: Pick<PgUsageSink, 'summary'>;
  /** Each store's health, as /readyz reports it. */
  health: () => Promise<OpsReport['stores']>;
  now?: () => Date;
}
