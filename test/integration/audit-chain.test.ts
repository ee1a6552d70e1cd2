import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { PgAuditChain, PgAuditLogger, PgAuditTrail, withActor, type ChainReport } from '../../src/audit';
import { createLogger } from '../../src/infra/logger';
import { createPgPool } from '../../src/infra/postgres';
import { scratchDatabase, scratchDatabaseBefore, type ScratchDatabase } from '../support/scratch-database';

/**
 * The audit log's hash chain (sql/007) on databases of their own (each test breaks its log on
 * purpose): `audit verify` passes on a clean log, names the row an SQL UPDATE changed and the
 * row after one an SQL DELETE removed, still passes after an erasure redacted a user's rows,
 * refuses a redaction no erasure record covers, and concurrent writers never fork a chain.
 */
const ROOT = join(__dirname, '..', '..');
const exec = promisify(execFile);
const silent = createLogger('silent');
const DAY_MS = 86_400_000;

/** `mnemograph audit verify` against `url`: exit code and output. */
async function cliVerify(url: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const env = { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: url, DATABASE_READ_URL: url };
  try {
    const r = await exec(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'src', 'cli', 'main.ts'), 'audit', 'verify', ...args], { cwd: ROOT, env, timeout: 90_000 });
    return { code: 0, out: r.stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

function logger(pool: pg.Pool, batchSize = 50): PgAuditLogger {
  return new PgAuditLogger(
    pool,
    { level: 'verbose', spoolDir: mkdtempSync(join(tmpdir(), 'mnemograph-chain-')), database: 'scratch', configSnapshot: { recall: { weights: [0.5, 0.25] } }, batchSize, flushIntervalMs: 60_000 },
    silent,
  );
}

/** `n` varied rows through the logger (unicode, floats, nested metadata), for users `u0..u4`. */
async function writeRows(pool: pg.Pool, n: number, prefix = 'u'): Promise<void> {
  const log = logger(pool);
  withActor({ tenantId: 'acme', keyId: 'k1', agentId: 'planner', surface: 'http', requestId: 'req-1' }, () => {
    for (let i = 0; i < n; i++) {
      const userId = `acme.${prefix}${i % 5}`;
      if (i % 3 === 0)
        log.logRead({
          operation: 'remember',
          memoryType: 'system',
          userId,
          channel: 'proj',
          query: `wo wohnt Zoë? ${i} 🌍`,
          channelsSearched: ['proj', '_global'],
          resultCount: 2,
          latencyMs: 3.4,
          affectedIds: [`c:${i}`, 'f1'],
        });
      else if (i % 7 === 0)
        log.logPromotion({
          userId,
          factId: `f${i}`,
          newFactId: `g${i}`,
          sourceChannel: 'proj',
          reason: 'thresholds',
          confidence: 0.1 + i / 1000,
          accessCount: i,
          conversationCount: 2,
          thresholds: { confidence: 0.85 },
        });
      else
        log.logWrite({
          operation: 'store',
          memoryType: 'episodic',
          userId,
          channel: 'proj',
          conversationId: `c${i}`,
          affectedIds: [`c${i}:0`],
          payload: { content: `turn ${i}`, nested: { b: [1, 2.5, null], a: 'ä' } },
        });
    }
  });
  await log.close();
}

async function verify(db: ScratchDatabase, since?: string): Promise<ChainReport> {
  return new PgAuditChain(db.pool, { batchSize: 64 }).verify(since);
}

describe('audit verify on a clean log, after an UPDATE and after a DELETE', () => {
  let db: ScratchDatabase;
  beforeAll(async () => {
    db = await scratchDatabase('mnemograph_chain');
  });
  afterAll(async () => db.drop());

  it('passes on a clean log of two days', async () => {
    await writeRows(db.pool, 200);
    // Yesterday's rows, inserted after today's: each day has its own chain.
    await db.pool.query(
      "INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id) SELECT now() - interval '1 day' + i * interval '1 ms', 'store', 'episodic', 'acme.y' FROM generate_series(1, 20) i",
    );
    const r = await verify(db);
    expect(r).toEqual({ ok: true, rowsChecked: 220, daysChecked: 2, redactedRows: 0, droppedThrough: null, firstBreak: null });
    const today = new Date().toISOString().slice(0, 10);
    expect((await verify(db, today)).rowsChecked).toBe(200);
    const cli = await cliVerify(db.url);
    expect(cli).toEqual({ code: 0, out: expect.stringContaining('audit chain intact: 220 rows in 2 days checked') });
  });

  it('names the row an UPDATE changed, and passes again once it is put back', async () => {
    const target = (await db.pool.query<{ id: string; query_text: string }>("SELECT id, query_text FROM memory_audit_log WHERE operation = 'remember' ORDER BY id OFFSET 10 LIMIT 1")).rows[0]!;
    await db.pool.query("UPDATE memory_audit_log SET query_text = 'nothing to see' WHERE id = $1", [target.id]);
    const r = await verify(db);
    expect(r.ok).toBe(false);
    expect(r.firstBreak).toMatchObject({ id: target.id, reason: expect.stringMatching(/changed after it was written/) });
    const cli = await cliVerify(db.url);
    expect(cli.code).toBe(1);
    expect(cli.out).toContain(`audit chain BROKEN at row ${target.id} `);
    await db.pool.query('UPDATE memory_audit_log SET query_text = $2 WHERE id = $1', [target.id, target.query_text]);
    expect((await verify(db)).ok).toBe(true);
    // A change to the actor is caught the same way.
    await db.pool.query("UPDATE memory_audit_log SET agent_id = 'someone-else' WHERE id = $1", [target.id]);
    expect((await verify(db)).firstBreak).toMatchObject({ id: target.id });
    await db.pool.query("UPDATE memory_audit_log SET agent_id = 'planner' WHERE id = $1", [target.id]);
    expect((await verify(db)).ok).toBe(true);
  });

  it('names the row after one a DELETE removed', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const rows = (await db.pool.query<{ id: string }>("SELECT id FROM memory_audit_log WHERE (timestamp AT TIME ZONE 'UTC')::date = $1::date ORDER BY chain_seq", [today])).rows;
    await db.pool.query('DELETE FROM memory_audit_log WHERE id = $1', [rows[50]!.id]);
    const r = await verify(db);
    expect(r.firstBreak).toMatchObject({ day: today, id: rows[51]!.id, seq: 52, reason: expect.stringMatching(/missing \(deleted\)/) });
    const cli = await cliVerify(db.url);
    expect(cli.code).toBe(1);
    expect(cli.out).toContain(`audit chain BROKEN at row ${rows[51]!.id} `);
  });
});

describe('the end of a day, concurrent writers, erasure', () => {
  let db: ScratchDatabase;
  beforeAll(async () => {
    db = await scratchDatabase('mnemograph_chain');
  });
  afterAll(async () => db.drop());

  it('two pools writing at once extend one chain per day, never a fork', async () => {
    const other = createPgPool(db.url, 8);
    try {
      const single = (pool: pg.Pool, w: number) =>
        Promise.all(
          Array.from({ length: 6 }, async (_, c) => {
            for (let i = 0; i < 40; i++) await pool.query("INSERT INTO memory_audit_log (operation, memory_type, user_id) VALUES ('store', 'episodic', $1)", [`acme.w${w}-${c}`]);
          }),
        );
      await Promise.all([writeRows(db.pool, 600, 'a'), writeRows(other, 600, 'b'), single(db.pool, 1), single(other, 2)]);
    } finally {
      await other.end();
    }
    const forks = await db.pool.query("SELECT (timestamp AT TIME ZONE 'UTC')::date AS day, chain_seq FROM memory_audit_log GROUP BY 1, 2 HAVING count(*) > 1");
    expect(forks.rows).toEqual([]);
    const r = await verify(db);
    expect(r).toMatchObject({ ok: true, rowsChecked: 600 + 600 + 2 * 6 * 40 });
  });

  it('still passes after an erasure redacted a user, and drops late rows without advancing the chain', async () => {
    const trail = new PgAuditTrail(db.pool);
    const before = Number((await db.pool.query("SELECT count(*) AS n FROM memory_audit_log WHERE user_id = 'acme.a1'")).rows[0].n);
    expect(before).toBeGreaterThan(0);
    // What UserDataStore.erase does: record the erasure, redact, write the erasure record naming the redaction.
    await db.pool.query("INSERT INTO user_erasures (user_id, erased_at) VALUES ('acme.a1', now())");
    const at = new Date();
    const redacted = await trail.redactUserRows('acme.a1', at);
    expect(redacted).toBe(before);
    await withActor({ tenantId: 'acme', keyId: 'k-admin', surface: 'http', requestId: 'req-erase' }, () =>
      trail.recordUserErased('acme.a1', { userId: 'acme.a1', auditRowsRedacted: redacted, auditRedactedAt: at.toISOString() }),
    );
    const left = await db.pool.query(
      "SELECT count(*) AS n FROM memory_audit_log WHERE redacted_at IS NOT NULL AND (user_id IS NOT NULL OR query_text IS NOT NULL OR affected_ids IS NOT NULL OR metadata <> '{}')",
    );
    expect(left.rows[0].n).toBe('0');
    const erasure = await db.pool.query("SELECT surface, tenant_id, key_id, request_id FROM memory_audit_log WHERE operation = 'forget_user' AND user_id = 'acme.a1'");
    expect(erasure.rows).toEqual([{ surface: 'http', tenant_id: 'acme', key_id: 'k-admin', request_id: 'req-erase' }]);
    // A row about the erased user from before the erasure, arriving late, is dropped (sql/005) and the chain does not move.
    const head = async () => (await db.pool.query('SELECT sum(seq)::int AS n FROM audit_chain_heads')).rows[0].n as number;
    const seq = await head();
    await db.pool.query("INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id) VALUES (now() - interval '1 minute', 'recall', 'episodic', 'acme.a1')");
    expect(await head()).toBe(seq);
    const r = await verify(db);
    expect(r).toMatchObject({ ok: true, redactedRows: before });
  });

  it('refuses a redaction no erasure record covers (an edit passed off as an erasure)', async () => {
    const target = (await db.pool.query<{ id: string }>("SELECT id FROM memory_audit_log WHERE user_id = 'acme.b2' ORDER BY id LIMIT 1")).rows[0]!;
    await db.pool.query("UPDATE memory_audit_log SET query_text = NULL, metadata = '{}', redacted_at = now() WHERE id = $1", [target.id]);
    const r = await verify(db);
    expect(r.firstBreak).toMatchObject({ id: target.id, reason: expect.stringMatching(/no erasure record/) });
  });

  it('names the day when rows are deleted from its end', async () => {
    // A fresh day (tomorrow) so the break above does not come first.
    const tomorrow = new Date(Date.now() + DAY_MS).toISOString().slice(0, 10);
    await db.pool.query(
      "INSERT INTO memory_audit_log (timestamp, operation, memory_type) SELECT $1::date + interval '1 hour' + i * interval '1 ms', 'store', 'episodic' FROM generate_series(1, 5) i",
      [tomorrow],
    );
    expect((await verify(db, tomorrow)).ok).toBe(true);
    await db.pool.query("DELETE FROM memory_audit_log WHERE (timestamp AT TIME ZONE 'UTC')::date = $1::date AND chain_seq = 5", [tomorrow]);
    const r = await verify(db, tomorrow);
    expect(r.firstBreak).toMatchObject({ day: tomorrow, seq: 4, reason: expect.stringMatching(/head names 5 rows/) });
  });
});

describe('sql/007 on a log that already has rows', () => {
  let db: ScratchDatabase;
  afterAll(async () => db?.drop());

  it('chains the rows written before it, per day in id order, and new rows after them', async () => {
    const old = await scratchDatabaseBefore('mnemograph_chain', '007');
    db = old;
    await db.pool.query(
      "INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id, tenant_id) SELECT now() - (i % 2) * interval '1 day', 'store', 'episodic', 'acme.u' || i, 'acme' FROM generate_series(1, 30) i",
    );
    await old.migrateRest();
    await writeRows(db.pool, 10);
    expect(await verify(db)).toMatchObject({ ok: true, rowsChecked: 40, daysChecked: 2 });
  });
});
