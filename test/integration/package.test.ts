import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { eventually, uid } from '../support/stack';

/**
 * The package as a user gets it: `npm pack` (the build runs in prepack), the tarball
 * installed into an empty folder with production dependencies only (`--omit=optional`
 * also leaves USE-lite out, proving the service runs without it), then the installed
 * `mnemograph` run against the test stack: --version, migrate --check, serve until /readyz
 * answers 200, and the library's two entry points resolved by require, import and tsc.
 */
const ROOT = join(__dirname, '..', '..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; optionalDependencies: Record<string, string> };
const run = promisify(execFile);

// A user's shell, not an npm script's: npm passes npm_config_* (local prefix, this repo's
// .npmrc) to what it runs, and an inner npm would install into the checkout instead.
const baseEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));
const appEnv: NodeJS.ProcessEnv = { ...baseEnv, LOG_LEVEL: 'silent', ONNXRUNTIME_NODE_INSTALL: 'skip' };

let work: string;
let app: string;
const timings: Record<string, number> = {};

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    timings[what] = Date.now() - t0;
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'mnemograph-pack-'));
  // prepack replaces dist/ in the checkout; one this test created goes again, so a checkout's
  // bin keeps running the sources (bin/mnemograph.js prefers dist/ when it exists).
  const hadDist = existsSync(join(ROOT, 'dist'));
  try {
    await timed('pack', () => run('npm', ['pack', '--pack-destination', work], { cwd: ROOT, env: baseEnv, timeout: 240_000, maxBuffer: 16 << 20 }));
  } finally {
    if (!hadDist) rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
  }
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${work}`);
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-test', version: '1.0.0', private: true }));
  await timed('install', () => run('npm', ['install', join(work, tarball), '--prefer-offline', '--no-audit', '--no-fund', '--omit=optional'], { cwd: app, env: appEnv, timeout: 300_000 }));
}, 600_000);

afterAll(() => {
  console.log(
    `package test: ${Object.entries(timings)
      .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`)
      .join(', ')}`,
  );
  if (work) rmSync(work, { recursive: true, force: true });
});

const installed = () => join(app, 'node_modules', PKG.name);
const bin = () => join(app, 'node_modules', '.bin', 'mnemograph');

describe('the packed and installed package', () => {
  it('holds the compiled CLI, the migrations and the launcher, and neither sources nor tsx', () => {
    for (const f of [
      'dist/cli/main.js',
      'dist/index.d.ts',
      'dist/client/index.d.ts',
      'dist/embedding/onnx-worker.js',
      'studio/dist/index.html',
      'bin/mnemograph.js',
      'cypher',
      'sql',
      'neo4j/pom.xml',
      'neo4j/src/main/java/dev/mnemograph/neo4j/Launcher.java',
      'config/mnemograph.env.example',
      'LICENSE',
      'CHANGELOG.md',
      'README.md',
    ]) {
      expect([f, existsSync(join(installed(), f))]).toEqual([f, true]);
    }
    for (const dir of ['cypher', 'sql']) expect(readdirSync(join(installed(), dir))).toEqual(readdirSync(join(ROOT, dir)));
    for (const f of ['src', 'test', 'bench', 'tsconfig.json', 'neo4j/target']) expect([f, existsSync(join(installed(), f))]).toEqual([f, false]);
    expect(existsSync(join(app, 'node_modules', 'tsx'))).toBe(false);
    for (const name of Object.keys(PKG.optionalDependencies)) expect([name, existsSync(join(app, 'node_modules', name))]).toEqual([name, false]);
  });

  it('prints the version of package.json with `npx mnemograph --version`', async () => {
    const { stdout } = await timed('version', () => run('npx', ['--no-install', 'mnemograph', '--version'], { cwd: app, env: appEnv, timeout: 60_000 }));
    expect(stdout.trim()).toBe(PKG.version);
  });

  it('resolves mnemograph and mnemograph/client from require, import and TypeScript', async () => {
    const cjs = "const m = require('mnemograph'); const c = require('mnemograph/client'); console.log(typeof m.createMnemograph, typeof m.loadConfig, m.VERSION, typeof c.MnemographClient)";
    expect((await run('node', ['-e', cjs], { cwd: app, env: appEnv })).stdout.trim()).toBe(`function function ${PKG.version} function`);
    const esm = "import { createMnemograph, VERSION } from 'mnemograph'; import { MnemographClient } from 'mnemograph/client'; console.log(typeof createMnemograph, VERSION, typeof MnemographClient)";
    expect((await run('node', ['--input-type=module', '-e', esm], { cwd: app, env: appEnv })).stdout.trim()).toBe(`function ${PKG.version} function`);

    // The exports map's types, under both of TypeScript's Node resolutions.
    writeFileSync(
      join(app, 'check.ts'),
      [
        "import { createMnemograph, loadConfig, VERSION, type Config } from 'mnemograph';",
        "import { MnemographClient, type ClientOptions } from 'mnemograph/client';",
        'const options: ClientOptions = { baseUrl: "http://127.0.0.1:1", apiKey: "k" };',
        'export const client: MnemographClient = new MnemographClient(options);',
        'export const start: (c: Config) => Promise<unknown> = createMnemograph;',
        'export const version: string = VERSION;',
        'export const load = loadConfig;',
        '',
      ].join('\n'),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const resolution of [
      ['--module', 'node16', '--moduleResolution', 'node16'],
      ['--module', 'commonjs', '--moduleResolution', 'node10'],
    ]) {
      await timed(`tsc ${resolution[3]}`, () =>
        run('node', [tsc, '--noEmit', '--strict', '--skipLibCheck', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types'), ...resolution, 'check.ts'], {
          cwd: app,
          env: appEnv,
          timeout: 120_000,
        }).catch((err: Error & { stdout?: string }) => {
          throw new Error(`tsc ${resolution.join(' ')} failed:\n${err.stdout ?? err.message}`);
        }),
      );
    }
  }, 180_000);

  it('checks the test database with `npx mnemograph migrate --check`', async () => {
    const { stdout } = await timed('migrate --check', () => run('npx', ['--no-install', 'mnemograph', 'migrate', '--check'], { cwd: app, env: appEnv, timeout: 60_000 }));
    expect(stdout).toMatch(/neo4j: up to date/);
    expect(stdout).toMatch(/postgres: up to date/);
  });

  it('serves the API until /readyz answers 200, reports its version, and stops on SIGTERM', async () => {
    const port = await freePort();
    const out = await untilReady(['serve', '--port', String(port)], port, async () => {
      const doc = (await (await fetch(`http://127.0.0.1:${port}/v1/openapi.json`)).json()) as { info: { version: string } };
      expect(doc.info.version).toBe(PKG.version);
    });
    expect(out).toContain(`mnemograph API on http://127.0.0.1:${port}`);
  }, 120_000);

  it('starts with `mnemograph start`: the stack checked (the running Neo4j reused), migrated, API and worker up', async () => {
    const port = await freePort();
    const out = await untilReady(['start', '--port', String(port)], port);
    expect(out).toMatch(/neo4j: reused/);
    expect(out).toMatch(/worker \S+: RUNNING/i);
  }, 120_000);

  it('serves the MCP tools over stdio with `mnemograph mcp`, under the package version', async () => {
    const transport = new StdioClientTransport({ command: bin(), args: ['mcp', '--user', uid('u')], env: appEnv as Record<string, string>, cwd: app, stderr: 'pipe' });
    const client = new Client({ name: 'package-test', version: '1.0.0' });
    await timed('mcp', async () => {
      await client.connect(transport);
      try {
        expect(client.getServerVersion()).toMatchObject({ name: 'mnemograph', version: PKG.version });
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('search_memory');
      } finally {
        await client.close();
      }
    });
  }, 60_000);

  it('names the npm install command when USE-lite is selected without its optional packages', async () => {
    const child = spawn(bin(), ['serve', '--port', String(await freePort())], { cwd: app, env: { ...appEnv, EMBEDDING_MODEL: 'use-lite-512' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collect(child);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    const install = Object.entries(PKG.optionalDependencies)
      .map(([name, version]) => `${name}@${version}`)
      .join(' ');
    expect(output()).toContain(`npm install ${install}`);
  }, 60_000);
});

/**
 * Runs the installed CLI with `args` until it has printed its listening line (its SIGTERM
 * handler is in place from then on) and GET /readyz on `port` answers 200, runs `check`,
 * then sends SIGTERM and expects exit code 0 within 30 s; returns what it printed. A process
 * that dies first fails at once, with its output, instead of at the deadline.
 */
async function untilReady(args: string[], port: number, check: () => Promise<void> = async () => undefined): Promise<string> {
  const child = spawn(bin(), args, { cwd: app, env: appEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const died = exited.then((code) => Promise.reject(new Error(`${args[0]} exited with ${code}:\n${output()}`)));
    await timed(`${args[0]} until ready`, () =>
      Promise.race([
        eventually(
          async () => output().includes('mnemograph API on') && (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
          `\`mnemograph ${args[0]}\` to say it listens and GET /readyz to answer 200`,
          90_000,
        ),
        died,
      ]),
    );
    await check();
  } finally {
    child.kill('SIGTERM');
  }
  const code = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref())]);
  if (code === 'timeout') child.kill('SIGKILL');
  expect([code, output()]).toEqual([0, expect.any(String)]);
  return output();
}

function collect(child: ChildProcess): () => string {
  const chunks: string[] = [];
  child.stdout?.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => chunks.push(d.toString()));
  return () => chunks.join('');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
