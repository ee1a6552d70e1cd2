import { PgAuditChain, PgAuditTrail, withActor, type ChainReport } from '../../src/audit';
import { scratchDatabase, scratchDatabaseBefore, type ScratchDatabase } from '../support/scratch-database';

/**
 * The days of the audit chain linked to each other (sql/011), on databases of their own: with
 * no outside anchor, `audit verify` finds a whole day removed with its head, a day's last row
 * removed with its head moved back by one UPDATE (and, with the head's seal recomputed too,
 * through the next day's link), a middle day's partition dropped by hand; a retention drop
 * (the audit_partitions job's function) still verifies; chains from before sql/011 are linked.
 */
const DAY_MS = 86_400_000;

/** The UTC day `n` days before the test started (YYYY-MM-DD); the tests write only past days, so midnight does not move them. */
const started = Date.now();
const daysAgo = (n: number) => new Date(started - n * DAY_MS).toISOString().slice(0, 10);

/** `n` rows on `day` (an hour into it, 1 ms apart), oldest first: the day's chain opens at its first row. */
async function writeDay(db: ScratchDatabase, day: string, n: number): Promise<void> {
  await db.pool.query(
    "INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id) SELECT $1::date + interval '1 hour' + i * interval '1 ms', 'store', 'episodic', 'acme.u' || i FROM generate_series(1, $2::int) i ORDER BY i",
    [day, n],
  );
}

/** Partitions for the last `days` days, and `rows` rows on each of days `from`..1 ago, opened oldest first. */
async function writeDays(db: ScratchDatabase, from: number, rows: number): Promise<void> {
  await db.pool.query('SELECT ensure_audit_partitions($1::date, $2::int)', [daysAgo(from + 2), from + 2]);
  for (let n = from; n >= 1; n--) await writeDay(db, daysAgo(n), rows);
}

async function verify(db: ScratchDatabase, since?: string): Promise<ChainReport> {
  return new PgAuditChain(db.pool, { batchSize: 16 }).verify(since);
}

/** Deletes a whole day: its rows and its chain head. */
async function removeDay(db: ScratchDatabase, day: string): Promise<void> {
  await db.pool.query("DELETE FROM memory_audit_log WHERE (timestamp AT TIME ZONE 'UTC')::date = $1::date", [day]);
  await db.pool.query('DELETE FROM audit_chain_heads WHERE day = $1::date', [day]);
}

/** Deletes a day's last row and moves its head back onto the row before, with one UPDATE (`reseal`: and recomputes the seal). */
async function cutLastRow(db: ScratchDatabase, day: string, reseal = false): Promise<void> {
  await db.pool.query("DELETE FROM memory_audit_log l USING audit_chain_heads h WHERE h.day = $1::date AND (l.timestamp AT TIME ZONE 'UTC')::date = h.day AND l.chain_seq = h.seq", [day]);
  await db.pool.query(
    `UPDATE audit_chain_heads h SET seq = l.chain_seq, last_hash = l.row_hash, last_id = l.id${reseal ? ', seal = audit_chain_seal(h.link, l.chain_seq, l.row_hash)' : ''}
     FROM memory_audit_log l WHERE h.day = $1::date AND (l.timestamp AT TIME ZONE 'UTC')::date = h.day AND l.chain_seq = h.seq - 1`,
    [day],
  );
}

describe('a day removed, a day cut short, a head moved back', () => {
  let db: ScratchDatabase;
  beforeEach(async () => {
    db = await scratchDatabase('mnemograph_days');
    await writeDays(db, 4, 6);
    expect(await verify(db)).toMatchObject({ ok: true, rowsChecked: 24, daysChecked: 4 });
  });
  afterEach(async () => db.drop());

  it('finds a whole day deleted with its chain head, the days before and after kept', async () => {
    await removeDay(db, daysAgo(2));
    const r = await verify(db);
    expect(r.ok).toBe(false);
    expect(r.firstBreak).toMatchObject({ day: daysAgo(1), id: null, reason: expect.stringContaining(`day ${daysAgo(2)} was removed (its rows and its head)`) });
  });

  it("finds a day's last row deleted and its head moved back by one UPDATE, in the middle and on the newest day", async () => {
    await cutLastRow(db, daysAgo(3));
    expect((await verify(db)).firstBreak).toMatchObject({ day: daysAgo(3), id: null, reason: expect.stringMatching(/no longer match its seal/) });
    await cutLastRow(db, daysAgo(1));
    expect((await verify(db, daysAgo(1))).firstBreak).toMatchObject({ day: daysAgo(1), reason: expect.stringMatching(/no longer match its seal/) });
  });

  it('finds a cut tail whose head was resealed too, by the next day linking past its end', async () => {
    await cutLastRow(db, daysAgo(3), true);
    const r = await verify(db);
    expect(r.firstBreak).toMatchObject({ day: daysAgo(2), reason: expect.stringContaining(`links to position 6 of day ${daysAgo(3)}, past its end (5)`) });
  });

  it("finds a day relinked to skip a removed day (the relinked day's rows no longer start at its link)", async () => {
    await removeDay(db, daysAgo(3));
    // Relink the next day to the day before the removed one, with a correct link hash and seal.
    await db.pool.query(
      `UPDATE audit_chain_heads h SET prev_day = p.day, prev_seq = p.seq, prev_hash = p.last_hash, link_no = h.link_no - 1,
         link = audit_chain_link_hash(h.day, p.day, p.seq, p.last_hash), seal = audit_chain_seal(audit_chain_link_hash(h.day, p.day, p.seq, p.last_hash), h.seq, h.last_hash)
       FROM audit_chain_heads p WHERE h.day = $1::date AND p.day = $2::date`,
      [daysAgo(2), daysAgo(4)],
    );
    const r = await verify(db);
    expect(r.firstBreak).toMatchObject({ day: daysAgo(2), seq: 1, reason: expect.stringMatching(/does not link to the previous row/) });
  });

  it("finds a middle day's partition dropped by hand", async () => {
    await db.pool.query(`DROP TABLE memory_audit_log_p${daysAgo(2).replace(/-/g, '')}`);
    const r = await verify(db);
    expect(r.firstBreak).toMatchObject({ day: daysAgo(2), id: null, reason: expect.stringMatching(/partition is gone, but retention dropped no day/) });
  });

  it('verifies days opened out of order (a late first row of an earlier day) and still finds that day removed', async () => {
    await db.pool.query('SELECT ensure_audit_partitions($1::date, 1)', [daysAgo(8)]);
    await writeDay(db, daysAgo(8), 3); // opened after yesterday: it links to yesterday's head
    expect(await verify(db)).toMatchObject({ ok: true, rowsChecked: 27, daysChecked: 5 });
    await writeDay(db, daysAgo(1), 2); // yesterday grows past the point day -8 links to
    expect((await verify(db)).ok).toBe(true);
    await removeDay(db, daysAgo(1));
    expect((await verify(db)).firstBreak).toMatchObject({ day: daysAgo(8), reason: expect.stringContaining(`day ${daysAgo(1)} was removed`) });
  });
});

describe('retention', () => {
  let db: ScratchDatabase;
  beforeEach(async () => {
    db = await scratchDatabase('mnemograph_days');
    await writeDays(db, 6, 4);
    // AUDIT_RETENTION_DAYS 3 from the test's start: the days 4 or more days ago go (and the empty ones before).
    const dropped = await withActor({ surface: 'worker', job: 'audit_partitions', runId: 7 }, () => new PgAuditTrail(db.pool).dropPartitionsBefore(3));
    expect(dropped).toBeGreaterThanOrEqual(3);
  });
  afterEach(async () => db.drop());

  it('a clean chain with a retention drop verifies, and the drop is a chained record of the actor', async () => {
    const record = await db.pool.query("SELECT metadata, surface, job_name, job_run_id FROM memory_audit_log WHERE operation = 'audit_retention'");
    expect(record.rows).toEqual([{ metadata: expect.objectContaining({ droppedThrough: daysAgo(4), retentionDays: 3 }), surface: 'worker', job_name: 'audit_partitions', job_run_id: '7' }]);
    expect(await verify(db)).toMatchObject({ ok: true, daysChecked: 4, rowsChecked: 3 * 4 + 1, droppedThrough: daysAgo(4) });
    // An operator may clear the heads of dropped days: the oldest kept day's link is then the accepted start.
    await db.pool.query('DELETE FROM audit_chain_heads WHERE day <= $1::date', [daysAgo(4)]);
    expect((await verify(db)).ok).toBe(true);
  });

  it("still finds a kept day's partition dropped by hand", async () => {
    await db.pool.query(`DROP TABLE memory_audit_log_p${daysAgo(2).replace(/-/g, '')}`);
    expect((await verify(db)).firstBreak).toMatchObject({ day: daysAgo(2), reason: expect.stringContaining(`retention dropped only the days through ${daysAgo(4)}`) });
  });

  it('still finds a kept day removed with its head', async () => {
    await removeDay(db, daysAgo(2));
    expect((await verify(db)).firstBreak).toMatchObject({ day: daysAgo(1), reason: expect.stringContaining(`day ${daysAgo(2)} was removed`) });
  });

  it('finds the retention record deleted: the dropped days are then unexplained', async () => {
    await db.pool.query("DELETE FROM memory_audit_log WHERE operation = 'audit_retention'");
    expect((await verify(db)).firstBreak).toMatchObject({ day: daysAgo(6), reason: expect.stringContaining('retention dropped no day') });
  });
});

describe('sql/011 on chains written before it', () => {
  let db: ScratchDatabase;
  afterAll(async () => db?.drop());

  it('links the days already chained in day order, so a day removed from them is found', async () => {
    const old = await scratchDatabaseBefore('mnemograph_days', '011');
    db = old;
    await db.pool.query('SELECT ensure_audit_partitions($1::date, 7)', [daysAgo(6)]);
    for (const n of [2, 4, 3, 1]) await writeDay(db, daysAgo(n), 5); // sql/007's chains: one per day, unlinked
    await old.migrateRest();
    const heads = await db.pool.query("SELECT to_char(day, 'YYYY-MM-DD') AS day, link_no::int, version FROM audit_chain_heads ORDER BY link_no");
    expect(heads.rows).toEqual([4, 3, 2, 1].map((n, i) => ({ day: daysAgo(n), link_no: i + 1, version: 1 })));
    await writeDay(db, daysAgo(5), 2); // a day opened after the migration: version 2, linked to the last day linked
    expect(await verify(db)).toMatchObject({ ok: true, rowsChecked: 22, daysChecked: 5 });
    await removeDay(db, daysAgo(3));
    expect((await verify(db)).firstBreak).toMatchObject({ day: daysAgo(2), reason: expect.stringContaining(`day ${daysAgo(3)} was removed`) });
  });
});
