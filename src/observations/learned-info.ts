import { normalizeJsonValues } from '../extraction/llm-output';
import type { Queryable } from '../infra/postgres';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';
import type { LearnedInfo } from './schema';

/**
 * Connection-scoped learned info (seed 000 §2.1, §3.E `persistent_learned_info`): one JSON
 * document per user and tool connection ("default Jira project for this connection is
 * PROJ"). It lives beside the user's profile (`user_profiles`) because it is the same kind
 * of memory: a small schema-free document, written by agents or consolidation with the same
 * normalisation of stringified JSON values, and rendered into the recall context block
 * (the profile for the user, this for each active connection) rather than searched.
 */
export interface LearnedInfoStore {
  /** The documents of the user's `connectionIds` (all of the user's when null), by connection id. */
  list(userId: string, connectionIds: readonly string[] | null): Promise<LearnedInfo[]>;
  /**
   * Writes one document: `replace` swaps it whole; `merge` sets the given top-level keys and
   * removes those given as null (atomic, one statement). Values that are JSON strings holding
   * an object or array are parsed first (LLM output), recursively. Returns the document.
   */
  write(userId: string, connectionId: string, info: Record<string, unknown>, mode: 'replace' | 'merge'): Promise<LearnedInfo>;
  /** Deletes one document; false when there was none. */
  delete(userId: string, connectionId: string): Promise<boolean>;
  userData(): UserDataPart;
}

interface Row {
  connection_id: string;
  info: Record<string, unknown>;
  updated_at: Date;
}

// $1 user, $2 connections (null: all) -> rows by connection id
const LIST = `SELECT connection_id, info, updated_at FROM connection_learned_info
WHERE user_id = $1 AND ($2::text[] IS NULL OR connection_id = ANY($2)) ORDER BY connection_id`;
// $1 user, $2 connection, $3 document (nulls already stripped) -> the row
const REPLACE = `INSERT INTO connection_learned_info (user_id, connection_id, info, updated_at) VALUES ($1, $2, $3::jsonb, NOW())
ON CONFLICT (user_id, connection_id) DO UPDATE SET info = EXCLUDED.info, updated_at = NOW()
RETURNING connection_id, info, updated_at`;
// $1 user, $2 connection, $3 patch -> the row: top-level keys set, null-valued ones removed
const MERGE = `INSERT INTO connection_learned_info AS c (user_id, connection_id, info, updated_at) VALUES ($1, $2, jsonb_strip_nulls($3::jsonb), NOW())
ON CONFLICT (user_id, connection_id) DO UPDATE SET info = jsonb_strip_nulls(c.info || $3::jsonb), updated_at = NOW()
RETURNING connection_id, info, updated_at`;
// $1 user, $2 connection -> deleted count
const DELETE = `DELETE FROM connection_learned_info WHERE user_id = $1 AND connection_id = $2`;

export class PgLearnedInfoStore implements LearnedInfoStore {
  constructor(private readonly pg: Queryable) {}

  async list(userId: string, connectionIds: readonly string[] | null): Promise<LearnedInfo[]> {
    if (connectionIds && connectionIds.length === 0) return [];
    return (await this.pg.query<Row>(LIST, [userId, connectionIds])).rows.map(toInfo);
  }

  async write(userId: string, connectionId: string, info: Record<string, unknown>, mode: 'replace' | 'merge'): Promise<LearnedInfo> {
    const doc = normalizeJsonValues(info) as Record<string, unknown>;
    const sql = mode === 'replace' ? REPLACE : MERGE;
    const body = mode === 'replace' ? Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== null)) : doc;
    return toInfo((await this.pg.query<Row>(sql, [userId, connectionId, JSON.stringify(body)])).rows[0]!);
  }

  async delete(userId: string, connectionId: string): Promise<boolean> {
    return ((await this.pg.query(DELETE, [userId, connectionId])).rowCount ?? 0) > 0;
  }

  userData(): UserDataPart {
    return new PgUserRows(this.pg, 'learned info', ['connection_learned_info']);
  }
}

function toInfo(r: Row): LearnedInfo {
  return { connectionId: r.connection_id, info: r.info, updatedAt: r.updated_at.toISOString() };
}
