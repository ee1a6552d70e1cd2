import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import { parseErasureReceipt, PgAuditChain, verifyErasureReceipt, type ChainReport, type ReceiptReport } from '../audit';
import { ValidationError } from '../errors';
import { createPgPool } from '../infra/postgres';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `mnemograph audit verify [--since YYYY-MM-DD]`: recomputes every audit row's content digest
 * and link (sql/007) and names the first row that breaks its day's chain (exit 1); otherwise
 * prints how many rows and days it checked (exit 0). PostgreSQL only.
 */
export async function auditVerifyCommand(config: Config, opts: { since?: string }): Promise<number> {
  if (opts.since !== undefined && (!DAY.test(opts.since) || Number.isNaN(Date.parse(`${opts.since}T00:00:00Z`)))) {
    throw new ValidationError(`invalid --since "${opts.since}": give a UTC day as YYYY-MM-DD`, { issues: [{ path: 'since', message: 'expected YYYY-MM-DD' }] });
  }
  const pool = createPgPool(config.postgres.url, 1);
  try {
    const report = await new PgAuditChain(pool).verify(opts.since);
    for (const line of describeChainReport(report)) console.log(line);
    return report.ok ? 0 : 1;
  } finally {
    await pool.end();
  }
}

/**
 * `mnemograph audit verify-receipt <file|->`: checks an erasure receipt (JSON, from a file or
 * stdin) against the chain: its record is there, unchanged, with the receipt's position,
 * hashes and counts, and the chain from its day on verifies. Exit 0 when it holds, 1 when not;
 * a file that is no receipt is a ValidationError naming what is wrong.
 */
export async function auditVerifyReceiptCommand(config: Config, source: string): Promise<number> {
  const receipt = parseErasureReceipt(readReceipt(source));
  const pool = createPgPool(config.postgres.url, 1);
  try {
    const report = await verifyErasureReceipt(pool, receipt);
    for (const line of describeReceiptReport(report, receipt.recordId)) console.log(line);
    return report.ok ? 0 : 1;
  } finally {
    await pool.end();
  }
}

/** The receipt's text: stdin for `-`, else the file (a missing file is a ValidationError). */
function readReceipt(source: string): string {
  try {
    return readFileSync(source === '-' ? 0 : source, 'utf8');
  } catch (err) {
    throw new ValidationError(`cannot read the receipt ${source === '-' ? 'from stdin' : `file ${source}`}: ${(err as Error).message}`, { source });
  }
}

/** The receipt check as the command prints it. */
export function describeReceiptReport(r: ReceiptReport, recordId: string): string[] {
  if (r.problem) return [`erasure receipt NOT confirmed: ${r.problem}`];
  const chain = describeChainReport(r.chain!);
  return r.ok
    ? [`erasure receipt confirmed: record ${recordId} is in the chain as the receipt says`, ...chain]
    : [`erasure receipt NOT confirmed: the chain from the record's day on is broken`, ...chain];
}

/** The report as the command prints it. */
export function describeChainReport(r: ChainReport): string[] {
  const dropped = r.droppedThrough ? `; days through ${r.droppedThrough} dropped by retention` : '';
  const counted = `${r.rowsChecked} rows in ${r.daysChecked} days checked (${r.redactedRows} redacted by erasures)${dropped}`;
  if (r.ok) return [`audit chain intact: ${counted}`];
  const b = r.firstBreak!;
  const row = b.id === null ? `day ${b.day} (its chain head)` : `row ${b.id} at ${b.timestamp ?? '?'} (day ${b.day}, chain position ${b.seq ?? '?'})`;
  return [`audit chain BROKEN at ${row}: ${b.reason}`, `before it: ${counted}`];
}
