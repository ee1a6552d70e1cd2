import type { AccessScope } from '../access';
import type { Queryable } from '../infra/postgres';
import type { NewInvocation, ToolInvocationLog } from './contract';

// $1..$12 -> (): one tool_invocations row; a repeated invocation_id is left as it is
const INSERT_INVOCATION = `
INSERT INTO tool_invocations (invocation_id, conversation_id, user_id, turn_index, timestamp, tool_name, tool_input, tool_output,
                              success, latency_ms, error_message, channel)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, $12)
ON CONFLICT (invocation_id) DO NOTHING`;

/** tool_invocations: the Postgres copy of every invocation, written after Neo4j accepted it. */
export class PgToolInvocationLog implements ToolInvocationLog {
  constructor(private readonly db: Queryable) {}

  async append(scope: AccessScope, inv: NewInvocation): Promise<void> {
    await this.db.query(INSERT_INVOCATION, [
      inv.id,
      inv.conversationId,
      scope.userId,
      inv.turnIndex,
      inv.timestamp,
      inv.toolName,
      // JSON text, so a string input is stored as a JSON string rather than re-parsed by pg.
      JSON.stringify(inv.toolInput),
      inv.toolOutput === undefined ? null : JSON.stringify(inv.toolOutput),
      inv.success,
      inv.latencyMs,
      inv.errorMessage ?? null,
      scope.channel,
    ]);
  }
}
