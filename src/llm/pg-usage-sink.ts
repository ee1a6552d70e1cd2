import type { Queryable } from '../infra/postgres';
import type { LlmUsage, UsageSink } from './contract';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';

// $1..$11 -> inserts one llm_usage row
const INSERT_USAGE = `INSERT INTO llm_usage (user_id, conversation_id, purpose, provider, model, input_tokens, output_tokens, cost_usd, latency_ms, ok, error)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

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

  /** The user's rows of `llm_usage`, for whole-user export, import and erasure. */
  userData(): UserDataPart {
    return new PgUserRows(this.pg, 'llm', ['llm_usage']);
  }
}
