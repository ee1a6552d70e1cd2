import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { ROUTES } from '../../src/api/routes';
import { TenantNamespace } from '../../src/access';
import { eventually, testConfig, uid } from '../support/stack';
import { TcpProxy } from '../support/tcp-proxy';
import { happy, openHarness, seedUser, type Harness } from './api-harness';

/*
 * Issue #22: bad input changes nothing, a store outage (PostgreSQL, Neo4j) is a 503 within seconds and never half a write, every
 * acknowledged write is whole and audited once, and forget-user is final while writers race it.
 */

let h: Harness;
const spoolDir = mkdtempSync(join(tmpdir(), 'mnemograph-faults-spool-'));
beforeAll(async () => {
  h = await openHarness({ AUDIT_SPOOL_DIR: spoolDir, ERASURE_GRACE_MS: '300' });
});
afterAll(() => h.close());

/** Everything the user has anywhere (nodes per label, rows per table, Redis keys), as one comparable value. */
async function holdings(internalUserId: string) {
  const s = await h.m.users.stats(internalUserId);
  return { nodes: s.nodes, rows: s.rows, workingKeys: s.workingKeys };
}

const internal = (tenantId: string, userId: string) => new TenantNamespace(tenantId).toInternal(userId, 'userId');

async function registered(tenantId: string, userId: string): Promise<boolean> {
  return (await h.m.pg.primary.query('SELECT 1 FROM tenant_users WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId])).rowCount === 1;
}

describe('refused requests write nothing (finding 2, 5)', () => {
  const turn = (over: Record<string, unknown>) => ({ conversationId: uid('c'), role: 'user', content: 'hello', ...over });
  const cases: Array<[string, (userId: string) => { path: string; body: unknown }]> = [
    ['NUL in content', (userId) => ({ path: '/v1/turns', body: turn({ userId, content: 'a\u0000b' }) })],
    ['NUL in model', (userId) => ({ path: '/v1/turns', body: turn({ userId, model: 'gpt\u0000' }) })],
    ['NUL in a metadata value', (userId) => ({ path: '/v1/turns', body: turn({ userId, metadata: { note: 'x\u0000' } }) })],
    ['NUL in a metadata key', (userId) => ({ path: '/v1/turns', body: turn({ userId, metadata: { ['k\u0000']: 'x' } }) })],
    ['a lone surrogate', (userId) => ({ path: '/v1/turns', body: turn({ userId, content: 'broken \ud800 pair' }) })],
    ['year 0', (userId) => ({ path: '/v1/turns', body: turn({ userId, timestamp: '0000-06-01T00:00:00Z' }) })],
    ['year 10000 in UTC after the offset', (userId) => ({ path: '/v1/turns', body: turn({ userId, timestamp: '9999-12-31T23:59:59-14:00' }) })],
    ['an offset beyond ±18:00', (userId) => ({ path: '/v1/turns', body: turn({ userId, timestamp: '2024-05-01T10:00:00+19:00' }) })],
    ['a batch whose second turn holds a NUL', (userId) => ({ path: '/v1/turns/batch', body: { turns: [turn({ userId }), turn({ userId, content: 'b\u0000' })] } })],
    [
      'a tool invocation with a NUL in its input',
      (userId) => ({ path: '/v1/tool-invocations', body: { userId, conversationId: uid('c'), toolName: 'search', toolInput: { q: 'x\u0000' }, success: true, latencyMs: 3 } }),
    ],
    [
      'a tool invocation of year 0',
      (userId) => ({ path: '/v1/tool-invocations', body: { userId, conversationId: uid('c'), toolName: 'search', success: true, latencyMs: 3, timestamp: '0000-01-01T00:00:00Z' } }),
    ],
    ['a fact with a NUL', (userId) => ({ path: '/v1/facts', body: { userId, claim: 'The user likes \u0000 tea' } })],
    ['an observation with a NUL in its metadata', (userId) => ({ path: '/v1/observations', body: { userId, content: 'likes tea', category: 'preference', sourceMetadata: { k: '\u0000' } } })],
    ['a goal due in year 10000', (userId) => ({ path: '/v1/goals', body: { userId, description: 'finish', deadline: '9999-12-31T23:00:00-12:00' } })],
  ];

  it.each(cases)('%s: 400, nothing stored, the user not registered', async (_name, make) => {
    const t = await h.tenant();
    const userId = uid('u');
    const { path, body } = make(userId);
    const r = await h.call(t.key, 'POST', path, body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(await holdings(internal(t.tenantId, userId))).toEqual({ nodes: {}, rows: {}, workingKeys: 0 });
    expect(await registered(t.tenantId, userId)).toBe(false);
    expect((await h.call(t.key, 'GET', `/v1/users/${userId}/stats`)).status).toBe(404);
  });

  it('a write refused by the facade (a conversation of another user) registers no user', async () => {
    const t = await h.tenant();
    const conversationId = uid('c');
    expect((await h.call(t.key, 'POST', '/v1/turns', { userId: 'owner', conversationId, role: 'user', content: 'mine' })).status).toBe(201);
    const r = await h.call(t.key, 'POST', '/v1/turns', { userId: 'intruder', conversationId, role: 'user', content: 'not yours' });
    expect(r.status).toBe(400);
    expect(await registered(t.tenantId, 'intruder')).toBe(false);
  });

  it('unbounded time windows are 400, not 500', async () => {
    const t = await h.tenant();
    const u = await seedUser(h, t.key);
    for (const [path, body] of [
      ['/v1/recall', { userId: u.userId, query: 'where', timeWindowHours: 1e300 }],
      ['/v1/search/vector', { userId: u.userId, query: 'where', timeWindowHours: 1e300 }],
      ['/v1/tools/stats', { userId: u.userId, sinceHours: 1e300 }],
      ['/v1/turns/recent', { userId: u.userId, hours: 1e300 }],
    ] as const) {
      const r = await h.call(t.key, 'POST', path, body);
      expect([path, r.status]).toEqual([path, 400]);
    }
    // The longest window allowed from the earliest moment allowed is still a date every store holds.
    const r = await h.call(t.key, 'POST', '/v1/recall', { userId: u.userId, query: 'where', timeWindowHours: 24 * 365 * 100, asOf: '0001-01-02T00:00:00Z' });
    expect(r.status).toBe(200);
  });

  it('Content-Encoding: a plain body labelled gzip or br is 400, a real gzip or br body is decoded, an unknown encoding is 415', async () => {
    const t = await h.tenant();
    const body = JSON.stringify({ userId: 'u', conversationId: uid('c'), role: 'user', content: 'compressed' });
    const send = (payload: Buffer | string, encoding: string) =>
      fetch(`${h.url}/v1/turns`, { method: 'POST', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', 'content-encoding': encoding }, body: payload });
    for (const enc of ['gzip', 'br', 'deflate']) {
      const r = await send(body, enc);
      expect([enc, r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([enc, 400, 'INVALID_CONTENT_ENCODING']);
    }
    expect((await send(gzipSync(body), 'gzip')).status).toBe(201);
    expect((await send(brotliCompressSync(Buffer.from(JSON.stringify({ ...JSON.parse(body), conversationId: uid('c') }))), 'br')).status).toBe(201);
    expect((await send(body, 'compress')).status).toBe(415);
  });

  it('deep nesting is refused before parsing (400 BODY_TOO_DEEP), at any depth, and shallow enough is fine', async () => {
    const t = await h.tenant();
    for (const depth of [65, 10_000, 1_000_000]) {
      const r = await h.call(t.key, 'POST', '/v1/turns', `{"userId":"u","conversationId":"c","role":"user","content":"x","metadata":{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
      expect([depth, r.status, r.body.error?.code]).toEqual([depth, 400, 'BODY_TOO_DEEP']);
    }
    // Brackets inside strings are text, not nesting.
    const r = await h.call(t.key, 'POST', '/v1/turns', { userId: 'u', conversationId: uid('c'), role: 'user', content: '['.repeat(5_000) + ' "\\" {' });
    expect(r.status).toBe(201);
    // A context value may nest (it is JSON), up to the limit.
    let value: unknown = 'leaf';
    for (let i = 0; i < 50; i++) value = { v: value };
    expect((await h.call(t.key, 'PUT', `/v1/users/u/sessions/${uid('c')}/context/deep`, { value })).status).toBe(200);
  });

  it('every route of the table: NUL and lone surrogates in every string of its happy body are 4xx and change nothing', async () => {
    const t = await h.tenant();
    const u = await seedUser(h, t.key);
    const before = await holdings(internal(t.tenantId, u.userId));
    const poison = (v: unknown, bad: string): unknown =>
      typeof v === 'string' ? v + bad : Array.isArray(v) ? v.map((x) => poison(x, bad)) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, poison(x, bad)])) : v;
    const statuses: Record<string, number[]> = {};
    for (const r of ROUTES) {
      const c = happy[r.id]!(u);
      if (c.body === undefined || c.method === 'GET' || c.method === 'DELETE' || JSON.stringify(poison(c.body, '!')) === JSON.stringify(c.body)) continue;
      for (const bad of ['\u0000', '\udc00']) {
        const res = await h.call(t.key, c.method, c.path, poison(c.body, bad));
        (statuses[r.id] ??= []).push(res.status);
      }
    }
    const failed = Object.entries(statuses).filter(([, s]) => s.some((x) => x < 400 || x >= 500));
    expect(failed).toEqual([]);
    expect(Object.keys(statuses).length).toBeGreaterThan(30);
    expect(await holdings(internal(t.tenantId, u.userId))).toEqual(before);
  });
});

describe('a PostgreSQL outage is 503 with Retry-After, never half a write (findings 3, 4)', () => {
  let proxy: TcpProxy;
  let p: Harness;
  beforeAll(async () => {
    const url = new URL(testConfig().postgres.url);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.open();
    url.host = `127.0.0.1:${proxy.port}`;
    p = await openHarness({ DATABASE_URL: url.toString(), AUDIT_SPOOL_DIR: spoolDir });
  });
  afterAll(async () => {
    await p.close();
    await proxy.close();
  });

  it('keys verified before keep working, the write is refused whole, and the retry stores and audits it once', async () => {
    const t = await p.tenant();
    const stranger = await p.tenant(); // never used before the outage
    const userId = uid('u');
    const conversationId = uid('c');
    expect((await p.call(t.key, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content: 'before the outage' })).status).toBe(201);

    await proxy.close();
    // Reads served by Neo4j keep working: the key verifies from the process's memory.
    const read = await p.call(t.key, 'GET', `/v1/users/${userId}/conversations/${conversationId}`);
    expect(read.status).toBe(200);
    // A key never verified here cannot be checked: 503, not 500.
    const unknown = await p.call(stranger.key, 'GET', `/v1/users/${userId}/conversations/${conversationId}`);
    expect(unknown.status).toBe(503);
    expect(unknown.headers.get('retry-after')).toBeTruthy();
    // The turn log cannot be written: 503 with Retry-After, and Neo4j keeps nothing of the turn.
    const second = { userId, conversationId, role: 'user', content: 'during the outage', index: 1 };
    const refused = await p.call(t.key, 'POST', '/v1/turns', second);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { store: 'postgres' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await p.call(t.key, 'GET', `/v1/users/${userId}/conversations/${conversationId}`)).body.turns).toHaveLength(1);

    await proxy.open();
    const retried = await eventually(async () => {
      const r = await p.call(t.key, 'POST', '/v1/turns', second);
      return r.status === 201 ? r : undefined;
    }, 'the retry to succeed once PostgreSQL is back');
    expect(retried.body.created).toBe(true);
    const id = retried.body.turn.id as string;
    const internalId = `${t.tenantId}.${id}`;
    expect((await p.m.pg.primary.query('SELECT 1 FROM conversation_logs WHERE turn_id = $1', [internalId])).rowCount).toBe(1);
    await p.m.audit.flush();
    const audited = await p.m.pg.primary.query("SELECT 1 FROM memory_audit_log WHERE operation = 'store' AND $1 = ANY(affected_ids)", [internalId]);
    expect(audited.rowCount).toBe(1);
    // A second retry finds it stored, writes nothing more and audits nothing more.
    expect((await p.call(t.key, 'POST', '/v1/turns', second)).body.created).toBe(false);
    await p.m.audit.flush();
    expect((await p.m.pg.primary.query("SELECT 1 FROM memory_audit_log WHERE operation = 'store' AND $1 = ANY(affected_ids)", [internalId])).rowCount).toBe(1);
  });
});

describe('a Neo4j outage is 503 with Retry-After within seconds, not a hang (finding 7)', () => {
  // A proxy in front of the test Neo4j: cut or closed, never the Neo4j itself (it is shared).
  let proxy: TcpProxy;
  let n: Harness;
  beforeAll(async () => {
    const url = new URL(testConfig().neo4j.uri);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 7687) });
    await proxy.open();
    n = await openHarness({ NEO4J_URI: `bolt://127.0.0.1:${proxy.port}`, AUDIT_SPOOL_DIR: spoolDir });
  });
  afterAll(async () => {
    await n.close();
    await proxy.close();
  });

  const timed = async (key: string | undefined, method: string, path: string, body?: unknown) => {
    const t0 = Date.now();
    const r = await n.call(key, method, path, body);
    return { ...r, ms: Date.now() - t0 };
  };

  // Before this fix, a call retried the dead server for 13-18 s (the driver's retry loop), so
  // callers waited until Neo4j was back instead of hearing 503.
  it.each<[string, () => unknown, () => unknown]>([
    ['killed: connections cut, new ones dropped as accepted', () => proxy.cut(), () => proxy.restore()],
    ['stopped: connections refused', () => proxy.close(), () => proxy.open()],
  ])('%s: recall and a turn write are 503 within 3 s, /readyz says Neo4j is down, the retried write is stored and audited once', async (_name, down, up) => {
    const t = await n.tenant();
    const userId = uid('u');
    const conversationId = uid('c');
    expect((await n.call(t.key, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content: 'I live in Lisbon.' })).status).toBe(201);

    await down();
    try {
      for (const [method, path, body] of [
        ['POST', '/v1/recall', { userId, query: 'where does the user live?', topK: 5 }],
        ['POST', '/v1/turns', { userId, conversationId, role: 'assistant', content: 'Noted.', index: 1 }],
        ['GET', `/v1/users/${userId}/conversations/${conversationId}`, undefined],
      ] as const) {
        const r = await timed(t.key, method, path, body);
        expect([path, r.status, r.body.error?.code, r.body.error?.details?.store]).toEqual([path, 503, 'STORE_UNAVAILABLE', 'neo4j']);
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(r.ms).toBeLessThan(3_000);
      }
      const ready = await n.call(undefined, 'GET', '/readyz');
      expect([ready.status, ready.body.stores.neo4j.up]).toEqual([503, false]);
    } finally {
      await up();
    }
    const retried = await eventually(async () => {
      const r = await n.call(t.key, 'POST', '/v1/turns', { userId, conversationId, role: 'assistant', content: 'Noted.', index: 1 });
      return r.status === 201 ? r : undefined;
    }, 'the retried write to be stored once Neo4j is back');
    expect(retried.body.created).toBe(true);
    expect((await n.call(t.key, 'GET', `/v1/users/${userId}/conversations/${conversationId}`)).body.turns).toHaveLength(2);
    expect((await n.call(undefined, 'GET', '/readyz')).status).toBe(200);
    const internalId = `${t.tenantId}.${retried.body.turn.id as string}`;
    await n.m.audit.flush();
    expect((await n.m.pg.primary.query("SELECT 1 FROM memory_audit_log WHERE operation = 'store' AND $1 = ANY(affected_ids)", [internalId])).rowCount).toBe(1);
    expect((await n.m.pg.primary.query('SELECT 1 FROM conversation_logs WHERE turn_id = $1', [internalId])).rowCount).toBe(1);
  });
});

describe('forget-user racing writers (finding 1)', () => {
  it.each([1, 2, 3])('round %i: nothing acknowledged before the erasure answered survives it, nothing is stranded, no 5xx', async () => {
    const t = await h.tenant();
    const userId = uid('u');
    const internalId = internal(t.tenantId, userId);
    expect((await h.call(t.key, 'POST', '/v1/turns', { userId, conversationId: uid('c'), role: 'user', content: 'first' })).status).toBe(201);

    let erasedAt = Infinity;
    const survivorsAllowed = new Set<string>();
    const statuses: number[] = [];
    let stop = false;
    const writer = async (w: number) => {
      const conversationId = uid('c');
      for (let i = 0; !stop; i++) {
        const kind = i % 3;
        const r =
          kind === 0
            ? await h.call(t.key, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content: `writer ${w} turn ${i}` })
            : kind === 1
              ? await h.call(t.key, 'POST', '/v1/facts', { userId, claim: `The user said thing ${w}-${i}` })
              : await h.call(t.key, 'PUT', `/v1/users/${userId}/sessions/${conversationId}/context/k${i}`, { value: i });
        statuses.push(r.status);
        // Acknowledged after the erasure answered: allowed to stay.
        if (r.status < 300 && Date.now() > erasedAt) survivorsAllowed.add(`${kind}:${w}:${i}`);
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await new Promise((r) => setTimeout(r, 300));
    const erased = await h.call(t.key, 'DELETE', `/v1/users/${userId}`);
    erasedAt = Date.now();
    expect(erased.status).toBe(200);
    stop = true;
    await Promise.all(writers);

    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.every((s) => s === 200 || s === 201 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 409).length).toBeGreaterThan(0);
    const left = await holdings(internalId);
    const count = Object.values(left.nodes).reduce((a, b) => a + b, 0) + Object.values(left.rows).reduce((a, b) => a + b, 0) + left.workingKeys;
    if (survivorsAllowed.size === 0) expect(left).toEqual({ nodes: {}, rows: {}, workingKeys: 0 });
    // Whatever is left belongs to writes acknowledged after the erasure, and the user is reachable: never stranded.
    if (count > 0) {
      expect(survivorsAllowed.size).toBeGreaterThan(0);
      expect(await registered(t.tenantId, userId)).toBe(true);
      expect((await h.call(t.key, 'DELETE', `/v1/users/${userId}`)).status).toBe(200);
      expect(await holdings(internalId)).toEqual({ nodes: {}, rows: {}, workingKeys: 0 });
    }
  });

  it('a user erased and written again is registered again (no stale registration cache)', async () => {
    const t = await h.tenant();
    const userId = uid('u');
    const write = () => h.call(t.key, 'POST', '/v1/turns', { userId, conversationId: uid('c'), role: 'user', content: 'hi' });
    expect((await write()).status).toBe(201);
    expect((await h.call(t.key, 'DELETE', `/v1/users/${userId}`)).status).toBe(200);
    expect(await registered(t.tenantId, userId)).toBe(false);
    expect((await write()).status).toBe(201);
    expect(await registered(t.tenantId, userId)).toBe(true);
    expect((await h.call(t.key, 'GET', `/v1/users/${userId}/stats`)).status).toBe(200);
  });

  it('a user with memory but no registration (a lost registration) can still be erased; an unknown user is 404', async () => {
    const t = await h.tenant();
    const userId = uid('u');
    expect((await h.call(t.key, 'POST', '/v1/turns', { userId, conversationId: uid('c'), role: 'user', content: 'hi' })).status).toBe(201);
    await h.m.pg.primary.query('DELETE FROM tenant_users WHERE tenant_id = $1 AND user_id = $2', [t.tenantId, userId]);
    expect((await h.call(t.key, 'DELETE', `/v1/users/${userId}`)).status).toBe(200);
    expect(await holdings(internal(t.tenantId, userId))).toEqual({ nodes: {}, rows: {}, workingKeys: 0 });
    expect((await h.call(t.key, 'DELETE', `/v1/users/${uid('u')}`)).status).toBe(404);
  });
});

describe('409 USER_BEING_ERASED is documented on exactly the routes that answer it', () => {
  it('while a user is being erased, every documented route answers 409 and writes nothing; every other writing route does not', async () => {
    const t = await h.tenant();
    const u = await seedUser(h, t.key);
    const doc = (await h.call(undefined, 'GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>> };
    const documented = new Set(
      Object.values(doc.paths)
        .flatMap((item) => Object.values(item))
        .filter((op) => op.responses['409'] && JSON.stringify(op.responses['409']).includes('USER_BEING_ERASED'))
        .map((op) => op.operationId),
    );
    expect(documented.has('storeTurn')).toBe(true);
    expect(documented.has('storeTurns')).toBe(true);
    const internalId = internal(t.tenantId, u.userId);
    const before = await holdings(internalId);
    const answered: Record<string, number> = {};
    await h.m.fence.closed(internalId, async () => {
      for (const r of ROUTES) {
        // Reads by GET never enter the fence; the erasure itself would wait for this one.
        if (r.method === 'get' || r.access === 'erase') continue;
        const c = happy[r.id]!(u);
        answered[r.id] = (await h.call(t.key, c.method, c.path, c.body)).status;
      }
    });
    const refused = Object.keys(answered).filter((id) => answered[id] === 409);
    expect(Object.keys(answered).filter((id) => documented.has(id) !== (answered[id] === 409))).toEqual([]);
    expect(refused.length).toBeGreaterThan(20);
    // Everything documented was called (no GET among them).
    expect([...documented].filter((id) => answered[id] === undefined)).toEqual([]);
    // Pool routes name no user (they change pools, which count the entries the user wrote): not fenced.
    const own = (x: Awaited<ReturnType<typeof holdings>>) => ({ ...x, nodes: Object.fromEntries(Object.entries(x.nodes).filter(([label]) => !label.startsWith('Pool'))) });
    expect(own(await holdings(internalId))).toEqual(own(before));
  });
});

describe('/readyz while Redis is down (finding 7)', () => {
  it('stays ready, reports Redis degraded, writes succeed on the fallbacks, an erasure is 503', async () => {
    // A port nothing listens on: Redis is down from the start.
    const r = await openHarness({ REDIS_URL: 'redis://127.0.0.1:1', AUDIT_SPOOL_DIR: spoolDir });
    try {
      const ready = await r.call(undefined, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.stores.redis).toMatchObject({ up: false, degraded: true });
      const t = await r.tenant();
      expect((await r.call(t.key, 'POST', '/v1/turns', { userId: 'u', conversationId: uid('c'), role: 'user', content: 'Redis is away' })).status).toBe(201);
      // An erasure cannot be whole without Redis: 503 with Retry-After (retried), never 500 or a half-done 200.
      const erase = await r.call(t.key, 'DELETE', '/v1/users/u');
      expect([erase.status, erase.body.error?.details?.store]).toEqual([503, 'redis']);
      expect(erase.headers.get('retry-after')).toBeTruthy();
    } finally {
      await r.close();
    }
  });
});
