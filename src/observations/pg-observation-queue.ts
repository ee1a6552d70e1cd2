import type { AccessScope } from '../access';
import type pg from 'pg';
import { ValidationError, errorMessage } from '../errors';
import type { Queryable } from '../infra/postgres';
import type { BatchOutcome, Observation, ObservationCategory, ObservationQueue } from './contract';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';

interface ObservationRow {
  id: string;
  user_id: string;
  channel: string;
  category: ObservationCategory;
  content: string;
  source_metadata: Record<string, string | number | boolean>;
  connection_id: string | null;
  created_at: Date;
  processed_at: Date | null;
  attempts: number;
  last_error: string | null;
}

const COLUMNS = 'id, user_id, channel, category, content, source_metadata, connection_id, created_at, processed_at, attempts, last_error';

// $1 id, $2 user, $3 channel, $4 category, $5 content, $6 metadata, $7 connection -> the row, or none when the id exists
const INSERT = `INSERT INTO observations (id, user_id, channel, category, content, source_metadata, connection_id)
VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`;
// $1 user, $2 id -> the row
const GET = `SELECT ${COLUMNS} FROM observations WHERE user_id = $1 AND id = $2`;
// $1 limit -> user_id of users with pending rows, oldest pending first
const PENDING_USERS = `SELECT user_id FROM observations WHERE processed_at IS NULL
GROUP BY user_id ORDER BY min(created_at) LIMIT $1`;
// $1 user -> n
const COUNT_PENDING = 'SELECT count(*)::int AS n FROM observations WHERE user_id = $1 AND processed_at IS NULL';
// $1 user, $2 limit -> pending rows, locked for this transaction; rows locked by another worker are skipped
const CLAIM = `SELECT ${COLUMNS} FROM observations WHERE user_id = $1 AND processed_at IS NULL
ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`;
// $1 ids -> marks them processed
const MARK_PROCESSED = 'UPDATE observations SET processed_at = NOW(), attempts = attempts + 1, last_attempt_at = NOW(), last_error = NULL WHERE id = ANY($1)';
// $1 ids, $2 error -> records a failed attempt (rows stay pending)
const MARK_FAILED = 'UPDATE observations SET attempts = attempts + 1, last_attempt_at = NOW(), last_error = $2 WHERE id = ANY($1) AND processed_at IS NULL';

export class PgObservationQueue implements ObservationQueue {
  constructor(private readonly pool: pg.Pool) {}

  async record(scope: AccessScope, input: { id: string; category: ObservationCategory; content: string; sourceMetadata: Record<string, string | number | boolean>; connectionId?: string | null }) {
    const inserted = await this.pool.query<ObservationRow>(INSERT, [
      input.id,
      scope.userId,
      scope.channel,
      input.category,
      input.content,
      JSON.stringify(input.sourceMetadata),
      input.connectionId ?? null,
    ]);
    if (inserted.rows[0]) return { observation: toObservation(inserted.rows[0]), created: true };
    const existing = await this.get(scope.userId, input.id);
    // The id exists but belongs to someone else: refuse rather than reveal or overwrite it.
    if (!existing) throw new ValidationError(`observation id ${input.id} is already used; choose another id`);
    return { observation: existing, created: false };
  }

  async get(userId: string, id: string): Promise<Observation | null> {
    const r = await this.pool.query<ObservationRow>(GET, [userId, id]);
    return r.rows[0] ? toObservation(r.rows[0]) : null;
  }

  async pendingUsers(limit: number): Promise<string[]> {
    return (await this.pool.query<{ user_id: string }>(PENDING_USERS, [limit])).rows.map((r) => r.user_id);
  }

  async countPending(userId: string): Promise<number> {
    return (await this.pool.query<{ n: number }>(COUNT_PENDING, [userId])).rows[0]?.n ?? 0;
  }

  async processBatch(userId: string, limit: number, handler: (batch: Observation[], tx: Queryable) => Promise<void>): Promise<BatchOutcome> {
    const client = await this.pool.connect();
    let ids: string[] = [];
    try {
      await client.query('BEGIN');
      const batch = (await client.query<ObservationRow>(CLAIM, [userId, limit])).rows.map(toObservation);
      ids = batch.map((o) => o.id);
      if (batch.length === 0) {
        await client.query('COMMIT');
        return { claimed: 0, processed: 0 };
      }
      await handler(batch, client);
      await client.query(MARK_PROCESSED, [ids]);
      await client.query('COMMIT');
      return { claimed: batch.length, processed: batch.length };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      const error = errorMessage(err);
      if (ids.length > 0) await this.pool.query(MARK_FAILED, [ids, error.slice(0, 2_000)]).catch(() => undefined);
      return { claimed: ids.length, processed: 0, error };
    } finally {
      client.release();
    }
  }

  /** The user's rows of `observations`, for whole-user export, import and erasure. */
  userData(): UserDataPart {
    return new PgUserRows(this.pool, 'observations', ['observations']);
  }
}

function toObservation(r: ObservationRow): Observation {
  return {
    id: r.id,
    userId: r.user_id,
    channel: r.channel,
    category: r.category,
    content: r.content,
    sourceMetadata: r.source_metadata,
    connectionId: r.connection_id,
    createdAt: r.created_at.toISOString(),
    processedAt: r.processed_at ? r.processed_at.toISOString() : null,
    attempts: r.attempts,
    lastError: r.last_error,
  };
}
