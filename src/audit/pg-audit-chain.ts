import { createHash } from 'node:crypto';
import type pg from 'pg';
import QueryStream from 'pg-query-stream';
import type { AuditChain, ChainBreak, ChainReport } from './contract';

// $1 first day (null: all) -> {day, seq, last_hash, last_id, genesis, present}: each day's chain head (sql/007), oldest first
const HEADS = `SELECT to_char(h.day, 'YYYY-MM-DD') AS day, h.seq, h.last_hash, h.last_id, audit_chain_genesis(h.day) AS genesis,
    to_regclass('memory_audit_log_p' || to_char(h.day, 'YYYYMMDD')) IS NOT NULL AS present
  FROM audit_chain_heads h WHERE $1::date IS NULL OR h.day >= $1::date ORDER BY h.day`;
// $1 first day (null: all) -> {day}: days whose partition holds rows but which have no chain head
const HEADLESS_DAYS = `SELECT to_char(d, 'YYYY-MM-DD') AS day FROM (
    SELECT DISTINCT (timestamp AT TIME ZONE 'UTC')::date AS d FROM memory_audit_log WHERE $1::date IS NULL OR timestamp >= ($1::date::timestamp AT TIME ZONE 'UTC')
  ) days WHERE NOT EXISTS (SELECT 1 FROM audit_chain_heads h WHERE h.day = days.d) ORDER BY d`;
// $1 day -> the day's rows in chain order, with the digest of their content as stored now (sql/007 audit_content_digest)
const DAY_ROWS = `SELECT l.id, l.timestamp, l.chain_seq, l.content_hash, l.row_hash, l.redacted_at, audit_content_digest(to_jsonb(l)) AS digest,
    CASE WHEN l.operation = 'forget_user' THEN l.metadata END AS erasure
  FROM memory_audit_log l
  WHERE l.timestamp >= ($1::date::timestamp AT TIME ZONE 'UTC') AND l.timestamp < (($1::date + 1)::timestamp AT TIME ZONE 'UTC')
  ORDER BY l.chain_seq NULLS FIRST, l.id`;

interface HeadRow {
  day: string;
  seq: string;
  last_hash: Buffer;
  last_id: string | null;
  genesis: Buffer;
  present: boolean;
}

interface ChainRow {
  id: string;
  timestamp: Date;
  chain_seq: string | null;
  content_hash: Buffer | null;
  row_hash: Buffer | null;
  redacted_at: Date | null;
  digest: Buffer;
  erasure: { auditRedactedAt?: unknown; auditRowsRedacted?: unknown } | null;
}

/** The redacted rows of one redaction (one forget-user run), as far as the check has read. */
interface Redaction {
  rows: number;
  first: ChainBreak;
  latest: number;
}

/**
 * The verifier of sql/007's hash chain. Reads in one REPEATABLE READ snapshot, so rows
 * being written meanwhile are either fully in (row and head) or not at all, and streams
 * each day's rows through a cursor: memory stays bounded by the number of redactions, not
 * rows. The link is sha256(previous row_hash || content_hash), the day's first row linking
 * to `audit_chain_genesis(day)`; the content digest is computed by Postgres (one canonical form).
 */
export class PgAuditChain implements AuditChain {
  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: { batchSize?: number } = {},
  ) {}

  async verify(since?: string): Promise<ChainReport> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const report = await this.check(client, since ?? null);
      await client.query('COMMIT');
      return report;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private async check(client: pg.PoolClient, since: string | null): Promise<ChainReport> {
    const report: ChainReport = { ok: true, rowsChecked: 0, daysChecked: 0, redactedRows: 0, firstBreak: null };
    const fail = (b: ChainBreak): ChainReport => ({ ...report, ok: false, firstBreak: b });
    const headless = (await client.query<{ day: string }>(HEADLESS_DAYS, [since])).rows[0];
    const redactions = new Map<string, Redaction>();
    const erasures = new Map<string, { rows: number; at: number }>();
    for (const head of (await client.query<HeadRow>(HEADS, [since])).rows) {
      if (headless && headless.day < head.day) return fail({ day: headless.day, id: null, timestamp: null, seq: null, reason: 'the day holds audit rows but has no chain head' });
      if (!head.present) continue; // partition dropped by retention (audit_partitions job)
      report.daysChecked += 1;
      const broken = await this.checkDay(client, head, report, redactions, erasures);
      if (broken) return fail(broken);
    }
    if (headless) return fail({ day: headless.day, id: null, timestamp: null, seq: null, reason: 'the day holds audit rows but has no chain head' });
    for (const [at, r] of redactions) {
      const erasure = erasures.get(at);
      if (!erasure) return fail({ ...r.first, reason: `the row is redacted (at ${at}) but no erasure record (forget_user) names that redaction` });
      if (r.rows > erasure.rows) return fail({ ...r.first, reason: `${r.rows} rows are redacted at ${at} but its erasure record names ${erasure.rows}` });
      if (r.latest > erasure.at) return fail({ ...r.first, reason: `a row redacted at ${at} is newer than its erasure record` });
    }
    return report;
  }

  /** Walks one day's chain; returns its first break, or null. */
  private async checkDay(
    client: pg.PoolClient,
    head: HeadRow,
    report: ChainReport,
    redactions: Map<string, Redaction>,
    erasures: Map<string, { rows: number; at: number }>,
  ): Promise<ChainBreak | null> {
    let prev = head.genesis;
    let seq = 0;
    let lastId: string | null = null;
    const stream = client.query(new QueryStream(DAY_ROWS, [head.day], { batchSize: this.opts.batchSize ?? 2_000 }));
    try {
      for await (const raw of stream) {
        const row = raw as ChainRow;
        const at = { day: head.day, id: row.id, timestamp: row.timestamp.toISOString(), seq: row.chain_seq === null ? null : Number(row.chain_seq) };
        const reason = linkProblem(row, prev, seq + 1);
        if (reason) return { ...at, reason };
        seq += 1;
        prev = row.row_hash!;
        lastId = row.id;
        report.rowsChecked += 1;
        if (row.redacted_at) {
          report.redactedRows += 1;
          const key = row.redacted_at.toISOString();
          const r = redactions.get(key) ?? { rows: 0, first: { ...at, reason: '' }, latest: 0 };
          r.rows += 1;
          r.latest = Math.max(r.latest, row.timestamp.getTime());
          redactions.set(key, r);
        } else if (row.erasure && typeof row.erasure.auditRedactedAt === 'string') {
          erasures.set(new Date(row.erasure.auditRedactedAt).toISOString(), { rows: Number(row.erasure.auditRowsRedacted ?? 0), at: row.timestamp.getTime() });
        }
      }
    } finally {
      stream.destroy();
    }
    if (seq !== Number(head.seq) || !prev.equals(head.last_hash)) {
      return {
        day: head.day,
        id: lastId,
        timestamp: null,
        seq,
        reason: `the day's chain head names ${head.seq} rows ending at row ${head.last_id ?? '?'}, but the chain ends at position ${seq}${lastId ? ` (row ${lastId})` : ''}: rows were deleted from the end of the day, or the head was changed`,
      };
    }
    return null;
  }
}

/** Why `row` does not extend a chain ending in `prev` at position `seq`, or null when it does. */
export function linkProblem(row: Pick<ChainRow, 'chain_seq' | 'content_hash' | 'row_hash' | 'redacted_at' | 'digest'>, prev: Buffer, seq: number): string | null {
  if (row.content_hash === null || row.row_hash === null || row.chain_seq === null) return 'the row is not chained (written with the chain trigger disabled)';
  const at = Number(row.chain_seq);
  if (at > seq) return `rows at chain positions ${seq}..${at - 1} of the day are missing (deleted)`;
  if (at < seq) return `the row repeats chain position ${at} (inserted or moved)`;
  if (!row.redacted_at && !row.digest.equals(row.content_hash)) return 'the row was changed after it was written (its content no longer matches its content hash)';
  if (!chainLink(prev, row.content_hash).equals(row.row_hash)) return 'the row does not link to the previous row of its day (a row before it was deleted or changed, or its hash was)';
  return null;
}

/** row_hash = sha256(previous row_hash || content_hash), as sql/007's trigger computes it. */
export function chainLink(prev: Buffer, contentHash: Buffer): Buffer {
  return createHash('sha256').update(prev).update(contentHash).digest();
}
