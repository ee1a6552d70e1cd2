import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createMnemograph, type Mnemograph } from '../../src/container';
import type { ExportLine, UserDataStore } from '../../src/tenancy';
import { testConfig, uid } from '../support/stack';
import { userScope } from '../../src/access';

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);
/** Runs the real `mnemograph` CLI (tsx src/cli/main.ts) against the shared stack. */
async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent' },
    timeout: 90_000,
  });
}

let m: Mnemograph;
let users: UserDataStore;
const tag = { subsystem: 'test', op: 'check' };
beforeAll(async () => {
  m = await createMnemograph(testConfig({ LOG_LEVEL: 'silent', AUDIT_LEVEL: 'verbose' }));
  users = m.users;
});
afterAll(async () => m.close());

/** A user with memory in every store: turns, working memory, entities, facts, relationships, tools, goals, observations. */
async function seedRichUser(userId: string) {
  const conversationId = uid('c');
  const r = await m.memory.storeTurns([
    { userId, conversationId, role: 'user', content: 'My boss Vitaly asked me to review the Alpha launch plan.', metadata: { source: 'chat', speaker: 'me' } },
    { userId, conversationId, role: 'assistant', content: 'I will draft a review checklist for the Alpha launch.' },
    { userId, channel: 'proj-alpha', conversationId: uid('c'), role: 'user', content: 'Alpha ships on 3 March.' },
  ]);
  await m.backgroundEmbedder.drain();
  await m.memory.session({ userId, conversationId }).set('topic', { name: 'launch' });
  const boss = await m.memory.upsertEntity({ userId, name: 'Vitaly Petrov', type: 'person', aliases: ['Vitya'], sourceTurnId: r[0]!.turn.id });
  const alpha = await m.memory.upsertEntity({ userId, name: 'Project Alpha', type: 'project' });
  await m.memory.createRelationship({ userId, sourceId: boss.entity.id, targetId: alpha.entity.id, type: 'MANAGES' });
  await m.memory.learnFact({ userId, claim: 'Vitaly manages Project Alpha', aboutEntityIds: [boss.entity.id], sourceTurnId: r[0]!.turn.id });
  await m.memory.recordInvocation({ userId, conversationId, toolName: 'search_docs', toolInput: { q: 'alpha' }, toolOutput: { hits: 3 }, success: true, latencyMs: 12, turnId: r[1]!.turn.id });
  await m.memory.addGoal({ userId, description: 'Ship the Alpha review', priority: 8 });
  await m.memory.recordObservation(userId, 'prefers checklists', 'preference');
  await m.audit.flush();
  return conversationId;
}

/** Counts of everything of the user, by querying each store directly. */
async function leftovers(userId: string) {
  const labels = (await m.neo4j.read<{ label: string }>('CALL db.labels() YIELD label RETURN label', {}, tag)).map((r) => r.label);
  let nodes = 0;
  for (const l of labels) nodes += (await m.neo4j.read<{ n: number }>(`MATCH (n:\`${l}\`) WHERE n.user_id = $u OR (n:User AND n.id = $u) RETURN count(n) AS n`, { u: userId }, tag))[0]!.n;
  const tables = (
    await m.pg.primary.query<{ t: string }>(
      "SELECT c.relname AS t FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid WHERE a.attname = 'user_id' AND c.relkind IN ('r','p') AND NOT c.relispartition AND c.relnamespace = current_schema()::regnamespace",
    )
  ).rows.map((r) => r.t);
  const rows: Record<string, number> = {};
  for (const t of tables) {
    const n = Number((await m.pg.primary.query(`SELECT count(*) AS n FROM "${t}" WHERE user_id = $1`, [userId])).rows[0].n);
    if (n > 0) rows[t] = n;
  }
  const keys = [...(await m.redis.keys(`*${userId}*`))].sort();
  return { nodes, rows, keys };
}

/** JSON with object keys sorted (property order in Neo4j is not meaningful). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** An export with node refs replaced by stable keys, sorted: equal memories give equal results. */
function normalize(lines: ExportLine[]): string[] {
  const keyOf = new Map<string, string>();
  for (const l of lines) if (l.kind === 'node') keyOf.set(l.ref, `${l.labels.join(':')}#${typeof l.props.id === 'string' ? l.props.id : canonical(l.props)}`);
  const ref = (r: unknown) => (typeof r === 'string' ? keyOf.get(r) : canonical(r));
  return lines
    .map((l) => {
      if (l.kind === 'header') return `header ${l.userId}`;
      if (l.kind === 'node') return canonical({ ...l, ref: keyOf.get(l.ref) });
      if (l.kind === 'rel') return canonical({ ...l, start: ref(l.start), end: ref(l.end) });
      return canonical(l);
    })
    .sort();
}

async function exportOf(userId: string): Promise<ExportLine[]> {
  const out: ExportLine[] = [];
  for await (const l of users.export(userId)) out.push(l);
  return out;
}

describe('forget-user, export and import through the CLI', () => {
  it('export -> forget-user leaves nothing but the erasure record -> import restores an equal memory', async () => {
    const userId = uid('u');
    await seedRichUser(userId);
    const before = await exportOf(userId);
    const kinds = new Set(before.filter((l) => l.kind === 'node').flatMap((l) => (l.kind === 'node' ? l.labels : [])));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['Conversation', 'Entity', 'Fact', 'Goal', 'Turn', 'User']));
    expect(before.some((l) => l.kind === 'row' && l.table === 'conversation_logs')).toBe(true);
    const present = await leftovers(userId);
    expect(present.nodes).toBeGreaterThan(8);
    expect(present.keys.length).toBeGreaterThan(0);
    const auditBefore = Number((await m.pg.primary.query('SELECT count(*) AS n FROM memory_audit_log WHERE user_id = $1', [userId])).rows[0].n);
    expect(auditBefore).toBeGreaterThan(0);

    const dir = mkdtempSync(join(tmpdir(), 'mnemograph-cli-'));
    const file = join(dir, 'user.jsonl');
    const exported = await cli('export', '--user', userId, '--out', file);
    expect(exported.stdout).toContain(`to ${file}`);
    const fileLines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ExportLine);
    expect(normalize(fileLines)).toEqual(normalize(before));

    expect((await cli('forget-user', '--user', userId).catch((e: { code: number; stderr: string }) => e)).stderr).toContain('--yes');
    const forgot = await cli('forget-user', '--user', userId, '--yes');
    expect(forgot.stdout).toMatch(/erased .* Neo4j nodes/);
    // What is left is the erasure's record: one audit row (checked below) and when it happened.
    // (and the user's erasure epoch in Redis, which tells every process's caches that the user was erased,
    // and for ten minutes when the fence opened, docs/COMPLIANCE.md).
    expect(await leftovers(userId)).toEqual({ nodes: 0, rows: { memory_audit_log: 1, user_erasures: 1 }, keys: [`erasure-fence/${userId}/epoch`, `erasure-fence/${userId}/opened`].sort() });
    const audit = await m.pg.primary.query('SELECT operation, memory_type, metadata FROM memory_audit_log WHERE user_id = $1', [userId]);
    expect(audit.rows).toEqual([{ operation: 'forget_user', memory_type: 'system', metadata: expect.objectContaining({ userId, nodesDeleted: present.nodes }) }]);
    // The user's audit rows stay, hashes and all, without their personal columns; the record
    // names the redaction and who erased (sql/007, docs/COMPLIANCE.md "Erasure").
    const erasure = audit.rows[0].metadata as { auditRowsRedacted: number; auditRedactedAt: string };
    expect(erasure.auditRowsRedacted).toBeGreaterThanOrEqual(auditBefore);
    const redacted = await m.pg.primary.query('SELECT user_id, conversation_id, query_text, affected_ids, metadata, content_hash IS NOT NULL AS hashed FROM memory_audit_log WHERE redacted_at = $1', [
      erasure.auditRedactedAt,
    ]);
    expect(redacted.rows).toHaveLength(erasure.auditRowsRedacted);
    for (const r of redacted.rows) expect(r).toEqual({ user_id: null, conversation_id: null, query_text: null, affected_ids: null, metadata: {}, hashed: true });
    const by = await m.pg.primary.query("SELECT surface, request_id FROM memory_audit_log WHERE user_id = $1 AND operation = 'forget_user'", [userId]);
    expect(by.rows[0]).toMatchObject({ surface: 'cli', request_id: expect.stringMatching(/^cli-/) });
    // An audit row about the user from before the erasure, still queued in another process or
    // spooled while Postgres was down, is dropped when it arrives; activity after it is logged.
    const late = (at: Date) => m.pg.primary.query("INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id) VALUES ($1, 'recall', 'episodic', $2)", [at, userId]);
    await late(new Date(Date.now() - 60_000));
    expect((await leftovers(userId)).rows).toEqual({ memory_audit_log: 1, user_erasures: 1 });
    await late(new Date(Date.now() + 1_000));
    expect((await leftovers(userId)).rows).toEqual({ memory_audit_log: 2, user_erasures: 1 });
    // The log still verifies: redacted rows link with their stored hashes, covered by the erasure record.
    const verified = await cli('audit', 'verify', '--since', new Date(Date.now() - 86_400_000).toISOString().slice(0, 10));
    expect(verified.stdout).toMatch(/audit chain intact: \d+ rows in \d+ days checked \([1-9]\d* redacted/);

    const imported = await cli('import', file);
    expect(imported.stdout).toMatch(/imported \d+ nodes, \d+ relationships, \d+ rows/);
    expect(normalize(await exportOf(userId))).toEqual(normalize(before));
    // The restored memory works: reads and vector search find the turns again.
    const hits = await m.memory.vectorSearch({ userId, query: 'Alpha launch review', topK: 3 });
    expect(hits.length).toBeGreaterThan(0);
    // Importing twice changes nothing.
    await users.import(fileLines);
    expect(normalize(await exportOf(userId))).toEqual(normalize(before));
  }, 300_000);

  it('gives facts from an export older than their scope key (migration 006) one, so full-text finds them after import', async () => {
    const userId = uid('u');
    const { fact } = await m.memory.storeFact({ userId, claim: 'The user keeps bees on the roof' });
    const old = (await exportOf(userId)).map((l) => {
      if (l.kind !== 'node' || !l.labels.includes('Fact')) return l;
      const { scope_key: _dropped, ...props } = l.props;
      return { ...l, props };
    });
    await users.erase(userId);
    await users.import(old);
    const found = await m.semanticStore.fullTextSearchFacts(userScope(userId, { channels: ['_global'] }), 'bees roof', { limit: 5 });
    expect(found.map((r) => r.fact.id)).toEqual([fact.id]);
  });

  it('refuses an import whose lines belong to another user, writing nothing', async () => {
    const userId = uid('u');
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'hello' });
    const lines = await exportOf(userId);
    const forged = lines.map((l) => (l.kind === 'header' ? { ...l, userId: 'someone-else' } : l));
    await expect(users.import(forged)).rejects.toThrow(/belongs to/);
    expect((await leftovers('someone-else')).nodes).toBe(0);
  });

  it('refuses stats, export and forget-user while a table of per-user rows has no UserDataPart, naming it', async () => {
    const userId = uid('u');
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'kept until the table is claimed' });
    const table = `unclaimed_${Date.now()}`;
    await m.pg.primary.query(`CREATE TABLE ${table} (user_id VARCHAR(128) NOT NULL)`);
    try {
      await expect(users.stats(userId)).rejects.toThrow(new RegExp(`table ${table} holds per-user rows .* no UserDataPart claims it`));
      await expect(exportOf(userId)).rejects.toThrow(/no UserDataPart claims it/);
      await expect(users.erase(userId)).rejects.toThrow(/no UserDataPart claims it/);
    } finally {
      await m.pg.primary.query(`DROP TABLE ${table}`);
    }
    expect((await users.stats(userId)).rows.conversation_logs).toBe(1);
  });
});

describe('reindex', () => {
  it("re-embeds a user's turns and facts with the configured model (reindex --user)", async () => {
    const userId = uid('u');
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'The boat is moored in Cascais.' });
    await m.memory.learnFact({ userId, claim: 'The boat is in Cascais' });
    await m.backgroundEmbedder.drain();
    // Simulate vectors from another model: wrong values everywhere for this user.
    const garble = "MATCH (n) WHERE n.user_id = $u AND n.embedding IS NOT NULL CALL db.create.setNodeVectorProperty(n, 'embedding', [x IN range(1, $dims) | 0.001 * x]) RETURN count(n) AS n";
    expect((await m.neo4j.write<{ n: number }>(garble, { u: userId, dims: m.config.embedding.dimensions }, tag))[0]!.n).toBe(2);
    const out = await cli('reindex', '--user', userId);
    expect(out.stdout).toMatch(/re-embedded 1 Turn, 1 Fact, 0 Entity/);
    const [expected] = await m.embedder.embed(['The boat is moored in Cascais.']);
    const stored = await m.neo4j.read<{ e: number[] }>('MATCH (t:Turn {user_id: $u}) RETURN t.embedding AS e', { u: userId }, tag);
    stored[0]!.e.forEach((v, i) => expect(v).toBeCloseTo(expected![i]!, 4));
    // The index serves the new vector: searching with it finds the turn at similarity 1.
    const hits = await m.memory.vectorSearch({ userId, queryEmbedding: expected, topK: 1 });
    expect(hits[0]!.score).toBeGreaterThan(0.99);
  }, 60_000);
});

describe('keys, stats and search commands', () => {
  it('creates, lists and revokes a key; the key itself is never listed', async () => {
    const tenant = uid('k').slice(0, 14).toLowerCase();
    const created = await cli('keys', 'create', '--tenant', tenant, '--name', 'ci');
    const key = /^(mg_\S+)$/m.exec(created.stdout)?.[1];
    const keyId = /^key (\S+) for admin of tenant/m.exec(created.stdout)?.[1];
    expect(key).toBeTruthy();
    const listed = await cli('keys', 'list', '--tenant', tenant);
    expect(listed.stdout).toContain(keyId!);
    expect(listed.stdout).toContain('live');
    expect(listed.stdout).not.toContain(key!);
    expect((await cli('keys', 'revoke', keyId!)).stdout).toContain('revoked');
    expect((await cli('keys', 'list', '--tenant', tenant)).stdout).toContain('revoked');
    const agent = await cli('keys', 'create', '--tenant', tenant, '--agent', 'planner');
    expect(agent.stdout).toMatch(/^key \S+ for agent planner of tenant/m);
    expect((await cli('keys', 'list', '--tenant', tenant)).stdout).toContain('agent:planner');
    await expect(cli('keys', 'create', '--tenant', tenant, '--role', 'agent')).rejects.toThrow(/needs the agent/);
  }, 60_000);

  it("prints a user's stats and search results", async () => {
    const userId = uid('u');
    await m.memory.storeTurn({ userId, conversationId: uid('c'), role: 'user', content: 'The spare key is under the blue flowerpot.' });
    await m.backgroundEmbedder.drain();
    const stats = await cli('stats', '--user', userId);
    expect(stats.stdout).toMatch(/neo4j\s+Turn\s+1/);
    expect(stats.stdout).toMatch(/postgres\s+conversation_logs\s+1/);
    const found = await cli('search', '--user', userId, 'where', 'is', 'the', 'spare', 'key');
    expect(found.stdout).toContain('blue flowerpot');
  }, 60_000);
});
