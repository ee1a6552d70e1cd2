import type { AccessScope } from '../access';
import type { Queryable } from '../infra/postgres';
import type { NewInvocation, ToolInvocationLog } from './contract';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';

// $1..$12 -> (): one tool_invocations row; a repeated invocation_id is left as it is
const INSERT_INVOCATION = `
INSERT INTO tool_invocations (invocation_id, conversation_id, user_id, turn_index, timestamp, tool_name, tool_input, tool_output,
                              success, latency_ms, error_message, channel)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, $12)
ON CONFLICT (invocation_id) DO NOTHING`;
// $1 user, $2 conversation -> {tool_name, success} in call order
const CALLS_OF = `SELECT tool_name, success FROM tool_invocations WHERE user_id = $1 AND conversation_id = $2 ORDER BY turn_index, timestamp, id`;
// $1 user, $2 conversation, $3 turn index (null: all) -> deletes the conversation's (or the turn's) calls
const DELETE_CALLS = 'DELETE FROM tool_invocations WHERE user_id = $1 AND conversation_id = $2 AND ($3::int IS NULL OR turn_index = $3::int)';

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

  async callsOf(userId: string, conversationId: string): Promise<Array<{ toolName: string; success: boolean | null }>> {
    const r = await this.db.query<{ tool_name: string; success: boolean | null }>(CALLS_OF, [userId, conversationId]);
    return r.rows.map((x) => ({ toolName: x.tool_name, success: x.success }));
  }

  async deleteCalls(userId: string, conversationId: string, index?: number): Promise<number> {
    return (await this.db.query(DELETE_CALLS, [userId, conversationId, index ?? null])).rowCount ?? 0;
  }

  /** The user's rows of `tool_invocations`, for whole-user export, import and erasure. */
  userData(): UserDataPart {
    return new PgUserRows(this.db, 'procedural', ['tool_invocations']);
  }
}
