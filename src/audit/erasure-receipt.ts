import type pg from 'pg';
import { z } from 'zod';
import { TenantNamespace } from '../access';
import { ValidationError } from '../errors';
import type { ChainReport, ErasureReceipt, ErasureRecordRow } from './contract';
import { PgAuditChain } from './pg-audit-chain';

const HEX_HASH = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits (a sha256)');
const COUNT = z.number().int().nonnegative();

/** A receipt as a reviewer hands it back: checked field by field, so a damaged file says what is wrong. */
const ReceiptSchema = z.strictObject({
  kind: z.literal('mnemograph.erasure-receipt'),
  version: z.literal(1),
  recordId: z.string().regex(/^\d+$/, 'expected the audit row id (digits)'),
  recordedAt: z.iso.datetime(),
  day: z.iso.date(),
  chainSeq: z.number().int().positive(),
  contentHash: HEX_HASH,
  rowHash: HEX_HASH,
  userId: z.string().min(1),
  tenantId: z.string().min(1).optional(),
  counts: z.record(z.string(), z.union([COUNT, z.record(z.string(), COUNT)])),
});

/**
 * The receipt of an erasure record. Throws ValidationError when the row is not a chained
 * `forget_user` record (the chain trigger fills chain_seq and the hashes on insert).
 */
export function erasureReceipt(row: ErasureRecordRow): ErasureReceipt {
  if (row.operation !== 'forget_user') throw new ValidationError(`audit row ${row.id} is a ${row.operation} row, not an erasure record (forget_user)`, { id: row.id });
  if (row.chain_seq === null || !row.content_hash || !row.row_hash || !row.user_id) {
    throw new ValidationError(`the erasure record ${row.id} is not chained (no chain position or hashes): was it written with the chain trigger disabled?`, { id: row.id });
  }
  return {
    kind: 'mnemograph.erasure-receipt',
    version: 1,
    recordId: String(row.id),
    recordedAt: row.timestamp.toISOString(),
    day: row.timestamp.toISOString().slice(0, 10),
    chainSeq: Number(row.chain_seq),
    contentHash: row.content_hash.toString('hex'),
    rowHash: row.row_hash.toString('hex'),
    userId: row.user_id,
    counts: erasureCounts(row.metadata ?? {}),
  };
}

/** The counts of an erasure report: its numbers and its maps of numbers (rows per table), nothing else. */
export function erasureCounts(report: Record<string, unknown>): ErasureReceipt['counts'] {
  const counts: ErasureReceipt['counts'] = {};
  for (const [kind, value] of Object.entries(report)) {
    if (typeof value === 'number') counts[kind] = value;
    else if (isCountMap(value)) counts[kind] = value;
  }
  return counts;
}

function isCountMap(v: unknown): v is Record<string, number> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((n) => typeof n === 'number');
}

/** Parses a receipt from its JSON text; a ValidationError names what is wrong with it. */
export function parseErasureReceipt(text: string): ErasureReceipt {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`the receipt is not JSON: ${(err as Error).message}`);
  }
  const parsed = ReceiptSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(receipt)', message: i.message }));
    throw new ValidationError(`the receipt is not a Mnemograph erasure receipt: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  return parsed.data;
}

export interface ReceiptReport {
  ok: boolean;
  /** Why the receipt does not hold (the record, its hashes or its counts); null when it does, or when only the chain breaks. */
  problem: string | null;
  /** The chain from the record's day on; null when the record itself did not match. */
  chain: ChainReport | null;
}

// $1 id, $2 day -> the row with that id on that UTC day, with the digest of its content as stored now (sql/007)
const RECORD = `SELECT l.id, l.timestamp, l.operation, l.chain_seq, l.content_hash, l.row_hash, l.user_id, l.metadata, audit_content_digest(to_jsonb(l)) AS digest
  FROM memory_audit_log l
  WHERE l.id = $1 AND l.timestamp >= ($2::date::timestamp AT TIME ZONE 'UTC') AND l.timestamp < (($2::date + 1)::timestamp AT TIME ZONE 'UTC')`;

/**
 * Checks a receipt against the chain: the record is there on its day, its content still
 * gives its content hash, its position and hashes are the receipt's, its counts are the
 * receipt's, and the chain from its day on verifies (`PgAuditChain.verify(day)`: later days
 * link back to it, so the record cannot be cut out without breaking them).
 */
export async function verifyErasureReceipt(pool: pg.Pool, receipt: ErasureReceipt): Promise<ReceiptReport> {
  const row = (await pool.query<ErasureRecordRow & { digest: Buffer }>(RECORD, [receipt.recordId, receipt.day])).rows[0];
  const problem = row ? recordProblem(row, receipt) : `no audit row ${receipt.recordId} on ${receipt.day}: the erasure record was deleted (or the receipt is of another database)`;
  if (problem) return { ok: false, problem, chain: null };
  const chain = await new PgAuditChain(pool).verify(receipt.day);
  return { ok: chain.ok, problem: null, chain };
}

/** Why the stored row is not the record the receipt names, or null. */
function recordProblem(row: ErasureRecordRow & { digest: Buffer }, receipt: ErasureReceipt): string | null {
  if (row.operation !== 'forget_user') return `audit row ${row.id} is a ${row.operation} row, not an erasure record`;
  if (!row.content_hash || !row.digest.equals(row.content_hash)) return `the erasure record ${row.id} was changed after it was written (its content no longer matches its content hash)`;
  const stored = erasureReceipt(row);
  // A receipt from the API names the user as its tenant knows them.
  const named = { ...receipt, userId: receipt.tenantId ? new TenantNamespace(receipt.tenantId).toInternal(receipt.userId, 'userId') : receipt.userId };
  for (const field of ['chainSeq', 'contentHash', 'rowHash', 'recordedAt', 'userId'] as const) {
    if (stored[field] !== named[field]) return `the erasure record's ${field} is ${stored[field]}, the receipt's ${named[field]}: the record was rewritten, or the receipt edited`;
  }
  if (JSON.stringify(sorted(stored.counts)) !== JSON.stringify(sorted(receipt.counts))) return "the receipt's counts are not the erasure record's: the receipt was edited";
  return null;
}

/** The counts with their keys in order, for comparing two of them. */
function sorted(counts: ErasureReceipt['counts']): unknown {
  return Object.fromEntries(
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, typeof v === 'number' ? v : Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))]),
  );
}
