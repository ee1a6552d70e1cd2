import { ROUTES } from '../../src/api/routes';
import { mountMcp } from '../../src/mcp/http';
import { openHarness, seedUser, happy, type Harness, type SeededUser } from './api-harness';
import { uid } from '../support/stack';

/**
 * Key roles over real HTTP: a reviewer key is refused (403, nothing written) by every route
 * whose roles leave reviewers out, driven by the route table so a new route cannot be
 * missed; an agent key acts as its agent; keys are created with consistent roles only.
 */
describe('API key roles', () => {
  let h: Harness;
  let admin: { tenantId: string; key: string };
  let reviewer: string;
  let u: SeededUser;

  beforeAll(async () => {
    h = await openHarness({}, { mount: mountMcp });
    admin = await h.tenant();
    reviewer = (await h.srv.api.tenants.createKey(admin.tenantId, { name: 'review', role: 'reviewer' })).key;
    u = await seedUser(h, admin.key);
  });
  afterAll(async () => h.close());

  it('keys carry a role, and only agent keys an agent', async () => {
    const { info } = await h.srv.api.tenants.createKey(admin.tenantId, { agentId: 'planner' });
    expect(info).toMatchObject({ role: 'agent', agentId: 'planner' });
    await expect(h.srv.api.tenants.createKey(admin.tenantId, { role: 'agent' })).rejects.toThrow(/needs the agent/);
    await expect(h.srv.api.tenants.createKey(admin.tenantId, { role: 'reviewer', agentId: 'planner' })).rejects.toThrow(/not bound to an agent/);
    await expect(h.srv.api.tenants.createKey(admin.tenantId, { role: 'owner' as never })).rejects.toThrow(/key role/);
    const listed = await h.srv.api.tenants.listKeys(admin.tenantId);
    expect(listed.map((k) => k.role).sort()).toEqual(['admin', 'agent', 'reviewer']);
  });

  it.each(ROUTES.map((r) => [r.id, r] as const))('%s: a reviewer key gets 403 unless the route lists reviewers', async (_id, r) => {
    const c = happy[r.id]!(u);
    const res = await h.call(reviewer, c.method, c.path, c.body);
    if (r.roles.includes('reviewer')) {
      expect(res.status).toBe(c.status);
    } else {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { role: 'reviewer' } });
    }
  });

  it('a reviewer changed nothing, and reads statistics but not the MCP tools', async () => {
    const turns = await h.call(admin.key, 'GET', `/v1/users/${u.userId}/conversations/${u.conversationId}`);
    expect(turns.body.turns).toHaveLength(2);
    const stats = await h.call(reviewer, 'GET', `/v1/users/${u.userId}/stats`);
    expect(stats.status).toBe(200);
    const mcp = await h.call(reviewer, 'POST', '/v1/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-mnemograph-user': u.userId, accept: 'application/json, text/event-stream' });
    expect(mcp.status).toBe(403);
  });

  it('an agent key reads and writes the memory of its tenant, and nothing of another', async () => {
    const agent = (await h.srv.api.tenants.createKey(admin.tenantId, { agentId: 'planner' })).key;
    const w = await h.call(agent, 'POST', '/v1/turns', { userId: u.userId, conversationId: uid('c'), role: 'user', content: 'written by an agent' });
    expect(w.status).toBe(201);
    const other = await h.tenant();
    const r = await h.call(other.key, 'GET', `/v1/users/${u.userId}/stats`);
    expect(r.status).toBe(404);
  });
});
