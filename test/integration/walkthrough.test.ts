import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { mountMcp } from '../../src/mcp/http';
import { uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

/**
 * The README's five-minute walk-through, run as written against a real API server (a free
 * port and a fresh tenant's key stand in for :8080 and `mnemograph init`'s key): the curl
 * block through bash, the TypeScript client snippet through tsx, the MCP blocks' settings
 * through the MCP SDK's client. The README is read at run time, so an edit there is tested.
 */
const ROOT = join(__dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const DOC_URL = 'http://127.0.0.1:8080';
const run = promisify(execFile);

/** The fenced block that follows `<!-- walkthrough: NAME -->` in the README. */
function block(name: string): string {
  const m = new RegExp(`<!-- walkthrough: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(README);
  if (!m) throw new Error(`README.md has no block after <!-- walkthrough: ${name} -->`);
  return m[1]!;
}

let h: Harness;
let key: string;
let workdir: string;
beforeAll(async () => {
  h = await openHarness({}, { mount: mountMcp });
  key = (await h.tenant()).key;
  // What `mnemograph init` leaves in a checkout, as far as the walk-through reads it.
  workdir = mkdtempSync(join(tmpdir(), 'mnemograph-walkthrough-'));
  mkdirSync(join(workdir, 'config'));
  writeFileSync(join(workdir, 'config', 'mnemograph.env'), `LOG_LEVEL=silent\nMNEMOGRAPH_API_KEY=${key}\n`);
});
afterAll(async () => h.close());

describe("the README's walk-through", () => {
  it('curl: stores a turn, then recalls it', async () => {
    const script = block('curl').replaceAll(DOC_URL, h.url);
    expect(script).toContain('config/mnemograph.env');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: workdir, timeout: 60_000 });
    const [stored, bundle] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(stored).toMatchObject({ created: true, turn: { id: 'first-chat:0', userId: 'alice', content: 'My sister Anna moved to Lyon last spring.' } });
    expect(bundle.turns.map((t: any) => t.turn.content)).toContain('My sister Anna moved to Lyon last spring.');
  });

  it('the TypeScript client snippet', async () => {
    const snippet = block('client')
      .replace("'mnemograph/client'", JSON.stringify(join(ROOT, 'src', 'client', 'index.ts')))
      .replaceAll(DOC_URL, h.url);
    writeFileSync(join(workdir, 'recall.mts'), snippet);
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), ['recall.mts'], { cwd: workdir, env: { ...process.env, MNEMOGRAPH_API_KEY: key }, timeout: 60_000 });
    expect(stdout).toContain('I start at the Lyon office on Monday.');
  });

  it('MCP over HTTP with the Cursor block: lists the tools and recalls', async () => {
    const server = JSON.parse(block('mcp-http')).mcpServers.mnemograph as { url: string; headers: Record<string, string> };
    const headers = Object.fromEntries(Object.entries(server.headers).map(([k, v]) => [k, v.replace('mg_your_key', key)]));
    const client = new Client({ name: 'walkthrough', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url.replace(DOC_URL, h.url)), { requestInit: { headers } }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['search_memory', 'store_turn', 'remember_fact']));
      const found = (await client.callTool({ name: 'search_memory', arguments: { query: 'Where does Anna live?' } })) as { content: Array<{ text?: string }> };
      expect(found.content.map((c) => c.text).join('\n')).toContain('Anna moved to Lyon');
    } finally {
      await client.close();
    }
    // The Python snippet says the same.
    const python = block('agents-sdk');
    expect(python).toContain(`"url": "${server.url}"`);
    for (const name of Object.keys(server.headers)) expect(python).toContain(`"${name}"`);
  });

  it('MCP over stdio with the Claude Desktop block', async () => {
    const server = JSON.parse(block('mcp-stdio')).mcpServers.mnemograph as { command: string; args: string[]; env: Record<string, string> };
    // A fresh user: stdio tools act without a tenant, on ids as given.
    const user = uid('alice');
    const args = server.args.map((a) => a.replace('/path/to/mnemograph', ROOT)).map((a) => (a === 'alice' ? user : a));
    const env = Object.fromEntries(Object.entries(server.env).map(([k, v]) => [k, v.replace('/path/to/mnemograph', workdir)]));
    const client = new Client({ name: 'walkthrough', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: server.command, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe', cwd: tmpdir() });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await client.connect(transport).catch((err: unknown) => {
      throw new Error(`${String(err)}; stderr: ${stderr}`);
    });
    try {
      const stored = (await client.callTool({ name: 'store_turn', arguments: { role: 'user', content: 'My sister Anna moved to Lyon last spring.', conversationId: uid('c') } })) as {
        content: Array<{ text?: string }>;
        isError?: boolean;
      };
      expect(stored.isError).toBeFalsy();
      const found = (await client.callTool({ name: 'search_memory', arguments: { query: 'Where does Anna live?' } })) as { content: Array<{ text?: string }> };
      expect(found.content.map((c) => c.text).join('\n')).toContain('Anna moved to Lyon');
    } finally {
      await client.close();
    }
  });
});
