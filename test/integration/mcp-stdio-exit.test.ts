import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { uid } from '../support/stack';

const ROOT = join(__dirname, '..', '..');

/** `mnemograph mcp` as an agent runtime starts it, after an MCP initialize handshake over raw JSON-RPC. */
async function startMcp() {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'mcp', '--user', uid('u')], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const initialized = new Promise<unknown>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n').find((l) => l.includes('"id":1'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(() => reject(new Error(`mcp exited before answering initialize: ${stderr}`)));
  });
  child.stdin.write(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'exit-test', version: '1.0.0' } } }) + '\n',
  );
  expect(await initialized).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: expect.any(String) } } });
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  return { child, exited, stderr: () => stderr };
}

describe('mnemograph mcp (stdio) exits cleanly', () => {
  it('with code 0 when its input ends (the client hung up)', async () => {
    const mcp = await startMcp();
    try {
      const t0 = performance.now();
      mcp.child.stdin.end();
      expect({ ...(await mcp.exited), stderr: mcp.stderr() }).toMatchObject({ code: 0, signal: null });
      expect(performance.now() - t0).toBeLessThan(5_000);
    } finally {
      mcp.child.kill('SIGKILL');
    }
  }, 60_000);

  it('with code 0 on SIGTERM, input still open', async () => {
    const mcp = await startMcp();
    try {
      const t0 = performance.now();
      mcp.child.kill('SIGTERM');
      expect({ ...(await mcp.exited), stderr: mcp.stderr() }).toMatchObject({ code: 0, signal: null });
      expect(performance.now() - t0).toBeLessThan(5_000);
    } finally {
      mcp.child.kill('SIGKILL');
    }
  }, 60_000);
});
