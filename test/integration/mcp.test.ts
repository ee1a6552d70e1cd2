import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { join } from 'node:path';
import { mountMcp } from '../../src/mcp/http';
import { uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

const ROOT = join(__dirname, '..', '..');
const ALL_TOOLS = [
  'confirm_fact',
  'correct_fact',
  'get_entity_info',
  'memory_consolidate',
  'memory_stats',
  'record_observation',
  'remember_fact',
  'search_memory',
  'share_to_pool',
  'short_term_read',
  'short_term_write',
  'store_turn',
];

let h: Harness;
beforeAll(async () => {
  h = await openHarness({}, { mount: mountMcp });
});
afterAll(async () => h.close());

type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean };
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; isError: boolean }> {
  const r = (await client.callTool({ name, arguments: args })) as CallResult;
  return { text: r.content.map((c) => c.text ?? '').join('\n'), isError: Boolean(r.isError) };
}

describe('MCP over stdio (the SDK client spawning `mnemograph mcp`)', () => {
  it('lists the tools with descriptions and runs each one', async () => {
    const userId = uid('u');
    const conv = uid('conv');
    const transport = new StdioClientTransport({
      command: join(ROOT, 'node_modules', '.bin', 'tsx'),
      args: [join(ROOT, 'src', 'cli', 'main.ts'), 'mcp', '--user', userId, '--conversation', conv],
      env: { ...(process.env as Record<string, string>), LOG_LEVEL: 'silent', EMBEDDING_MODE: 'inline' },
      stderr: 'pipe',
      cwd: ROOT,
    });
    const client = new Client({ name: 'mnemograph-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
      for (const t of tools) {
        expect(t.description!.length).toBeGreaterThan(30);
        expect(t.inputSchema.type).toBe('object');
      }

      expect(await call(client, 'store_turn', { role: 'user', content: 'My boss Vitaly Petrov runs Project Alpha from Berlin.' })).toEqual({ text: `stored turn ${conv}:0`, isError: false });
      const saved = await call(client, 'remember_fact', { content: 'Anna is my sister and lives in Lyon.' });
      const factId = /saved fact (\S+)/.exec(saved.text)?.[1];
      expect(factId).toBeTruthy();

      const found = await call(client, 'search_memory', { query: 'Where does my sister live?' });
      if (found.isError) throw new Error(found.text);
      expect(found.text).toContain(`fact ${factId}`);
      expect(found.text.length).toBeLessThan(6_100);

      const corrected = await call(client, 'correct_fact', { factId, newContent: 'Anna is my sister and lives in Marseille.' });
      const newId = /replaced by (\S+)/.exec(corrected.text)?.[1];
      expect(newId).toBeTruthy();
      expect(await call(client, 'confirm_fact', { factId: newId })).toEqual({ text: `fact ${newId} confirmed`, isError: false });

      await h.m.memory.upsertEntity({ userId, name: 'Vitaly Petrov', type: 'person', aliases: ['Vitya', 'my boss'], description: 'runs Project Alpha' });
      const entity = await call(client, 'get_entity_info', { name: 'Vitya' });
      expect(entity.text).toMatch(/entity \S+: Vitaly Petrov \(person\), also .*Vitya/);
      expect((await call(client, 'get_entity_info', { name: 'Nobody Known' })).text).toContain('no entity named');

      const stats = await call(client, 'memory_stats');
      expect(stats.text).toMatch(/Turn: 1/);
      expect(stats.text).toMatch(/Fact: 2/);

      expect((await call(client, 'record_observation', { content: 'prefers short answers', category: 'preference' })).text).toMatch(/^observation \S+ queued$/);
      const consolidated = await call(client, 'memory_consolidate');
      expect(consolidated.isError).toBe(false);
      expect(consolidated.text).toMatch(/^consolidation /);

      expect((await call(client, 'short_term_write', { key: 'current_task', value: 'compare flat prices', type: 'task_context' })).text).toMatch(/^noted current_task until /);
      expect((await call(client, 'short_term_read', { key: 'current_task' })).text).toMatch(/^current_task \(task_context, read 1×, until .*\): compare flat prices$/);
      expect((await call(client, 'short_term_read', {})).text).toBe('current_task (task_context): compare flat prices');
      expect((await call(client, 'short_term_read', { key: 'nothing_here' })).text).toMatch(/^NOT_FOUND/);

      const missing = await call(client, 'confirm_fact', { factId: 'no-such-fact' });
      expect(missing.isError).toBe(true);
      expect(missing.text).toMatch(/^NOT_FOUND/);
      const invalid = (await client.callTool({ name: 'store_turn', arguments: { role: 'nobody', content: '' } })) as CallResult;
      expect(invalid.isError).toBe(true);
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe('MCP over streamable HTTP (POST /v1/mcp)', () => {
  it('an agent key shares to a pool it may write, and its search_memory then includes that pool; an agent without a grant sees neither', async () => {
    const t = await h.tenant();
    const userId = uid('u');
    const poolId = uid('p');
    expect((await h.call(t.key, 'POST', '/v1/pools', { poolId, name: 'support', access: { write: ['scribe'] } })).status).toBe(201);
    const connect = async (agent: string) => {
      const key = (await h.srv.api.tenants.createKey(t.tenantId, { agentId: agent })).key;
      const client = new Client({ name: 'mnemograph-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-mnemograph-user': userId } } }));
      return client;
    };
    const scribe = await connect('scribe');
    const stranger = await connect('stranger');
    try {
      const shared = await call(scribe, 'share_to_pool', { poolId, content: 'Refunds over 500 EUR need a manager sign-off.', kind: 'decision' });
      expect(shared).toEqual({ text: expect.stringMatching(new RegExp(`^shared entry \\S+ to pool ${poolId} \\(version 1\\)$`)), isError: false });
      expect((await call(scribe, 'search_memory', { query: 'who signs off large refunds?' })).text).toContain(`pool ${poolId} entry`);
      expect((await call(stranger, 'search_memory', { query: 'Refunds over 500 EUR need a manager sign-off.' })).text).not.toContain('pool ');
      const denied = await call(stranger, 'share_to_pool', { poolId, content: 'x' });
      expect(denied.isError).toBe(true);
      expect(denied.text).toMatch(/^NOT_FOUND/);
    } finally {
      await scribe.close();
      await stranger.close();
    }
  });

  it("acts for the header user inside the key's tenant, with ids in the tenant's terms", async () => {
    const t = await h.tenant();
    const userId = uid('u');
    const connect = async (headers: Record<string, string>) => {
      const client = new Client({ name: 'mnemograph-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/v1/mcp`), { requestInit: { headers } }));
      return client;
    };
    const client = await connect({ authorization: `Bearer ${t.key}`, 'x-mnemograph-user': userId });
    try {
      expect((await client.listTools()).tools.map((x) => x.name).sort()).toEqual(ALL_TOOLS);
      expect((await call(client, 'store_turn', { role: 'user', content: 'I play the cello.', conversationId: 'c-9' })).text).toBe('stored turn c-9:0');
      const turns = await h.m.memory.getConversation(`${t.tenantId}.${userId}`, `${t.tenantId}.c-9`);
      expect(turns.map((x) => x.content)).toEqual(['I play the cello.']);
      expect((await call(client, 'memory_stats')).text).toMatch(/Turn: 1/);
    } finally {
      await client.close();
    }
    await expect(connect({ 'x-mnemograph-user': userId })).rejects.toThrow();
    const noUser = await h.call(t.key, 'POST', '/v1/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(noUser.status).toBe(400);
  });
});
