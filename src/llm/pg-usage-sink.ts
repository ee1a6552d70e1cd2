import type { Queryable } from '../infra/postgres';
import type { LlmUsage, UsageSink } from './contract';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';

// $1..$11 -> inserts one llm_usage row
const INSERT_USAGE = `INSERT INTO llm_usage (user_id, conversation_id, purpose, provider, model, input_tokens, output_tokens, cost_usd, latency_ms, ok, error)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

// $1 user-id prefix (a tenant's), $2 since -> per purpose and model: calls, failed, tokens, cost
const USAGE_SUMMARY = `SELECT purpose, model, count(*) AS calls, count(*) FILTER (WHERE NOT ok) AS failed,
    coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(output_tokens), 0) AS output_tokens, coalesce(sum(cost_usd), 0) AS cost_usd
  FROM llm_usage WHERE starts_with(user_id, $1) AND created_at >= $2 GROUP BY purpose, model ORDER BY cost_usd DESC, purpose, model`;

/** LLM calls of one purpose and model over a window. */
export interface LlmUsageSummary {
  purpose: string;
  model: string;
  calls: number;
  failed: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** Writes the tokens and cost of every LLM call to `llm_usage`. */
export class PgUsageSink implements UsageSink {
  constructor(private readonly pg: Queryable) {}

  async record(e: LlmUsage & { userId: string; conversationId?: string; purpose: string; ok: boolean; error?: string }): Promise<void> {
    await this.pg.query(INSERT_USAGE, [
      e.userId,
      e.conversationId ?? null,
      e.purpose,
      e.provider,
      e.model,
      Math.round(e.inputTokens),
      Math.round(e.outputTokens),
      e.costUsd,
      Math.round(e.latencyMs),
      e.ok,
      e.error?.slice(0, 2_000) ?? null,
    ]);
  }

  /** Calls since `since` of the users whose ids start with `userPrefix` (a tenant's), per purpose and model, costliest first. */
  async summary(userPrefix: string, since: Date): Promise<LlmUsageSummary[]> {
    type Row = { purpose: string; model: string; calls: string; failed: string; input_tokens: string; output_tokens: string; cost_usd: string };
    return (await this.pg.query<Row>(USAGE_SUMMARY, [userPrefix, since])).rows.map((r) => ({
      purpose: r.purpose,
      model: r.model,
      calls: Number(r.calls),
      failed: Number(r.failed),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      costUsd: Number(r.cost_usd),
    }));
  }

  /** The user's rows of `llm_usage`, for whole-user export, import and erasure. */
  userData(): UserDataPart {
    return new PgUserRows(this.pg, 'llm', ['llm_usage']);
  }
}
