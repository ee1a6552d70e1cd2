import type { Queryable } from '../infra/postgres';
import type { NewTurn, TurnLog } from './contract';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';

const COLUMNS = ['turn_id', 'conversation_id', 'user_id', 'turn_index', 'timestamp', 'role', 'content', 'content_hash', 'token_count', 'model', 'channel', 'metadata'];
// A created turn's row replaces a row left under its id by a write whose Neo4j commit failed; a repeat leaves the row.
const ON_CREATED = `ON CONFLICT (turn_id) DO UPDATE SET ${COLUMNS.slice(1)
  .map((c) => `${c} = EXCLUDED.${c}`)
  .join(', ')}`;
const ON_REPEAT = 'ON CONFLICT (turn_id) DO NOTHING';

// $1 user, $2 conversation -> deleted rows
const DELETE_CONVERSATION_ROWS = 'DELETE FROM conversation_logs WHERE user_id = $1 AND conversation_id = $2';
// $1 user, $2 conversation, $3 index -> deleted rows
const DELETE_TURN_ROW = 'DELETE FROM conversation_logs WHERE user_id = $1 AND conversation_id = $2 AND turn_index = $3';

/**
 * conversation_logs: one row per turn, written inside the Neo4j transaction that stores it
 * (before its commit, see EpisodicStore.storeTurns), so a turn is never committed without
 * its row; idempotent on turn id.
 */
export class PgTurnLog implements TurnLog {
  constructor(private readonly db: Queryable) {}

  async append(turns: Array<NewTurn & { id: string; index: number; created: boolean }>): Promise<void> {
    await this.insert(
      turns.filter((t) => t.created),
      ON_CREATED,
    );
    await this.insert(
      turns.filter((t) => !t.created),
      ON_REPEAT,
    );
  }

  private async insert(turns: Array<NewTurn & { id: string; index: number }>, onConflict: string): Promise<void> {
    // Postgres caps a statement at 65,535 parameters.
    const chunk = Math.floor(60_000 / COLUMNS.length);
    for (let i = 0; i < turns.length; i += chunk) {
      const params: unknown[] = [];
      const values = turns.slice(i, i + chunk).map((t) => {
        const base = params.length;
        params.push(t.id, t.conversationId, t.userId, t.index, t.timestamp, t.role, t.content, t.contentHash, t.tokenCount, t.model ?? null, t.channel, t.metadata);
        return `(${COLUMNS.map((_, j) => `$${base + j + 1}`).join(', ')})`;
      });
      await this.db.query(`INSERT INTO conversation_logs (${COLUMNS.join(', ')}) VALUES ${values.join(', ')} ${onConflict}`, params);
    }
  }

  /** Deletes the user's rows of one conversation (every turn, or the one at `index`); returns how many. */
  async deleteTurns(userId: string, conversationId: string, index?: number): Promise<number> {
    const r = index === undefined ? await this.db.query(DELETE_CONVERSATION_ROWS, [userId, conversationId]) : await this.db.query(DELETE_TURN_ROW, [userId, conversationId, index]);
    return r.rowCount ?? 0;
  }

  /** The user's rows of `conversation_logs`, `memory_timeline`, for whole-user export, import and erasure. */
  userData(): UserDataPart {
    return new PgUserRows(this.db, 'episodic', ['conversation_logs', 'memory_timeline']);
  }
}
