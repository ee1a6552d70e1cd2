import pg from 'pg';
import { createPgPool } from '../../src/infra/postgres';
import { runPostgresMigrations } from '../../src/migrate';
import { withDatabase } from '../../src/stack/services';
import { openStack, uid, type TestStack } from '../support/stack';

/**
 * The SQL side for reviewers (sql/008): the views read the audit log with readable columns,
 * and mnemograph_reviewer reads those views and nothing else (no table, no write, no DDL).
 * The role is cluster-wide: a second database migrates with it already there. Privileges are
 * checked by acting as the role (SET ROLE) on one connection, which needs no LOGIN.
 */
let s: TestStack;
let client: pg.PoolClient;
const tenant = uid('sqlrev').slice(0, 20).toLowerCase();

beforeAll(async () => {
  s = openStack();
  client = await s.pg.connect();
  await client.query("SELECT ensure_audit_partitions((now() AT TIME ZONE 'UTC')::date - 1, 3)");
  await client.query(
    `INSERT INTO memory_audit_log (tenant_id, key_id, agent_id, surface, request_id, operation, memory_type, user_id, conversation_id, source_channel, target_channels, affected_ids, query_text, result_count, success)
     VALUES ($1, 'abcabcabcabc', 'planner', 'http', 'r1', 'remember', 'episodic', $2, $3, 'support', '{support,_global}', $4, 'where does she live', 2, TRUE),
            ($1, 'abcabcabcabc', NULL, 'cli', 'r2', 'forget_user', 'system', $2, NULL, NULL, NULL, '{}', NULL, NULL, TRUE),
            ($1, 'abcabcabcabc', NULL, 'http', 'r3', 'store_fact', 'semantic', $2, $3, 'support', '{support}', '{f1}', NULL, NULL, TRUE)`,
    [tenant, `${tenant}.alice`, `${tenant}.c1`, [`${tenant}.c1:0`, 'f9']],
  );
});
afterAll(async () => {
  await client.query('RESET ROLE').catch(() => undefined);
  client.release();
  await s.close();
});

/** Runs `sql` as mnemograph_reviewer; the error code if it fails (42501: insufficient privilege). */
async function asReviewer(sql: string): Promise<{ rows: Record<string, unknown>[] } | { code: string }> {
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL ROLE mnemograph_reviewer');
    const r = await client.query(sql);
    return { rows: r.rows };
  } catch (err) {
    return { code: (err as { code: string }).code };
  } finally {
    await client.query('ROLLBACK');
  }
}

describe('reviewer views and role', () => {
  it('exists, cannot log in until the operator says so, and reads the three views', async () => {
    const role = (await client.query<{ rolcanlogin: boolean; rolsuper: boolean }>("SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'mnemograph_reviewer'")).rows[0];
    expect(role).toEqual({ rolcanlogin: false, rolsuper: false });
    const events = await asReviewer(`SELECT operation, user_id, internal_user_id, conversation_id, api_key_id, agent_id, surface FROM audit_events WHERE tenant_id = '${tenant}' ORDER BY event_id`);
    expect(events).toEqual({
      rows: [
        { operation: 'remember', user_id: 'alice', internal_user_id: `${tenant}.alice`, conversation_id: 'c1', api_key_id: 'abcabcabcabc', agent_id: 'planner', surface: 'http' },
        { operation: 'forget_user', user_id: 'alice', internal_user_id: `${tenant}.alice`, conversation_id: null, api_key_id: 'abcabcabcabc', agent_id: null, surface: 'cli' },
        { operation: 'store_fact', user_id: 'alice', internal_user_id: `${tenant}.alice`, conversation_id: 'c1', api_key_id: 'abcabcabcabc', agent_id: null, surface: 'http' },
      ],
    });
    const recalls = await asReviewer(`SELECT agent_id, user_id, channels_searched, query_text, result_count, returned_ids FROM audit_recalls WHERE tenant_id = '${tenant}'`);
    expect(recalls).toEqual({
      rows: [{ agent_id: 'planner', user_id: 'alice', channels_searched: ['support', '_global'], query_text: 'where does she live', result_count: 2, returned_ids: [`${tenant}.c1:0`, 'f9'] }],
    });
    const erasures = await asReviewer(`SELECT user_id, api_key_id, surface FROM audit_erasures WHERE tenant_id = '${tenant}'`);
    expect(erasures).toEqual({ rows: [{ user_id: 'alice', api_key_id: 'abcabcabcabc', surface: 'cli' }] });
  });

  it('cannot read the base table, a partition or any other table, and cannot write or create anything', async () => {
    const partition = (await client.query<{ relname: string }>("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'memory_audit_log'::regclass LIMIT 1"))
      .rows[0]!.relname;
    const tables = (await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT LIKE 'memory_audit_log_p%'")).rows.map(
      (r) => r.tablename,
    );
    expect(tables).toEqual(expect.arrayContaining(['memory_audit_log', 'api_keys', 'tenants', 'conversation_logs', 'user_erasures', 'schema_version']));
    for (const t of [...tables, partition]) expect({ t, r: await asReviewer(`SELECT 1 FROM ${pg.escapeIdentifier(t)} LIMIT 1`) }).toEqual({ t, r: { code: '42501' } });
    const writes = [
      "INSERT INTO audit_events (operation, memory_type) VALUES ('x', 'system')",
      'UPDATE audit_events SET operation = operation',
      'DELETE FROM audit_erasures',
      "INSERT INTO memory_audit_log (operation, memory_type) VALUES ('x', 'system')",
      'DELETE FROM memory_audit_log',
      'TRUNCATE memory_audit_log',
      'CREATE TABLE reviewer_scratch (a int)',
      'CREATE VIEW reviewer_view AS SELECT 1',
      'DROP VIEW audit_events',
      'SELECT drop_old_audit_partitions(0)',
    ];
    for (const sql of writes) expect({ sql, r: await asReviewer(sql) }).toEqual({ sql, r: { code: '42501' } });
  });

  it('a second database migrates with the role already there, and grants it the views there too', async () => {
    const url = withDatabase(s.config.postgres.url, `mnemograph_role_${Date.now()}`);
    const db = new URL(url).pathname.slice(1);
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(db)}`);
    const pool = createPgPool(url, 2); // ignores the termination of idle clients by the DROP below
    try {
      const report = await runPostgresMigrations(pool, s.config, { check: false });
      expect(report.applied).toContain('008_audit_review');
      const grants = await pool.query<{ table_name: string }>("SELECT table_name FROM information_schema.role_table_grants WHERE grantee = 'mnemograph_reviewer' ORDER BY 1");
      expect(grants.rows.map((r) => r.table_name)).toEqual(['audit_erasures', 'audit_events', 'audit_recalls']);
      expect((await runPostgresMigrations(pool, s.config, { check: true })).missing).toEqual([]);
    } finally {
      await pool.end();
      await client.query(`DROP DATABASE ${pg.escapeIdentifier(db)} WITH (FORCE)`);
    }
  }, 120_000);
});
