import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createPgPool } from '../../src/infra/postgres';
import { REPO_ROOT, runMigrations } from '../../src/migrate';
import { loadMigrations, retired } from '../../src/migrate/files';
import { stackStatus } from '../../src/stack';
import { eventually, openStack, testConfig, uid, type TestStack } from '../support/stack';

let s: TestStack;
beforeAll(() => {
  s = openStack();
});
afterAll(async () => s.close());

/** What the Cypher migrations leave in place: every object created and not retired by a later file. */
function cypherObjects(): string[] {
  const files = loadMigrations(join(REPO_ROOT, 'cypher'), 'cypher', { EMBEDDING_DIMENSIONS: testConfig().embedding.dimensions });
  const gone = retired(files);
  return files.flatMap((m) => m.objects).filter((o) => !gone.has(o));
}

function cli(args: string[], env: Record<string, string> = {}) {
  const res = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), [join(REPO_ROOT, 'src', 'cli', 'main.ts'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr.trim() };
}

describe('schema after migrate', () => {
  it('has every constraint and index in Neo4j, online, with the configured vector dimension', async () => {
    const rows = await s.neo4j.read<{ name: string; type: string; state: string; dims: number | null }>(
      "SHOW INDEXES YIELD name, type, state, options RETURN name, type, state, options.indexConfig['vector.dimensions'] AS dims",
      {},
      { subsystem: 'test', op: 'indexes' },
    );
    const constraints = await s.neo4j.read<{ name: string }>('SHOW CONSTRAINTS YIELD name RETURN name', {}, { subsystem: 'test', op: 'constraints' });
    const names = new Set([...rows.map((r) => r.name), ...constraints.map((r) => r.name)]);
    for (const object of cypherObjects()) expect(names).toContain(object);
    const byName = new Map(rows.map((r) => [r.name, r]));
    for (const v of ['turn_embeddings', 'entity_embeddings', 'fact_embeddings', 'strategy_embeddings', 'goal_embeddings']) {
      expect(byName.get(v)).toMatchObject({ type: 'VECTOR', dims: testConfig().embedding.dimensions });
    }
    for (const f of ['turn_content_fulltext', 'fact_text_scoped', 'entity_text_scoped', 'strategy_text_scoped']) expect(byName.get(f)?.type).toBe('FULLTEXT');
    expect(rows.filter((r) => r.state !== 'ONLINE').map((r) => r.name)).toEqual([]);
  });

  it('finds what one user owns through an index on every user-owned label, not a label scan', async () => {
    const operators = (p: { operatorType: string; children: unknown[] }): string[] => [p.operatorType, ...p.children.flatMap((c) => operators(c as typeof p))];
    const session = s.driver.session();
    try {
      for (const label of ['Turn', 'Conversation', 'Entity', 'Fact', 'Goal', 'Strategy', 'ToolInvocation']) {
        const res = await session.run(`EXPLAIN MATCH (n:${label}) WHERE n.user_id = $userId RETURN n`, { userId: 'anyone' });
        const ops = operators(res.summary.plan as unknown as { operatorType: string; children: unknown[] }).join(' ');
        expect(`${label}: ${ops}`).toMatch(/NodeIndexSeek/);
        expect(`${label}: ${ops}`).not.toMatch(/NodeByLabelScan/);
      }
    } finally {
      await session.close();
    }
  });

  it('has the Postgres tables, the BRIN and btree indexes, and today’s and future audit partitions', async () => {
    const tables = await s.pg.query<{ relname: string }>("SELECT relname FROM pg_class WHERE relkind IN ('r','p') AND relnamespace = 'public'::regnamespace");
    const tableNames = tables.rows.map((r) => r.relname);
    expect(tableNames).toEqual(expect.arrayContaining(['conversation_logs', 'memory_timeline', 'tool_invocations', 'user_profiles', 'memory_audit_log', 'schema_version', 'user_erasures']));
    const trigger = await s.pg.query("SELECT 1 FROM pg_trigger WHERE tgname = 'audit_drop_erased' AND tgrelid = 'memory_audit_log'::regclass");
    expect(trigger.rowCount).toBe(1);
    const idx = await s.pg.query<{ indexname: string; indexdef: string }>("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'");
    const def = new Map(idx.rows.map((r) => [r.indexname, r.indexdef]));
    expect(def.get('idx_logs_timestamp')).toMatch(/USING brin/);
    expect(def.get('idx_logs_conversation')).toMatch(/USING btree/);
    expect(def.get('idx_logs_channel')).toMatch(/USING btree/);
    const partitioned = await s.pg.query<{ partstrat: string }>("SELECT partstrat FROM pg_partitioned_table WHERE partrelid = 'memory_audit_log'::regclass");
    expect(partitioned.rows[0]?.partstrat).toBe('r');
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
    for (const offset of [0, 1, s.config.audit.partitionDaysAhead]) expect(tableNames).toContain(`memory_audit_log_p${day(offset)}`);
    // a row written now lands in today's partition
    const id = uid('audit');
    await s.pg.query("INSERT INTO memory_audit_log (operation, memory_type, user_id) VALUES ('store', 'episodic', $1)", [id]);
    const where = await s.pg.query<{ part: string }>('SELECT tableoid::regclass::text AS part FROM memory_audit_log WHERE user_id = $1', [id]);
    expect(where.rows[0]?.part).toBe(`memory_audit_log_p${day(0)}`);
    // The row stays: deleting it would break its day's hash chain (sql/007), which `audit verify` reports.
  });

  it('a second migrate changes nothing', async () => {
    const reports = await runMigrations({ neo4j: s.neo4j, pg: s.pg, config: s.config }, { check: false });
    for (const r of reports)
      expect({ store: r.store, applied: r.applied, notes: r.notes, missing: r.missing, changed: r.changed }).toEqual({ store: r.store, applied: [], notes: [], missing: [], changed: [] });
    const check = await runMigrations({ neo4j: s.neo4j, pg: s.pg, config: s.config }, { check: true });
    expect(check.flatMap((r) => [...r.pending, ...r.missing, ...r.changed])).toEqual([]);
  });
});

describe('drift', () => {
  it('--check reports a dropped Neo4j index and migrate recreates it', async () => {
    await s.neo4j.write('DROP INDEX goal_status IF EXISTS', {}, { subsystem: 'test', op: 'drop' });
    try {
      const out = cli(['migrate', '--check']);
      expect(out.code).toBe(1);
      expect(out.stdout).toMatch(/neo4j: missing goal_status/);
    } finally {
      const out = cli(['migrate']);
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/recreated goal_status/);
    }
    expect(cli(['migrate', '--check']).code).toBe(0);
  });

  it('recreates a dropped index by its own statement, not the indexes a later migration retired', async () => {
    // 003 created turn_content_fulltext and three unscoped indexes that 006 dropped.
    await s.neo4j.write('DROP INDEX turn_content_fulltext IF EXISTS', {}, { subsystem: 'test', op: 'drop' });
    const out = cli(['migrate']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/recreated turn_content_fulltext$/m);
    const states = async () =>
      new Map((await s.neo4j.read<{ name: string; state: string }>('SHOW INDEXES YIELD name, state RETURN name, state', {}, { subsystem: 'test', op: 'indexes' })).map((r) => [r.name, r.state]));
    await eventually(async () => (await states()).get('turn_content_fulltext') === 'ONLINE', 'turn_content_fulltext online again', 60_000);
    const names = await states();
    for (const retired of ['fact_claim_fulltext', 'entity_text_fulltext', 'strategy_text_fulltext']) expect(names.has(retired)).toBe(false);
    expect(cli(['migrate', '--check']).code).toBe(0);
  });

  it('--check reports a dropped Postgres index', async () => {
    const def = (await s.pg.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_timeline_importance'")).rows[0]!.indexdef;
    await s.pg.query('DROP INDEX idx_timeline_importance');
    try {
      const check = await runMigrations({ neo4j: s.neo4j, pg: s.pg, config: s.config }, { check: true });
      expect(check.find((r) => r.store === 'postgres')?.missing).toEqual(['idx_timeline_importance']);
    } finally {
      await s.pg.query(def);
    }
  });

  it('refuses a Postgres schema newer than the code, in a schema of its own', async () => {
    const schema = `mig_${uid('s').replace(/-/g, '_')}`;
    await s.pg.query(`CREATE SCHEMA ${schema}`);
    const pool = createPgPool(s.config.postgres.url, 2);
    pool.on('connect', (client) => void client.query(`SET search_path TO ${schema}`));
    try {
      const first = await runMigrations({ neo4j: s.neo4j, pg: pool, config: s.config }, { check: false });
      const sqlFiles = loadMigrations(join(REPO_ROOT, 'sql'), 'sql', { AUDIT_PARTITION_DAYS_AHEAD: 7 });
      expect(first.find((r) => r.store === 'postgres')?.applied).toEqual(sqlFiles.map((f) => `${String(f.version).padStart(3, '0')}_${f.name}`));
      await pool.query("INSERT INTO schema_version (version, description, checksum) VALUES (999, 'from the future', 'x')");
      await expect(runMigrations({ neo4j: s.neo4j, pg: pool, config: s.config }, { check: false })).rejects.toThrow(/newer than this code \(migration 999/);
    } finally {
      await pool.end();
      await s.pg.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it('refuses a Neo4j schema newer than the code', async () => {
    await s.neo4j.write('CREATE (:SchemaMigration {version: 998, name: "future", checksum: "x"})', {}, { subsystem: 'test', op: 'future' });
    try {
      await expect(runMigrations({ neo4j: s.neo4j, pg: s.pg, config: s.config }, { check: true })).rejects.toThrow(/Neo4j schema is newer than this code/);
    } finally {
      await s.neo4j.write('MATCH (m:SchemaMigration {version: 998}) DELETE m', {}, { subsystem: 'test', op: 'future' });
    }
  });

  it('refuses an embedding model with another dimension', async () => {
    const other = { ...s.config, embedding: { ...s.config.embedding, provider: 'openai' as const, model: 'text-embedding-3-small', dimensions: 1536 } };
    await expect(runMigrations({ neo4j: s.neo4j, pg: s.pg, config: other }, { check: true })).rejects.toThrow(
      new RegExp(`${testConfig().embedding.model} \\(${testConfig().embedding.dimensions}-d\\).*1536-d.*reindex`),
    );
  });
});

describe('health and bad connection settings', () => {
  it('stack status sees all three stores', async () => {
    const statuses = await stackStatus(s.config);
    expect(statuses.map((x) => [x.store, x.up])).toEqual([
      ['neo4j', true],
      ['postgres', true],
      ['redis', true],
    ]);
    expect(cli(['stack', 'status']).code).toBe(0);
  });

  it('a command against an unmigrated database names the migrations and the command to run, and creates nothing', async () => {
    const db = `mg_unmigrated_${uid('d').replace(/-/g, '_')}`;
    await s.pg.query(`CREATE DATABASE ${db}`);
    const url = new URL(s.config.postgres.url);
    url.pathname = `/${db}`;
    try {
      const out = cli(['stats'], { DATABASE_URL: url.toString() });
      expect(out.code).toBe(1);
      expect(out.stderr.split('\n')).toHaveLength(1);
      expect(out.stderr).toMatch(/^mnemograph: SCHEMA_MISMATCH: the databases are not migrated: \d+ migration\(s\) pending \(postgres 001_initial, .*\); run `mnemograph migrate`/);
      const pool = createPgPool(url.toString(), 1);
      try {
        expect((await pool.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'")).rows[0].n).toBe(0);
      } finally {
        await pool.end();
      }
    } finally {
      await s.pg.query(`DROP DATABASE ${db}`);
    }
  });

  it.each([
    [{ NEO4J_URI: 'bolt//127.0.0.1:7687' }, /^mnemograph: CONFIG_INVALID: NEO4J_URI: .*Fix: set NEO4J_URI/],
    [{ NEO4J_PASSWORD: 'not-the-password' }, /^mnemograph: STORE_UNAVAILABLE: .*rejected the credentials; fix NEO4J_USER \/ NEO4J_PASSWORD$/],
    [{ NEO4J_DATABASE: 'nosuchdb' }, /^mnemograph: STORE_UNAVAILABLE: Neo4j database "nosuchdb" does not exist; fix NEO4J_DATABASE/],
    [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/no_such_database_x' }, /^mnemograph: STORE_UNAVAILABLE: .*does not exist; .*fix DATABASE_URL$/],
    [{ NEO4J_URI: 'bolt://127.0.0.1:1' }, /^mnemograph: STORE_UNAVAILABLE: Neo4j at bolt:\/\/127.0.0.1:1 is unreachable .*NEO4J_URI$/],
  ])('migrate with %j fails with one line naming the setting', (env, expected) => {
    const out = cli(['migrate'], env);
    expect(out.code).toBe(1);
    expect(out.stderr.split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(expected);
  });
});
