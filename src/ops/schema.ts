import * as z from 'zod';

/*
 * The wire contract of the operations report (GET /v1/ops): zod only, bundled by the browser
 * client. Every number is the caller's tenant's, except the worker's job runs (jobs run for
 * every tenant at once: their status and timing only, never their counters or error text) and
 * the stores' health (shared infrastructure).
 */

export const OpsQuerySchema = z.object({ hours: z.coerce.number().int().min(1).max(720).default(24).describe('the window for job runs and LLM calls, in hours (default 24)') }).strict();
export type OpsQuery = z.input<typeof OpsQuerySchema>;

const StoreHealthSchema = z.object({ up: z.boolean(), latencyMs: z.number(), degraded: z.boolean().optional(), error: z.string().optional() });

export const OpsReportSchema = z
  .object({
    tenantId: z.string(),
    generatedAt: z.string(),
    since: z.string().describe('start of the window of jobs and llm'),
    stores: z.object({ neo4j: StoreHealthSchema, postgres: StoreHealthSchema, redis: StoreHealthSchema }),
    jobs: z.array(
      z.object({
        job: z.string(),
        lastStatus: z.enum(['succeeded', 'failed', 'skipped', 'running']),
        lastStartedAt: z.string(),
        lastFinishedAt: z.string().nullable(),
        lastDurationMs: z.number().nullable(),
        runs: z.number().int(),
        failures: z.number().int(),
        lastSuccessAt: z.string().nullable(),
      }),
    ),
    embeddingBacklog: z.object({ turns: z.number().int().describe("the tenant's turns waiting for an embedding") }),
    consolidation: z.object({
      conversations: z.number().int().describe("the tenant's conversations waiting for consolidation"),
      lagSeconds: z.number().describe('how long the oldest of them has waited since its last turn (0: none waits)'),
    }),
    llm: z.object({
      calls: z.number().int(),
      failed: z.number().int(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      costUsd: z.number(),
      byPurpose: z.array(
        z.object({ purpose: z.string(), model: z.string(), calls: z.number().int(), failed: z.number().int(), inputTokens: z.number().int(), outputTokens: z.number().int(), costUsd: z.number() }),
      ),
    }),
  })
  .strict();
export type OpsReport = z.output<typeof OpsReportSchema>;
