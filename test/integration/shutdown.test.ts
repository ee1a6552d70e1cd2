import { spawn } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { eventually } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

const ROOT = join(__dirname, '..', '..');

/** A route held open until the test lets it go: a slow request under way during shutdown. */
function slowRoute() {
  let release: () => void = () => undefined;
  let started: () => void = () => undefined;
  const state = {
    started: new Promise<void>((r) => (started = r)),
    release: () => release(),
    mount: (v1: import('express').Router) => {
      v1.get('/slow', async (_req, res) => {
        started();
        await new Promise<void>((r) => {
          release = r;
          setTimeout(r, 30_000).unref();
        });
        res.json({ slow: 'done' });
      });
    },
  };
  return state;
}

/** Reads HTTP/1.1 responses off a raw socket: status, headers, body (Content-Length framed). */
function responses(socket: Socket) {
  let buf = '';
  const parsed: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    buf += d;
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = buf.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? 0);
      if (buf.length < end + 4 + length) return;
      parsed.push({ status: Number(statusLine!.split(' ')[1]), headers, body: buf.slice(end + 4, end + 4 + length) });
      buf = buf.slice(end + 4 + length);
    }
  });
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return { parsed, closed };
}

const request = (path: string, key?: string) => `GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: keep-alive\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}\r\n`;

describe('HTTP shutdown', () => {
  let h: Harness;
  afterEach(async () => h.close());

  it('drains: /readyz answers 503 with Connection: close, the request under way finishes, new connections are refused, and close resolves once it is done', async () => {
    const slow = slowRoute();
    h = await openHarness({}, { mount: slow.mount });
    const { key } = await h.tenant();
    const socket = connect(h.srv.port, '127.0.0.1');
    const res = responses(socket);
    socket.write(request('/v1/slow', key));
    await slow.started;

    const t0 = performance.now();
    const closing = h.srv.close(10_000);
    expect(h.srv.api.draining).toBe(true);
    // A request arriving on the open connection while draining (pipelined behind the slow one).
    socket.write(request('/readyz'));
    expect(h.srv.server.listening).toBe(false);
    await expect(fetch(`${h.url}/healthz`)).rejects.toThrow();
    slow.release();
    await closing;
    const ms = performance.now() - t0;
    await res.closed;

    expect(res.parsed.map((r) => r.status)).toEqual([200, 503]);
    expect(JSON.parse(res.parsed[0]!.body)).toEqual({ slow: 'done' });
    expect(JSON.parse(res.parsed[1]!.body)).toMatchObject({ ready: false, draining: true, stores: { neo4j: { up: true } } });
    expect(res.parsed[1]!.headers.connection).toBe('close');
    expect(ms).toBeLessThan(5_000);
  });

  it('closes connections still open at the deadline', async () => {
    const slow = slowRoute();
    h = await openHarness({}, { mount: slow.mount });
    const { key } = await h.tenant();
    const held = fetch(`${h.url}/v1/slow`, { headers: { authorization: `Bearer ${key}` } });
    await slow.started;
    const t0 = performance.now();
    await h.srv.close(800);
    const ms = performance.now() - t0;
    await expect(held).rejects.toThrow();
    slow.release();
    expect(ms).toBeGreaterThanOrEqual(750);
    expect(ms).toBeLessThan(2_000);
  });
});

describe('mnemograph serve --worker (a real process)', () => {
  it('on SIGTERM closes a connection held open and exits 0 within SHUTDOWN_TIMEOUT_MS', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'serve', '--worker', '--port', String(port)], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', SHUTDOWN_TIMEOUT_MS: '2000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, `the API on port ${port} (output: ${out})`, 60_000);
      // A client that sent half a request and went quiet.
      const socket = connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n');
      const socketClosed = new Promise<void>((r) => socket.once('close', () => r()));
      socket.on('error', () => undefined);

      const t0 = performance.now();
      child.kill('SIGTERM');
      const code = await exited;
      const ms = performance.now() - t0;
      await socketClosed;
      expect({ code, out }).toMatchObject({ code: 0, out: expect.stringContaining('SIGTERM: stopping') });
      expect(ms).toBeLessThan(2_000 + 3_000);
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}
