import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { TenantNamespace } from '../access/namespace';
import type { AuditExportFormat, AuditRow } from './contract';

/** The media type of each export format. */
export const EXPORT_CONTENT_TYPES: Readonly<Record<AuditExportFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/**
 * CSV columns, in order: the row's fields with the actor flattened; lists and metadata are
 * JSON text (unambiguous whatever they hold), booleans true/false, absent values empty; a
 * value starting with = + - @ tab or CR is prefixed with ' (formula injection).
 */
export const CSV_COLUMNS = [
  'id',
  'timestamp',
  'operation',
  'memoryType',
  'userId',
  'sessionId',
  'conversationId',
  'channel',
  'channels',
  'affectedIds',
  'queryText',
  'resultCount',
  'latencyMs',
  'success',
  'errorMessage',
  'tenantId',
  'keyId',
  'agentId',
  'surface',
  'requestId',
  'job',
  'runId',
  'metadata',
] as const;

/** One row as a CSV record keyed by CSV_COLUMNS. */
export function csvRecord(r: AuditRow): Record<(typeof CSV_COLUMNS)[number], string | number | boolean | null> {
  return {
    id: r.id,
    timestamp: r.timestamp,
    operation: r.operation,
    memoryType: r.memoryType,
    userId: r.userId,
    sessionId: r.sessionId,
    conversationId: r.conversationId,
    channel: r.channel,
    channels: JSON.stringify(r.channels),
    affectedIds: JSON.stringify(r.affectedIds),
    queryText: r.queryText,
    resultCount: r.resultCount,
    latencyMs: r.latencyMs,
    success: r.success,
    errorMessage: r.errorMessage,
    ...r.actor,
    metadata: JSON.stringify(r.metadata),
  };
}

/**
 * The export body: rows in, text out (CSV with a header line, or one JSON object per line),
 * as a stream that pulls a row only when the reader downstream wants more, so memory stays
 * bounded by the streams' buffers. Destroying the returned stream (the client went away)
 * stops the source, which releases its database connection; a source error destroys it.
 */
export function exportStream(rows: AsyncIterable<AuditRow>, format: AuditExportFormat): Readable {
  if (format === 'jsonl')
    return Readable.from(
      mapRows(rows, (r) => `${JSON.stringify(r)}\n`),
      { objectMode: false },
    );
  // escape_formulas: a cell starting with = + - @ (a caller's query text, say) gets a leading ',
  // so a spreadsheet opening the export shows it instead of running it.
  const csv = stringify({ header: true, columns: [...CSV_COLUMNS], escape_formulas: true, cast: { boolean: (b) => (b ? 'true' : 'false') } });
  pipeline(Readable.from(mapRows(rows, csvRecord)), csv, () => undefined); // errors reach the consumer as csv's error
  return csv;
}

/** Each row through `fn`, lazily. */
export async function* mapRows<R, T>(rows: AsyncIterable<R>, fn: (r: R) => T): AsyncIterable<T> {
  for await (const r of rows) yield fn(r);
}

/**
 * Starts `rows` (runs the query and reads the first row) before anything is sent, so a
 * failure to start (a store down, a bad filter) becomes an error answer rather than an
 * empty or truncated export; then yields the first row and the rest.
 */
export async function primed<T>(rows: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const it = rows[Symbol.asyncIterator]();
  const first = await it.next();
  return {
    [Symbol.asyncIterator]: () => {
      let pending: IteratorResult<T> | undefined = first;
      return {
        next: () => {
          if (pending === undefined) return it.next();
          const r = pending;
          pending = undefined;
          return Promise.resolve(r);
        },
        return: async (value?: unknown) => (await it.return?.(value)) ?? { done: true as const, value: undefined },
      };
    },
  };
}

/**
 * Affected ids in the tenant's terms: turn ids carry their conversation's namespace
 * ("<tenant>.<conversation>:<index>"), which the generic id mapping (`mapOut`, by key name)
 * does not know to strip inside this list. Ids of other kinds are unchanged.
 */
export function withExternalAffected(ns: TenantNamespace, r: AuditRow): AuditRow {
  return { ...r, affectedIds: r.affectedIds.map((id) => ns.toExternal(id)) };
}
