import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { PgAuditLogger } from '../../src/audit';
import { createLogger } from '../../src/infra/logger';
import { createPgPool } from '../../src/infra/postgres';
import { openService, outage, type Service } from '../load/scenarios';
import { privatePostgres, type StoreControl } from '../load/stores';
import { testConfig } from '../support/stack';

/*
 * The fault suite's PostgreSQL stop/start (test/load/restarts.test.ts), short form for
 * `npm test`: the service's own PostgreSQL (a private cluster) really stopped and started
 * under concurrent writers, and every acknowledged turn must have exactly one audit row.
 * Beside it runs what every checkout has: another process's audit logger, on another
 * database, with the same spool folder (AUDIT_SPOOL_DIR under the checkout's data
 * directory), flushing as a server or worker does; the rows the service spools while its
 * PostgreSQL is away are its own to replay.
 */
jest.setTimeout(180_000);
const spoolDir = mkdtempSync(join(tmpdir(), 'mnemograph-restart-spool-'));
let store: StoreControl;
let svc: Service;
let neighbourPool: pg.Pool;
let neighbour: PgAuditLogger;
beforeAll(async () => {
  store = await privatePostgres();
  svc = await openService({ ...store.env, AUDIT_SPOOL_DIR: spoolDir });
  const other = testConfig().postgres.url;
  neighbourPool = createPgPool(other, 2);
  neighbour = new PgAuditLogger(neighbourPool, { level: 'writes', spoolDir, database: other, configSnapshot: {}, flushIntervalMs: 50 }, createLogger('silent'));
});
afterAll(async () => {
  await neighbour?.close();
  await neighbourPool?.end();
  await svc?.close();
  await store?.close();
});

it('a PostgreSQL stop/start beside another process: every acknowledged turn has its one audit row', async () => {
  const r = await outage(svc, store, { writers: 4, beforeMs: 800, downMs: 1_500, afterMs: 800 });
  expect(r.status_5xx_not_503).toBe(0);
  expect(r.time_to_recover_ms).not.toBeNull();
  expect(r.ledger).toMatchObject({ lost_in_neo4j: 0, without_postgres_row: 0, without_audit_row: 0, audited_more_than_once: 0, turns_in_neo4j_without_row: 0 });
  expect(r.ledger.acknowledged).toBeGreaterThan(5);
});
