import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { erasureReceipt, PgAuditTrail, verifyErasureReceipt, withActor, type ErasureReceipt } from '../../src/audit';
import { ValidationError } from '../../src/errors';
import { scratchDatabase, type ScratchDatabase } from '../support/scratch-database';

/**
 * The receipt of a forget-user (src/audit/erasure-receipt.ts) on a database of its own: the
 * erasure record yields it, `mnemograph audit verify-receipt` confirms it from a file or stdin,
 * and refuses it once the record is changed or deleted, the chain after it is cut, or the
 * receipt is edited; a file that is no receipt gets an error naming what is wrong.
 */
const ROOT = join(__dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'mnemograph-receipt-'));

/** `mnemograph audit verify-receipt <source>` against `url` (stdin: `input`): exit code and output. */
function cliVerifyReceipt(url: string, source: string, input?: string): Promise<{ code: number | null; out: string }> {
  const env = { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: url, DATABASE_READ_URL: url };
  const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'src', 'cli', 'main.ts'), 'audit', 'verify-receipt', source], { cwd: ROOT, env });
  let out = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stdin.end(input ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

/** The receipt written to a file of its own; returns the path. */
function receiptFile(name: string, receipt: unknown): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, typeof receipt === 'string' ? receipt : JSON.stringify(receipt, null, 2));
  return file;
}

describe('the erasure receipt', () => {
  let db: ScratchDatabase;
  let receipt: ErasureReceipt;
  beforeAll(async () => {
    db = await scratchDatabase('mnemograph_receipt');
    await db.pool.query(
      "INSERT INTO memory_audit_log (operation, memory_type, user_id, query_text) SELECT 'remember', 'system', 'acme.alice', 'where does Alice live? ' || i FROM generate_series(1, 5) i",
    );
    const trail = new PgAuditTrail(db.pool);
    const at = new Date();
    const redacted = await trail.redactUserRows('acme.alice', at);
    // The report as UserDataStore.erase writes it.
    const report = {
      userId: 'acme.alice',
      nodesDeleted: 12,
      rowsDeleted: { conversation_logs: 4, tool_invocations: 1 },
      redisKeysDeleted: 3,
      auditRowsRedacted: redacted,
      auditRedactedAt: at.toISOString(),
    };
    receipt = await withActor({ tenantId: 'acme', keyId: 'k-admin', surface: 'http', requestId: 'req-erase' }, () => trail.recordUserErased('acme.alice', report));
    await db.pool.query("INSERT INTO memory_audit_log (operation, memory_type, user_id) VALUES ('store', 'episodic', 'acme.bob'), ('store', 'episodic', 'acme.bob')");
  });
  afterAll(async () => db.drop());

  it("names the record's place in the chain and the report's counts, never its text", async () => {
    const row = (await db.pool.query("SELECT id, chain_seq, encode(row_hash, 'hex') AS row_hash FROM memory_audit_log WHERE operation = 'forget_user'")).rows[0];
    expect(receipt).toEqual({
      kind: 'mnemograph.erasure-receipt',
      version: 1,
      recordId: row.id,
      recordedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      day: receipt.recordedAt.slice(0, 10),
      chainSeq: Number(row.chain_seq),
      contentHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      rowHash: row.row_hash,
      userId: 'acme.alice',
      counts: { nodesDeleted: 12, rowsDeleted: { conversation_logs: 4, tool_invocations: 1 }, redisKeysDeleted: 3, auditRowsRedacted: 5 },
    });
    expect(() => erasureReceipt({ id: '1', timestamp: new Date(), operation: 'store', chain_seq: 1, content_hash: null, row_hash: null, user_id: 'u', metadata: {} })).toThrow(ValidationError);
  });

  it('is confirmed from a file and from stdin', async () => {
    const file = await cliVerifyReceipt(db.url, receiptFile('good', receipt));
    expect(file).toEqual({ code: 0, out: expect.stringContaining(`erasure receipt confirmed: record ${receipt.recordId} is in the chain`) });
    expect(file.out).toContain('audit chain intact: 8 rows in 1 days checked (5 redacted by erasures)');
    expect(await cliVerifyReceipt(db.url, '-', JSON.stringify(receipt))).toMatchObject({ code: 0 });
  });

  it('refuses an edited receipt, and a file that is no receipt with what is wrong', async () => {
    const edited = await cliVerifyReceipt(db.url, receiptFile('edited', { ...receipt, counts: { ...receipt.counts, nodesDeleted: 1 } }));
    expect(edited).toEqual({ code: 1, out: expect.stringContaining("the receipt's counts are not the erasure record's") });
    expect(await cliVerifyReceipt(db.url, receiptFile('text', 'erased, trust me'))).toEqual({ code: 1, out: expect.stringContaining('VALIDATION_FAILED: the receipt is not JSON') });
    const { rowHash: _, ...partial } = receipt;
    expect((await cliVerifyReceipt(db.url, receiptFile('partial', { ...partial, chainSeq: 'one' }))).out).toMatch(/not a Mnemograph erasure receipt: chainSeq: .*; rowHash: /);
    expect((await cliVerifyReceipt(db.url, join(dir, 'missing.json'))).out).toContain(`cannot read the receipt file ${join(dir, 'missing.json')}`);
  });

  it('refuses it once the record is changed, the chain after it cut, or the record deleted', async () => {
    await db.pool.query('UPDATE memory_audit_log SET metadata = metadata || \'{"nodesDeleted": 0}\' WHERE id = $1', [receipt.recordId]);
    expect(await verifyErasureReceipt(db.pool, receipt)).toMatchObject({ ok: false, problem: expect.stringMatching(/changed after it was written/) });
    await db.pool.query('UPDATE memory_audit_log SET metadata = metadata || \'{"nodesDeleted": 12}\' WHERE id = $1', [receipt.recordId]);
    expect(await verifyErasureReceipt(db.pool, receipt)).toMatchObject({ ok: true });

    await db.pool.query('DELETE FROM memory_audit_log WHERE chain_seq = $1::bigint + 1', [receipt.chainSeq]);
    const cut = await cliVerifyReceipt(db.url, receiptFile('good', receipt));
    expect(cut).toEqual({ code: 1, out: expect.stringContaining("erasure receipt NOT confirmed: the chain from the record's day on is broken") });
    expect(cut.out).toMatch(/audit chain BROKEN at row \d+ .*missing \(deleted\)/);

    await db.pool.query('DELETE FROM memory_audit_log WHERE id = $1', [receipt.recordId]);
    expect(await verifyErasureReceipt(db.pool, receipt)).toMatchObject({ ok: false, problem: expect.stringContaining(`no audit row ${receipt.recordId} on ${receipt.day}`) });
  });
});
