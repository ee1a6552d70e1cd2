import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { mountMcp } from '../../src/mcp/http';
import { TenantNamespace } from '../../src/access';
import { openHarness, type Harness } from './api-harness';
import { uid } from '../support/stack';

/**
 * Every audit row says who acted (sql/006 actor columns, src/audit/actor.ts): over HTTP,
 * MCP over HTTP, the CLI and a worker job, each row carries its tenant, key, agent, surface,
 * request id, and for the worker its job and run. At `reads`, a recall row lists the ids of
 * the items it returned.
 */
const ROOT = join(__dirname, '..', '..');
const exec = promisify(execFile);

interface ActorRow {
  operation: string;
  user_id: string | null;
  affected_ids: string[] | null;
  tenant_id: string | null;
  key_id: string | null;
  agent_id: string | null;
  surface: string | null;
  request_id: string | null;
  job_name: string | null;
  job_run_id: string | null;
}

describe('the actor of every audit row', () => {
  let h: Harness;
  let tenantId: string;
  let agentKey: string;
  let agentKeyId: string;
  let ns: TenantNamespace;
  const userId = uid('u');
  const conversationId = uid('c');

  const rows = async (where: string, params: unknown[]): Promise<ActorRow[]> => {
    await h.m.audit.flush();
    const sql = `SELECT operation, user_id, affected_ids, tenant_id, key_id, agent_id, surface, request_id, job_name, job_run_id FROM memory_audit_log WHERE ${where} ORDER BY id`;
    return (await h.m.pg.primary.query<ActorRow>(sql, params)).rows;
  };

  beforeAll(async () => {
    h = await openHarness({ AUDIT_LEVEL: 'reads' }, { mount: mountMcp });
    ({ tenantId } = await h.tenant());
    ns = new TenantNamespace(tenantId);
    const made = await h.srv.api.tenants.createKey(tenantId, { agentId: 'planner' });
    agentKey = made.key;
    agentKeyId = made.info.id;
  });
  afterAll(async () => h.close());

  it('HTTP: tenant, key, agent, surface and the request id', async () => {
    for (const [i, content] of ['I work at Google.', 'My sister Alice lives in Berlin.'].entries()) {
      const r = await h.call(agentKey, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content }, { 'x-request-id': `req-turn-${i}` });
      expect(r.status).toBe(201);
    }
    const written = await rows("user_id = $1 AND operation = 'store'", [ns.toInternal(userId, 'userId')]);
    expect(written).toHaveLength(2);
    expect(written.map((r) => r.request_id)).toEqual(['req-turn-0', 'req-turn-1']);
    for (const r of written) expect(r).toMatchObject({ tenant_id: tenantId, key_id: agentKeyId, agent_id: 'planner', surface: 'http', job_name: null, job_run_id: null });
  });

  it('at level reads, a recall row lists the ids of the items it returned', async () => {
    const r = await h.call(agentKey, 'POST', '/v1/recall', { userId, query: 'where does Alice live?', topK: 5 }, { 'x-request-id': 'req-recall' });
    expect(r.status).toBe(200);
    const b = r.body as { turns: Array<{ turn: { id: string } }>; facts: Array<{ id: string }>; entities: Array<{ id: string }> };
    const returned = [...b.turns.map((t) => t.turn.id), ...b.facts.map((f) => f.id), ...b.entities.map((e) => e.id)];
    expect(returned.length).toBeGreaterThan(0);
    const [row] = await rows("request_id = 'req-recall' AND operation = 'remember' AND tenant_id = $1", [tenantId]);
    expect(row).toMatchObject({ surface: 'http', agent_id: 'planner', key_id: agentKeyId });
    expect((row!.affected_ids ?? []).map((id) => ns.toExternal(id)).sort()).toEqual([...new Set(returned)].sort());
  });

  it('MCP over HTTP: surface mcp, with the key, agent and request id of the HTTP request', async () => {
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'store_turn', arguments: { role: 'user', content: 'I love hiking.', conversationId } } };
    const r = await h.call(agentKey, 'POST', '/v1/mcp', call, { 'x-mnemograph-user': userId, accept: 'application/json, text/event-stream', 'x-request-id': 'req-mcp-7' });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain('isError":true');
    const [row] = await rows("request_id = 'req-mcp-7' AND tenant_id = $1", [tenantId]);
    expect(row).toMatchObject({ operation: 'store', surface: 'mcp', key_id: agentKeyId, agent_id: 'planner', user_id: ns.toInternal(userId, 'userId') });
  });

  it('a worker job: surface worker, the job and its run id, the tenant of the user it acted on', async () => {
    const w = h.m.createWorker({});
    try {
      const r = await w.runJob('consolidate', { userIds: [ns.toInternal(userId, 'userId')] });
      expect(r.status).toBe('succeeded');
    } finally {
      await w.stop();
    }
    const written = await rows("user_id = $1 AND surface = 'worker'", [ns.toInternal(userId, 'userId')]);
    expect(written.length).toBeGreaterThan(0);
    const runIds = new Set(written.map((r) => r.job_run_id));
    expect(runIds.size).toBe(1);
    const run = await h.m.pg.primary.query('SELECT job FROM worker_job_runs WHERE id = $1', [[...runIds][0]]);
    expect(run.rows).toEqual([{ job: 'consolidate' }]);
    for (const r of written) expect(r).toMatchObject({ tenant_id: tenantId, key_id: null, agent_id: null, job_name: 'consolidate', request_id: null });
  });

  it('the CLI: surface cli, the tenant of --tenant and one request id per command', async () => {
    const env = { ...process.env, LOG_LEVEL: 'silent', AUDIT_LEVEL: 'reads' };
    await exec(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'src', 'cli', 'main.ts'), 'search', '--tenant', tenantId, '--user', userId, 'Google'], { cwd: ROOT, env, timeout: 90_000 });
    const [row] = await rows("user_id = $1 AND operation = 'remember' AND surface = 'cli'", [ns.toInternal(userId, 'userId')]);
    expect(row).toMatchObject({ tenant_id: tenantId, key_id: null, agent_id: null, job_name: null });
    expect(row!.request_id).toMatch(/^cli-[0-9a-f-]{36}$/);
  }, 180_000);
});
