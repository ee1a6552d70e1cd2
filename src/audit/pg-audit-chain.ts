import { createHash } from 'node:crypto';
import type pg from 'pg';
import QueryStream from 'pg-query-stream';
import type { AuditChain, ChainBreak, ChainReport } from './contract';

// -> every day's chain head (sql/007, sql/011) oldest day first, with the link hash and seal its fields give now, the
// genesis of a day opened before sql/011 (version 1), and whether its partition is still there
const HEADS = `SELECT to_char(h.day, 'YYYY-MM-DD') AS day, h.seq, h.last_hash, h.last_id, h.version, h.link_no,
    to_char(h.prev_day, 'YYYY-MM-DD') AS prev_day, h.prev_seq, h.prev_hash, h.link, h.seal,
    audit_chain_link_hash(h.day, h.prev_day, h.prev_seq, h.prev_hash) AS expected_link,
    audit_chain_seal(audit_chain_link_hash(h.day, h.prev_day, h.prev_seq, h.prev_hash), h.seq, h.last_hash) AS expected_seal,
    audit_chain_genesis(h.day) AS day_genesis,
    to_regclass('memory_audit_log_p' || to_char(h.day, 'YYYYMMDD')) IS NOT NULL AS present
  FROM audit_chain_heads h ORDER BY h.day`;
// -> {through}: the last day retention dropped (YYYY-MM-DD), as its chained audit_retention records name it; null: none
const DROPPED_THROUGH = "SELECT max(metadata ->> 'droppedThrough') AS through FROM memory_audit_log WHERE operation = 'audit_retention'";
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
  version: number;
  link_no: string;
  prev_day: string | null;
  prev_seq: string | null;
  prev_hash: Buffer | null;
  link: Buffer;
  seal: Buffer;
  expected_link: Buffer;
  expected_seal: Buffer;
  day_genesis: Buffer;
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

/** What one verification has learnt so far, across days. */
interface Walk {
  report: ChainReport;
  redactions: Map<string, Redaction>;
  erasures: Map<string, { rows: number; at: number }>;
  /** Per day, the positions later-opened days link to: position -> (hash expected there, the day that links). */
  linkedAt: Map<string, Map<number, { hash: Buffer; from: string }>>;
}

/**
 * The verifier of the audit hash chain (sql/007, sql/011). Reads in one REPEATABLE READ
 * snapshot, so rows being written meanwhile are either fully in (row and head) or not at
 * all, and streams each day's rows through a cursor: memory stays bounded by the number of
 * days and redactions, not rows. Within a day, a row's link is sha256(previous row_hash ||
 * content_hash), the first row linking to the day's genesis; the content digest is computed
 * by Postgres (one canonical form). Across days, each head links to the head opened before it
 * (its link hash, which is the genesis of days opened since sql/011) and is sealed
 * (audit_chain_seal): a removed day, a cut tail or a head moved back no longer links.
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
    const droppedThrough = (await client.query<{ through: string | null }>(DROPPED_THROUGH)).rows[0]?.through ?? null;
    const report: ChainReport = { ok: true, rowsChecked: 0, daysChecked: 0, redactedRows: 0, droppedThrough, firstBreak: null };
    const fail = (b: ChainBreak): ChainReport => ({ ...report, ok: false, firstBreak: b });
    const heads = (await client.query<HeadRow>(HEADS)).rows;
    const byDay = new Map(heads.map((h) => [h.day, h]));
    const walked = heads.filter((h) => since === null || h.day >= since);
    for (const head of walked) {
      const broken = headProblem(head, byDay, droppedThrough);
      if (broken) return fail(dayBreak(head.day, null, broken));
    }
    const headless = (await client.query<{ day: string }>(HEADLESS_DAYS, [since])).rows[0];
    const walk: Walk = { report, redactions: new Map(), erasures: new Map(), linkedAt: linkTargets(walked, byDay, since) };
    for (const head of walked) {
      if (headless && headless.day < head.day) return fail(dayBreak(headless.day, null, 'the day holds audit rows but has no chain head'));
      if (!head.present) continue; // dropped by retention (headProblem checked that a retention record covers it)
      report.daysChecked += 1;
      const broken = await this.checkDay(client, head, walk);
      if (broken) return fail(broken);
    }
    if (headless) return fail(dayBreak(headless.day, null, 'the day holds audit rows but has no chain head'));
    const unmatched = redactionProblem(walk);
    return unmatched ? fail(unmatched) : report;
  }

  /** Walks one day's chain from its genesis to its head; returns its first break, or null. */
  private async checkDay(client: pg.PoolClient, head: HeadRow, walk: Walk): Promise<ChainBreak | null> {
    const linked = walk.linkedAt.get(head.day);
    let prev = genesisOf(head);
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
        const linkedHere = linked?.get(seq);
        if (linkedHere && !linkedHere.hash.equals(prev)) {
          return dayBreak(linkedHere.from, null, `the day links to position ${seq} of day ${head.day} (row ${row.id}), whose hash there is another: day ${head.day} was rewritten`);
        }
        walk.report.rowsChecked += 1;
        noteRedaction(row, at, walk);
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

/** A break of a whole day (its head or its link), not of one row. */
function dayBreak(day: string, seq: number | null, reason: string): ChainBreak {
  return { day, id: null, timestamp: null, seq, reason };
}

/** Where a day's first row links to: the day's link hash (opened since sql/011), else the day's own genesis (sql/007). */
function genesisOf(head: HeadRow): Buffer {
  return head.version === 1 ? head.day_genesis : head.expected_link;
}

/**
 * Why a day's head does not verify on its own and against the head it links to, or null:
 * its link hash and seal recomputed from its fields, its partition (gone only by retention),
 * and the day it links to (there, or dropped by retention; the position within its end).
 */
function headProblem(head: HeadRow, byDay: Map<string, HeadRow>, droppedThrough: string | null): string | null {
  const retained = (day: string) => droppedThrough !== null && day <= droppedThrough;
  if (!head.link.equals(head.expected_link)) return "the day's chain head was changed: its link to the day before no longer gives its link hash";
  if (!head.seal.equals(head.expected_seal)) {
    return "the day's chain head was changed: its position and last hash no longer match its seal (rows deleted from the end of the day and the head moved back, or the head edited)";
  }
  if (!head.present && !retained(head.day)) {
    return `the day's partition is gone, but retention dropped ${droppedThrough ? `only the days through ${droppedThrough}` : 'no day'}: it was dropped outside retention`;
  }
  if (head.prev_day === null) return Number(head.link_no) === 1 ? null : `the day links to no day before it, but it is not the first day opened (it is number ${head.link_no})`;
  const prev = byDay.get(head.prev_day);
  if (!prev) return retained(head.prev_day) ? null : `the day links to day ${head.prev_day}, whose chain head is missing: day ${head.prev_day} was removed (its rows and its head)`;
  const at = Number(head.prev_seq);
  if (at > Number(prev.seq)) return `the day links to position ${at} of day ${prev.day}, past its end (${prev.seq}): rows were deleted from the end of day ${prev.day} and its head moved back`;
  if (at === 0 && !head.prev_hash!.equals(genesisOf(prev))) return `the day links to the start of day ${prev.day}, whose genesis is another: day ${prev.day} was rewritten`;
  if (!prev.present && at === Number(prev.seq) && !head.prev_hash!.equals(prev.last_hash)) return `the day links to the end of day ${prev.day}, whose last hash is another`;
  return null;
}

/** The positions within walked days that the walked heads link to (checked as those days' rows are read). */
function linkTargets(walked: HeadRow[], byDay: Map<string, HeadRow>, since: string | null): Walk['linkedAt'] {
  const targets: Walk['linkedAt'] = new Map();
  for (const head of walked) {
    const prev = head.prev_day === null ? undefined : byDay.get(head.prev_day);
    if (!prev?.present || (since !== null && prev.day < since) || Number(head.prev_seq) === 0) continue;
    const at = targets.get(prev.day) ?? new Map<number, { hash: Buffer; from: string }>();
    at.set(Number(head.prev_seq), { hash: head.prev_hash!, from: head.day });
    targets.set(prev.day, at);
  }
  return targets;
}

/** Counts a redacted row under its redaction, or notes an erasure record's redaction. */
function noteRedaction(row: ChainRow, at: Omit<ChainBreak, 'reason'>, walk: Walk): void {
  if (row.redacted_at) {
    walk.report.redactedRows += 1;
    const key = row.redacted_at.toISOString();
    const r = walk.redactions.get(key) ?? { rows: 0, first: { ...at, reason: '' }, latest: 0 };
    r.rows += 1;
    r.latest = Math.max(r.latest, row.timestamp.getTime());
    walk.redactions.set(key, r);
  } else if (row.erasure && typeof row.erasure.auditRedactedAt === 'string') {
    walk.erasures.set(new Date(row.erasure.auditRedactedAt).toISOString(), { rows: Number(row.erasure.auditRowsRedacted ?? 0), at: row.timestamp.getTime() });
  }
}

/** The first redaction no erasure record covers (none, beyond its count, or newer than it), or null. */
function redactionProblem(walk: Walk): ChainBreak | null {
  for (const [at, r] of walk.redactions) {
    const erasure = walk.erasures.get(at);
    if (!erasure) return { ...r.first, reason: `the row is redacted (at ${at}) but no erasure record (forget_user) names that redaction` };
    if (r.rows > erasure.rows) return { ...r.first, reason: `${r.rows} rows are redacted at ${at} but its erasure record names ${erasure.rows}` };
    if (r.latest > erasure.at) return { ...r.first, reason: `a row redacted at ${at} is newer than its erasure record` };
  }
  return null;
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
