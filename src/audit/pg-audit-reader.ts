import type pg from 'pg';
import QueryStream from 'pg-query-stream';
import { ValidationError } from '../errors';
import type { AuditFilter, AuditReader, AuditRow, AuditScope } from './contract';

// The columns of a row as read; ts is the exact UTC time (microseconds), the cursor's key with id.
const SELECT_ROWS = `SELECT id::text AS id, to_char(timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ts,
  operation, memory_type, user_id, session_id, conversation_id, source_channel, target_channels, affected_ids, query_text,
  result_count, latency_ms, success, error_message, tenant_id, key_id, agent_id, surface, request_id, job_name,
  job_run_id::text AS job_run_id, metadata
FROM memory_audit_log`;
// Page order (newest first) and export order (oldest first): the keyset is (timestamp, id).
const NEWEST_FIRST = 'ORDER BY timestamp DESC, id DESC';
const OLDEST_FIRST = 'ORDER BY timestamp ASC, id ASC';

/**
 * The WHERE fragments, one per filter; `$` stands for the filter's parameter. Each is served
 * by an index of sql/001, 006 or 008 together with the tenant: (tenant_id, timestamp),
 * (tenant_id, key_id, ...), (tenant_id, agent_id, ...), (tenant_id, ...) WHERE NOT success, (user_id, timestamp),
 * (operation, timestamp), (memory_type, timestamp), (source_channel, timestamp) and the GIN
 * index on target_channels; since/until also prune the daily partitions.
 */
const CLAUSES: { readonly [K in keyof Required<AuditFilter>]: string } = {
  userId: 'user_id = $',
  operation: 'operation = $',
  memoryType: 'memory_type = $',
  channel: '(source_channel = $::text OR target_channels @> ARRAY[$::text])',
  keyId: 'key_id = $',
  agentId: 'agent_id = $',
  surface: 'surface = $',
  since: 'timestamp >= $::timestamptz',
  until: 'timestamp < $::timestamptz',
  success: 'success = $::boolean',
};
// $t, $i: rows strictly older than the cursor's (timestamp, id); the first half lets the
// timestamp indexes and partition pruning serve the row comparison.
const OLDER_THAN = (t: string, i: string) => `timestamp <= ${t}::timestamptz AND (timestamp, id) < (${t}::timestamptz, ${i}::bigint)`;

interface DbRow {
  id: string;
  ts: string;
  operation: string;
  memory_type: string;
  user_id: string | null;
  session_id: string | null;
  conversation_id: string | null;
  source_channel: string | null;
  target_channels: string[] | null;
  affected_ids: string[] | null;
  query_text: string | null;
  result_count: number | null;
  latency_ms: number | null;
  success: boolean;
  error_message: string | null;
  tenant_id: string | null;
  key_id: string | null;
  agent_id: string | null;
  surface: string | null;
  request_id: string | null;
  job_name: string | null;
  job_run_id: string | null;
  metadata: Record<string, unknown> | null;
}

/** Rows fetched per round trip while exporting: what the stream holds in memory at most (twice, with the next batch). */
const EXPORT_BATCH = 1_000;

/**
 * AuditReader over `memory_audit_log` (sql/001, 006, 008). Queries are assembled from the
 * fixed fragments above with every value a parameter; pages use keyset pagination (no
 * OFFSET), so page N costs what page 1 does. Reads go to the pool it is given (the read
 * replica when one is configured: rows appear there with the replica's lag).
 */
export class PgAuditReader implements AuditReader {
  constructor(private readonly pool: pg.Pool) {}

  async page(scope: AuditScope, filter: AuditFilter, opts: { cursor?: string; limit: number }): Promise<{ rows: AuditRow[]; nextCursor: string | null }> {
    const { where, params } = whereClause(scope, filter);
    if (opts.cursor !== undefined) {
      const c = decodeCursor(opts.cursor);
      params.push(c.ts, c.id);
      where.push(OLDER_THAN(`$${params.length - 1}`, `$${params.length}`));
    }
    params.push(opts.limit + 1);
    const sql = `${SELECT_ROWS} ${render(where)} ${NEWEST_FIRST} LIMIT $${params.length}`;
    const found = (await this.pool.query<DbRow>(sql, params)).rows;
    const more = found.length > opts.limit;
    const rows = found.slice(0, opts.limit);
    const last = rows[rows.length - 1];
    return { rows: rows.map(toRow), nextCursor: more && last ? encodeCursor(last.ts, last.id) : null };
  }

  async *stream(scope: AuditScope, filter: AuditFilter): AsyncIterable<AuditRow> {
    const { where, params } = whereClause(scope, filter);
    const client = await this.pool.connect();
    let finished = false;
    try {
      const rows = client.query(new QueryStream(`${SELECT_ROWS} ${render(where)} ${OLDEST_FIRST}`, params, { batchSize: EXPORT_BATCH, highWaterMark: EXPORT_BATCH }));
      for await (const row of rows as AsyncIterable<DbRow>) yield toRow(row);
      finished = true;
    } finally {
      // A stream left midway (consumer gone, error) may leave the portal open: drop that connection.
      client.release(!finished);
    }
  }
}

/** The WHERE fragments and parameters of a scope and filter, in a fixed order. */
function whereClause(scope: AuditScope, filter: AuditFilter): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if ('tenantId' in scope) {
    params.push(scope.tenantId);
    where.push(`tenant_id = $${params.length}`);
  }
  for (const key of Object.keys(CLAUSES) as (keyof AuditFilter)[]) {
    const value = filter[key];
    if (value === undefined) continue;
    params.push(value instanceof Date ? value.toISOString() : value);
    where.push(CLAUSES[key].replaceAll('$', `$${params.length}`));
  }
  return { where, params };
}

function render(where: string[]): string {
  return where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
}

function toRow(r: DbRow): AuditRow {
  return {
    id: r.id,
    timestamp: r.ts,
    operation: r.operation,
    memoryType: r.memory_type,
    userId: r.user_id,
    sessionId: r.session_id,
    conversationId: r.conversation_id,
    channel: r.source_channel,
    channels: r.target_channels ?? [],
    affectedIds: r.affected_ids ?? [],
    queryText: r.query_text,
    resultCount: r.result_count,
    latencyMs: r.latency_ms,
    success: r.success,
    errorMessage: r.error_message,
    actor: { tenantId: r.tenant_id, keyId: r.key_id, agentId: r.agent_id, surface: r.surface, requestId: r.request_id, job: r.job_name, runId: r.job_run_id },
    metadata: r.metadata ?? {},
  };
}

const CURSOR_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The opaque cursor: the last row's exact (timestamp, id), base64url. */
export function encodeCursor(ts: string, id: string): string {
  return Buffer.from(`${ts}|${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { ts: string; id: string } {
  const [ts, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !ts || !id || !CURSOR_TS.test(ts) || !/^\d{1,19}$/.test(id)) {
    throw new ValidationError('invalid cursor: pass nextCursor from the previous page unchanged', { issues: [{ path: 'cursor', message: 'not a cursor this API issued' }] });
  }
  return { ts, id };
}
