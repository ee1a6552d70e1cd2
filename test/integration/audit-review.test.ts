import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MnemographClient, ValidationFailedError } from '../../src/client';
import { CSV_COLUMNS } from '../../src/audit';
import { uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

/**
 * The audit log's read side over real HTTP and PostgreSQL: GET /v1/audit (each filter,
 * keyset pagination across daily partitions, tenant isolation by the tenant_id column, user
 * ids in the tenant's terms, bad filters), GET /v1/audit/export (CSV and JSON lines hold the
 * query's rows, oldest first), and who may call them. The rows are inserted with SQL with
 * their actor columns, as the service will write them.
 */

interface Fixture {
  id: string;
  ts: string;
  tenant: string | null;
  user: string;
  operation: string;
  memoryType: string;
  channel: string;
  channels: string[];
  keyId: string;
  agentId: string | null;
  surface: string;
  success: boolean;
  conversation: string;
  read: boolean;
}

// $1.. the columns below -> {id}
const INSERT = `INSERT INTO memory_audit_log (timestamp, tenant_id, user_id, operation, memory_type, source_channel, target_channels, key_id, agent_id, surface,
  success, conversation_id, affected_ids, query_text, result_count, request_id, error_message, metadata)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING id::text AS id`;
// -> partitions for the last five days (UTC) and today
const PARTITIONS = "SELECT ensure_audit_partitions((now() AT TIME ZONE 'UTC')::date - 5, 7)";

const OPS = ['store_turn', 'store_fact', 'retract_fact', 'remember', 'upsert_entity'] as const;
const SURFACES = ['http', 'mcp', 'cli', 'worker'] as const;

let h: Harness;
let A: { tenantId: string; key: string; keyId: string };
let B: { tenantId: string; key: string; keyId: string };
let reviewerKey: string;
let agentKey: string;
const rows: Fixture[] = [];
const keyIds = ['aaaaaaaaaaa1', 'bbbbbbbbbbb2'];

async function insert(tenant: string | null, i: number, ts: string): Promise<void> {
  const prefix = `${tenant ?? 'legacy'}.`;
  const user = ['alice', 'bob', 'carol'][i % 3]!;
  const operation = OPS[i % OPS.length]!;
  const read = operation === 'remember';
  const channel = ['support', 'sales'][i % 2]!;
  const channels = read ? [channel, 'billing', '_global'] : [channel];
  const f: Fixture = {
    id: '',
    ts,
    tenant,
    user,
    operation,
    memoryType: read ? 'episodic' : ['semantic', 'procedural', 'working'][i % 3]!,
    channel,
    channels,
    keyId: keyIds[i % 2]!,
    agentId: i % 3 === 0 ? 'planner' : null,
    surface: SURFACES[i % 4]!,
    success: i % 7 !== 0,
    conversation: `conv-${i % 4}`,
    read,
  };
  const r = await h.m.pg.primary.query<{ id: string }>(INSERT, [
    ts,
    tenant,
    prefix + user,
    operation,
    f.memoryType,
    channel,
    channels,
    f.keyId,
    f.agentId,
    f.surface,
    f.success,
    prefix + f.conversation,
    [`${prefix}${f.conversation}:${i}`, `fact-${i}`],
    read ? `what does ${user} like, ${i}?` : null,
    read ? i % 5 : null,
    `req-${i}`,
    f.success ? null : 'store unavailable',
    JSON.stringify({ i, note: 'a "quoted", comma\nand newline' }),
  ]);
  f.id = r.rows[0]!.id;
  if (tenant === A.tenantId) rows.push(f);
}

/** Newest first by (timestamp, id), as the API orders. */
const newestFirst = (a: Fixture, b: Fixture) => (a.ts === b.ts ? Number(b.id) - Number(a.id) : a.ts < b.ts ? 1 : -1);

async function get(key: string, query: Record<string, string>) {
  return h.call(key, 'GET', `/v1/audit?${new URLSearchParams(query).toString()}`);
}

/** Every page of a query, following nextCursor. */
async function walk(query: Record<string, string>, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await get(A.key, { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
    expect(r.status).toBe(200);
    expect(r.body.rows.length).toBeLessThanOrEqual(limit);
    ids.push(...r.body.rows.map((x: { id: string }) => x.id));
    cursor = r.body.nextCursor;
    pages++;
  } while (cursor && pages < 100);
  return { ids, pages };
}

beforeAll(async () => {
  h = await openHarness();
  [A, B] = [await h.tenant(), await h.tenant()];
  reviewerKey = (await h.srv.api.tenants.createKey(A.tenantId, { name: 'review', role: 'reviewer' })).key;
  agentKey = (await h.srv.api.tenants.createKey(A.tenantId, { agentId: 'planner' })).key;
  await h.m.pg.primary.query(PARTITIONS);
  // 40 rows of A over four days, two of them at the same instant (the id breaks the tie),
  // microsecond timestamps; B's and tenant-less rows about users of the same names.
  const now = Date.now();
  for (let i = 0; i < 40; i++) {
    const ms = now - 60_000 - Math.floor(i / 2) * 4.5 * 3_600_000;
    const ts = new Date(ms).toISOString().replace('Z', `${String(i % 2 === 0 ? 0 : i).padStart(3, '0')}Z`);
    await insert(A.tenantId, i, i === 11 ? rows[10]!.ts : ts);
  }
  for (let i = 0; i < 12; i++) await insert(B.tenantId, i, new Date(now - 30_000 - i * 3_600_000).toISOString().replace('Z', '000Z'));
  for (let i = 0; i < 3; i++) await insert(null, i, new Date(now - 20_000).toISOString().replace('Z', '000Z'));
});
afterAll(async () => h.close());

describe('GET /v1/audit', () => {
  it("pages through every row of the tenant newest first across daily partitions: none twice, none missed, no other tenant's", async () => {
    const expected = [...rows].sort(newestFirst).map((r) => r.id);
    const days = new Set(rows.map((r) => r.ts.slice(0, 10)));
    expect(days.size).toBeGreaterThanOrEqual(3);
    for (const limit of [7, 1, 40, 500]) {
      const { ids, pages } = await walk({}, limit);
      expect(ids).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / limit)); // the last page says so: no empty page after it
    }
  });

  it('returns rows in the tenant’s ids with the actor, and B sees only its own', async () => {
    const r = await get(A.key, { limit: '500' });
    const tied = r.body.rows.filter((x: { timestamp: string }) => x.timestamp === rows[10]!.ts);
    expect(tied.map((x: { id: string }) => x.id)).toEqual([rows[11]!.id, rows[10]!.id]);
    const first = r.body.rows.find((x: { id: string }) => x.id === rows[3]!.id);
    expect(first).toEqual({
      id: rows[3]!.id,
      timestamp: rows[3]!.ts,
      operation: 'remember',
      memoryType: 'episodic',
      userId: 'alice',
      sessionId: null,
      conversationId: 'conv-3',
      channel: 'sales',
      channels: ['sales', 'billing', '_global'],
      affectedIds: ['conv-3:3', 'fact-3'],
      queryText: 'what does alice like, 3?',
      resultCount: 3,
      latencyMs: null,
      success: true,
      errorMessage: null,
      actor: { tenantId: A.tenantId, keyId: keyIds[1], agentId: 'planner', surface: 'worker', requestId: 'req-3', job: null, runId: null },
      metadata: { i: 3, note: 'a "quoted", comma\nand newline' },
    });
    expect(JSON.stringify(r.body)).not.toContain(`${A.tenantId}.`);
    const b = await get(B.key, { limit: '500' });
    expect(b.body.rows).toHaveLength(12);
    expect(b.body.rows.every((x: { actor: { tenantId: string } }) => x.actor.tenantId === B.tenantId)).toBe(true);
    expect(JSON.stringify(b.body)).not.toContain(A.tenantId);
    // The same user name in B's tenant is B's user: A's rows never come back.
    const bAlice = await get(B.key, { userId: 'alice', limit: '500' });
    expect(bAlice.body.rows.length).toBeGreaterThan(0);
    expect(bAlice.body.rows.every((x: { id: string }) => !rows.some((f) => f.id === x.id))).toBe(true);
  });

  const since = () => rows[20]!.ts;
  const until = () => rows[6]!.ts;
  const cases: [string, () => Record<string, string>, (f: Fixture) => boolean][] = [
    ['userId', () => ({ userId: 'bob' }), (f) => f.user === 'bob'],
    ['operation', () => ({ operation: 'retract_fact' }), (f) => f.operation === 'retract_fact'],
    ['memoryType', () => ({ memoryType: 'procedural' }), (f) => f.memoryType === 'procedural'],
    ['channel (written to, or searched)', () => ({ channel: 'billing' }), (f) => f.channels.includes('billing')],
    ['channel (source)', () => ({ channel: 'sales' }), (f) => f.channel === 'sales'],
    ['keyId', () => ({ keyId: keyIds[0]! }), (f) => f.keyId === keyIds[0]],
    ['agentId', () => ({ agentId: 'planner' }), (f) => f.agentId === 'planner'],
    ['surface', () => ({ surface: 'mcp' }), (f) => f.surface === 'mcp'],
    ['success=false', () => ({ success: 'false' }), (f) => !f.success],
    ['success=true', () => ({ success: 'true' }), (f) => f.success],
    ['since', () => ({ since: since() }), (f) => f.ts >= since()],
    ['until', () => ({ until: until() }), (f) => f.ts < until()],
    [
      'since + until + agent + user',
      () => ({ since: since(), until: until(), agentId: 'planner', userId: 'alice' }),
      (f) => f.ts >= since() && f.ts < until() && f.agentId === 'planner' && f.user === 'alice',
    ],
  ];
  it.each(cases)('filters by %s', async (_name, query, keep) => {
    const expected = rows
      .filter(keep)
      .sort(newestFirst)
      .map((r) => r.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(rows.length);
    const { ids } = await walk(query(), 4);
    expect(ids).toEqual(expected);
  });

  it('answers 400 with details for a bad filter, and changes nothing', async () => {
    const bad: Record<string, string>[] = [
      { limit: '0' },
      { limit: '501' },
      { limit: 'ten' },
      { surface: 'email' },
      { memoryType: 'dreams' },
      { success: 'yes' },
      { since: 'last tuesday' },
      { since: rows[0]!.ts, until: rows[5]!.ts },
      { cursor: 'not-a-cursor' },
      { cursor: Buffer.from('2025-01-01T00:00:00.000000Z|1; DROP TABLE x').toString('base64url') },
      { keyId: 'mg_secretkey' },
      { userId: 'bad:id' },
      { tenantId: B.tenantId },
    ];
    for (const q of bad) {
      const r = await get(A.key, q);
      expect({ q, status: r.status, code: r.body.error?.code }).toEqual({ q, status: 400, code: 'VALIDATION_FAILED' });
      expect(r.body.error.details.issues.length).toBeGreaterThan(0);
    }
    expect((await walk({}, 500)).ids).toHaveLength(rows.length);
  });

  it('accepts a UTC date for since/until and names a user the tenant erased (no ownership required)', async () => {
    const day = rows[0]!.ts.slice(0, 10);
    const r = await get(A.key, { since: day, limit: '500' });
    expect(r.body.rows.map((x: { id: string }) => x.id)).toEqual(
      rows
        .filter((f) => f.ts.slice(0, 10) >= day)
        .sort(newestFirst)
        .map((f) => f.id),
    );
    const gone = await get(A.key, { userId: uid('never-registered') });
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ rows: [], nextCursor: null });
  });
});

/** RFC 4180 records (quotes, doubled quotes, newlines inside quotes). */
function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c === ',') {
      endField();
    } else if (!quoted && c === '\n') {
      endField();
      out.push(row);
      row = [];
    } else {
      field += c;
    }
  }
  if (field !== '' || row.length > 0) {
    endField();
    out.push(row);
  }
  return out;
}

describe('GET /v1/audit/export', () => {
  it("JSON lines: the query's rows, oldest first, with the same content", async () => {
    const page = (await get(A.key, { limit: '500', channel: 'sales' })).body.rows;
    const res = await fetch(`${h.url}/v1/audit/export?format=jsonl&channel=sales`, { headers: { authorization: `Bearer ${A.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await res.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual([...page].reverse());
  });

  it("CSV: a header line, then the query's rows oldest first, every field as the page has it", async () => {
    const page = (await get(A.key, { limit: '500' })).body.rows;
    const res = await fetch(`${h.url}/v1/audit/export?format=csv`, { headers: { authorization: `Bearer ${A.key}` } });
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...records] = parseCsv(await res.text());
    expect(header).toEqual([...CSV_COLUMNS]);
    expect(records).toHaveLength(page.length);
    const asCsv = (r: any) => {
      const flat: Record<string, string | number | boolean | null> = {
        ...r,
        ...r.actor,
        channels: JSON.stringify(r.channels),
        affectedIds: JSON.stringify(r.affectedIds),
        metadata: JSON.stringify(r.metadata),
      };
      return CSV_COLUMNS.map((c) => String(flat[c] ?? ''));
    };
    expect(records).toEqual([...page].reverse().map(asCsv));
  });

  it("CSV cells that a spreadsheet would run as a formula are prefixed with '", async () => {
    await h.m.pg.primary.query("INSERT INTO memory_audit_log (tenant_id, operation, memory_type, user_id, query_text, result_count) VALUES ($1, 'search_memory', 'episodic', $2, $3, 0)", [
      B.tenantId,
      `${B.tenantId}.mallory`,
      '=HYPERLINK("http://evil.example","x")',
    ]);
    const res = await fetch(`${h.url}/v1/audit/export?format=csv&userId=mallory`, { headers: { authorization: `Bearer ${B.key}` } });
    const [, record] = parseCsv(await res.text());
    expect(record![CSV_COLUMNS.indexOf('queryText')]).toBe(`'=HYPERLINK("http://evil.example","x")`);
    const jsonl = await fetch(`${h.url}/v1/audit/export?userId=mallory`, { headers: { authorization: `Bearer ${B.key}` } });
    expect(JSON.parse(await jsonl.text())).toMatchObject({ userId: 'mallory', queryText: '=HYPERLINK("http://evil.example","x")' });
  });

  it('an empty export is a header (CSV) or nothing (JSON lines); bad input is 400 before anything streams', async () => {
    const csv = await fetch(`${h.url}/v1/audit/export?format=csv&userId=nobody`, { headers: { authorization: `Bearer ${A.key}` } });
    expect(await csv.text()).toBe(`${CSV_COLUMNS.join(',')}\n`);
    const jsonl = await fetch(`${h.url}/v1/audit/export?userId=nobody`, { headers: { authorization: `Bearer ${A.key}` } });
    expect(jsonl.status).toBe(200);
    expect(await jsonl.text()).toBe('');
    for (const q of ['format=xml', 'cursor=abc', 'limit=5', 'surface=fax']) {
      const r = await h.call(A.key, 'GET', `/v1/audit/export?${q}`);
      expect({ q, status: r.status, code: r.body.error?.code }).toEqual({ q, status: 400, code: 'VALIDATION_FAILED' });
    }
  });

  it('the typed client reads pages and the export', async () => {
    const client = new MnemographClient({ baseUrl: h.url, apiKey: reviewerKey });
    const first = await client.queryAudit({ limit: '5', surface: 'http' });
    expect(first.rows.map((r) => r.id)).toEqual(
      rows
        .filter((f) => f.surface === 'http')
        .sort(newestFirst)
        .slice(0, 5)
        .map((f) => f.id),
    );
    const text = await client.exportAuditText({ format: 'jsonl', surface: 'http' });
    expect(text.trim().split('\n')).toHaveLength(rows.filter((f) => f.surface === 'http').length);
    const reader = (await client.exportAudit({ format: 'csv', operation: 'remember' })).getReader();
    let bytes = 0;
    for (let c = await reader.read(); !c.done; c = await reader.read()) bytes += c.value.length;
    expect(bytes).toBeGreaterThan(100);
    await expect(client.queryAudit({ limit: '0' })).rejects.toBeInstanceOf(ValidationFailedError);
  });
});

const ROOT = join(__dirname, '..', '..');
/** The real `mnemograph` CLI against the test database. */
async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent' }, timeout: 180_000 });
}

describe('mnemograph audit', () => {
  it("query: a table of the tenant's rows newest first, --json the page, --cursor the next; export: the same rows to a file", async () => {
    const bobs = rows.filter((f) => f.user === 'bob').sort(newestFirst);
    const table = await cli('audit', 'query', '--tenant', A.tenantId, '--user', 'bob', '--limit', '3');
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^time \(UTC\)\s+operation\s+user/);
    expect(lines.slice(1, 4).map((l) => l.split(/\s+/)[2])).toEqual(bobs.slice(0, 3).map((f) => f.operation));
    expect(lines.slice(1, 4).every((l) => l.includes(' bob '))).toBe(true);
    const cursor = /--cursor (\S+)\)$/.exec(lines[4]!)?.[1];
    expect(cursor).toBeTruthy();
    const next = JSON.parse((await cli('audit', 'query', '--tenant', A.tenantId, '--user', 'bob', '--limit', '100', '--cursor', cursor!, '--json')).stdout);
    expect(next.rows.map((r: { id: string }) => r.id)).toEqual(bobs.slice(3).map((f) => f.id));
    expect(next.rows[0].userId).toBe('bob');

    const out = join(mkdtempSync(join(tmpdir(), 'audit-')), 'bob.jsonl');
    await cli('audit', 'export', '--tenant', A.tenantId, '--user', 'bob', '--format', 'jsonl', '--out', out);
    const exported = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(exported.map((r: { id: string }) => r.id)).toEqual([...bobs].reverse().map((f) => f.id));
    // Without --tenant: every row, ids as stored.
    const raw = JSON.parse((await cli('audit', 'query', '--user', `${A.tenantId}.bob`, '--limit', '1', '--json')).stdout);
    expect(raw.rows[0]).toMatchObject({ id: bobs[0]!.id, userId: `${A.tenantId}.bob` });
    await expect(cli('audit', 'query', '--surface', 'fax')).rejects.toMatchObject({ stderr: expect.stringContaining('VALIDATION_FAILED') });
  }, 900_000);
});

describe('who may read the audit log', () => {
  it('a reviewer key gets 200 on both audit routes; an agent key 403', async () => {
    for (const path of ['/v1/audit', '/v1/audit/export?format=csv']) {
      expect((await h.call(reviewerKey, 'GET', path)).status).toBe(200);
      expect((await h.call(A.key, 'GET', path)).status).toBe(200);
      const agent = await h.call(agentKey, 'GET', path);
      expect(agent.status).toBe(403);
      expect(agent.body.error).toMatchObject({ code: 'FORBIDDEN', details: { role: 'agent' } });
    }
  });

  it('the OpenAPI document describes the export as streamed CSV or JSON lines', async () => {
    const doc = (await h.call(undefined, 'GET', '/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/v1/audit/export'].get.responses['200'].content)).toEqual(['text/csv', 'application/x-ndjson']);
    expect(doc.paths['/v1/audit'].get.description).toBe('Key roles: admin, reviewer.');
  });
});
