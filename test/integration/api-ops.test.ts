import Ajv2020 from 'ajv/dist/2020';
import { ROUTES } from '../../src/api/routes';
import { openApiPath } from '../../src/api/openapi';
import { pathParams } from '../../src/api/contract';
import { eventually, testConfig, uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';
import { TcpProxy } from '../support/tcp-proxy';

const neo4jTarget = (() => {
  const m = /:\/\/([^:/]+):(\d+)/.exec(testConfig().neo4j.uri)!;
  return { host: m[1]!, port: Number(m[2]) };
})();

let proxy: TcpProxy;
let h: Harness;
beforeAll(async () => {
  proxy = new TcpProxy(neo4jTarget);
  await proxy.open();
  h = await openHarness({ NEO4J_URI: `bolt://127.0.0.1:${proxy.port}`, API_RATE_LIMIT_PER_MINUTE: '5' }, { readyTimeoutMs: 1500 });
});
afterAll(async () => {
  await h.close();
  await proxy.close();
});

describe('readiness', () => {
  it('/readyz turns unready when Neo4j is unreachable and ready again after; /healthz stays up', async () => {
    expect((await h.call(undefined, 'GET', '/readyz')).status).toBe(200);
    await proxy.close();
    const down = await eventually(async () => {
      const r = await h.call(undefined, 'GET', '/readyz');
      return r.status === 503 ? r : undefined;
    }, 'readyz to report Neo4j down');
    expect(down.body).toMatchObject({ ready: false, stores: { neo4j: { up: false }, postgres: { up: true }, redis: { up: true } } });
    expect(down.body.stores.neo4j.error).toBeTruthy();
    expect((await h.call(undefined, 'GET', '/healthz')).status).toBe(200);
    const t = await h.tenant();
    const write = await h.call(t.key, 'POST', '/v1/turns', { userId: 'u1', conversationId: uid('c'), role: 'user', content: 'while Neo4j is away' });
    expect(write.status).toBe(503);
    expect(write.body.error).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { store: 'neo4j' } });

    await proxy.open();
    const up = await eventually(
      async () => {
        const r = await h.call(undefined, 'GET', '/readyz');
        return r.status === 200 ? r : undefined;
      },
      'readyz to report Neo4j back',
      20_000,
    );
    expect(up.body.stores.neo4j.up).toBe(true);
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After once a key exceeds its per-minute budget; other keys are unaffected', async () => {
    const [a, b] = [await h.tenant(), await h.tenant()];
    await h.call(a.key, 'POST', '/v1/turns', { userId: 'u', conversationId: uid('c'), role: 'user', content: 'hi' });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<Harness['call']>> | undefined;
    for (let i = 0; i < 6; i++) {
      last = await h.call(a.key, 'GET', '/v1/users/u/stats');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(last!.body.error.code).toBe('RATE_LIMITED');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await h.call(b.key, 'GET', '/v1/users/u/stats')).status).toBe(404);
    // The budget lives in Redis, shared by every API instance.
    expect(Number(await h.m.redis.get(`ratelimit:${a.keyId}`))).toBeGreaterThanOrEqual(6);
  });
});

describe('invalid API keys', () => {
  it('are throttled per client address with 429, while a valid key from the same address still works', async () => {
    // A harness of its own, with its own Redis key prefix, so no other test's failures count.
    const g = await openHarness({ API_AUTH_FAILURES_PER_MINUTE: '3', REDIS_KEY_PREFIX: `${uid('p')}:` });
    try {
      const t = await g.tenant();
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await g.call(`mg_nope_${i}`, 'GET', '/v1/users/u/stats')).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      const blocked = await g.call('mg_nope_x', 'GET', '/v1/users/u/stats');
      expect(blocked.body.error.code).toBe('TOO_MANY_AUTH_FAILURES');
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await g.call(t.key, 'GET', '/v1/users/u/stats')).status).toBe(404);
    } finally {
      await g.close();
    }
  });
});

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3 document covering every route with its parameters, bodies and error responses', async () => {
    const doc = (await h.call(undefined, 'GET', '/v1/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'Mnemograph', version: expect.any(String) });

    const ops: Array<{ id: string; method: string; path: string; op: any }> = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) ops.push({ id: op.operationId, method, path, op });
    }
    const ids = ops.map((o) => o.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual([...h.srv.api.routes.map((r) => r.id), 'healthz', 'readyz', 'metrics', 'openapi'].sort());

    for (const r of h.srv.api.routes) {
      const o = ops.find((x) => x.id === r.id)!;
      expect({ id: r.id, method: o.method, path: o.path }).toEqual({ id: r.id, method: r.method, path: openApiPath(r.path) });
      const declared = (o.op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => [p.name, p.required]);
      expect(declared.sort()).toEqual(
        pathParams(r.path)
          .map((p) => [p, true])
          .sort(),
      );
      if (r.method === 'post' || r.method === 'put') expect(o.op.requestBody.content['application/json'].schema).toBeDefined();
      // 409 USER_BEING_ERASED on routes that enter the erasure fence (faults.test.ts checks which answer it).
      const fenced = o.op.responses['409'] ? ['409'] : [];
      expect(Object.keys(o.op.responses).sort()).toEqual([String(r.status), '400', '401', '403', '404', ...fenced, '413', '429', '503'].sort());
      expect(o.op.security).toEqual([{ apiKey: [] }]);
    }
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });

    // Every $ref resolves, and every schema compiles as JSON Schema.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = /#\/components\/schemas\/(.+)"$/.exec(ref)?.[1];
      expect(doc.components.schemas[name!]).toBeDefined();
    }
    const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: 'doc', $defs: JSON.parse(JSON.stringify(doc.components.schemas).replace(/"#\/components\/schemas\//g, '"#/$defs/')) });
    const schemas: unknown[] = [];
    for (const { op } of ops) {
      for (const p of op.parameters ?? []) schemas.push(p.schema);
      for (const c of Object.values<any>(op.requestBody?.content ?? {})) schemas.push(c.schema);
      for (const resp of Object.values<any>(op.responses)) for (const c of Object.values<any>(resp.content ?? {})) schemas.push(c.schema);
    }
    for (const s of schemas) {
      const rewritten = JSON.parse(JSON.stringify(s).replace(/"#\/components\/schemas\//g, '"doc#/$defs/'));
      expect(() => ajv.compile(rewritten)).not.toThrow();
    }
    expect(schemas.length).toBeGreaterThan(ROUTES.length * 4);
  });
});
