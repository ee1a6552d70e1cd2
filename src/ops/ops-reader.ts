import { TenantNamespace } from '../access/namespace';
import type { OpsSources } from './contract';
import type { OpsReport } from './schema';

/**
 * The operations report of one tenant (the studio's Operations page, GET /v1/ops): the
 * worker's recent job runs, the tenant's embedding backlog, consolidation lag and LLM calls
 * and cost over the window, and each store's health. Per-tenant numbers are read with the
 * tenant's user-id prefix (`<tenant>.`), so no other tenant's count reaches the answer; job
 * runs are global and carry status and timing only.
 */
export class OpsReader {
  constructor(private readonly d: OpsSources) {}

  async report(tenantId: string, hours: number): Promise<OpsReport> {
    const now = this.d.now?.() ?? new Date();
    const since = new Date(now.getTime() - hours * 3_600_000);
    const prefix = new TenantNamespace(tenantId).prefix;
    const [stores, jobs, backlog, consolidation, llm] = await Promise.all([
      this.d.health(),
      this.d.jobRuns.recentRuns(since),
      this.d.turns.countPendingEmbeddings(prefix),
      this.d.conversations.consolidationBacklog(prefix),
      this.d.llm.summary(prefix, since),
    ]);
    const sum = (k: 'calls' | 'failed' | 'inputTokens' | 'outputTokens' | 'costUsd') => llm.reduce((n, r) => n + r[k], 0);
    return {
      tenantId,
      generatedAt: now.toISOString(),
      since: since.toISOString(),
      stores,
      jobs,
      embeddingBacklog: { turns: backlog },
      consolidation: {
        conversations: consolidation.conversations,
        lagSeconds: consolidation.oldest ? Math.max(0, Math.round((now.getTime() - Date.parse(consolidation.oldest)) / 1000)) : 0,
      },
      llm: { calls: sum('calls'), failed: sum('failed'), inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), costUsd: Math.round(sum('costUsd') * 1e6) / 1e6, byPurpose: llm },
    };
  }
}
