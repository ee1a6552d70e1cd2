import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onServer, pingPostgres, pingRedis } from '../../src/stack/services';

/*
 * Stores the fault suite stops and starts for real. PostgreSQL and Redis are the suite's own
 * (a private cluster, a private redis-server on free ports), so an outage disturbs nobody
 * else on the machine; Neo4j is a running instance named by its data directory (the helpers'
 * or a CI one), killed with SIGKILL and brought back by `mnemograph stack up`.
 */

/** A store the suite can take away and bring back. */
export interface StoreControl {
  name: 'postgres' | 'redis' | 'neo4j';
  /** Environment for the service (DATABASE_URL, REDIS_URL, NEO4J_URI). */
  env: Record<string, string>;
  /** Takes the store away; resolves once it no longer answers. */
  stop(): Promise<void>;
  /** Brings it back; resolves once it answers again. */
  start(): Promise<void>;
  /** Leaves the machine as it was (private stores are removed); always call, in a finally. */
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Polls `probe` every 100 ms until it resolves true; false at the deadline. */
export async function until(probe: () => Promise<boolean>, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (await probe().catch(() => false)) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A private PostgreSQL cluster (initdb in a temporary directory, run as the `postgres` user
 * when we are root), on a free port. `stop` is `pg_ctl stop -m fast`, as `pg_ctlcluster stop`.
 */
export async function privatePostgres(): Promise<StoreControl> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mnemograph-faults-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asPostgres = (cmd: string, args: string[]) => {
    const root = process.getuid?.() === 0;
    const r = root ? spawnSync('su', ['postgres', '-s', '/bin/sh', '-c', [cmd, ...args].map(shellQuote).join(' ')], { encoding: 'utf8' }) : spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  asPostgres(`${PG_BIN}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const pgCtl = (...args: string[]) => asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, ...args]);
  const start = async () => {
    pgCtl('-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, '-l', join(dir, 'log'), '-w', 'start');
    if (!(await until(() => pingPostgres(admin).then(() => true), 30_000))) throw new Error('the private PostgreSQL did not come back');
  };
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const url = `postgres://postgres@127.0.0.1:${port}/mnemograph_faults`;
  await start();
  await onServer(url, 'CREATE DATABASE mnemograph_faults');
  return {
    name: 'postgres',
    env: { DATABASE_URL: url },
    async stop() {
      pgCtl('-m', 'fast', '-w', 'stop');
    },
    start,
    async close() {
      try {
        pgCtl('-m', 'immediate', '-w', 'stop');
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A private redis-server on a free port; `stop` is `redis-cli shutdown nosave`. */
export async function privateRedis(): Promise<StoreControl> {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;
  const start = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    if (!(await until(() => pingRedis(url).then(() => true), 15_000))) throw new Error('the private Redis did not start');
  };
  await start();
  return {
    name: 'redis',
    env: { REDIS_URL: url },
    async stop() {
      spawnSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave']);
      await until(
        () =>
          pingRedis(url).then(
            () => false,
            () => true,
          ),
        10_000,
      );
    },
    start,
    async close() {
      proc?.kill('SIGKILL');
    },
  };
}

/**
 * A running Neo4j found by its data directory (its java process's command line names it).
 * `stop` is SIGKILL; `start` is `mnemograph stack up` with the same directory and ports.
 * Refuses port 7687 unless `allowDefaultPort` (the default instance is usually someone's).
 */
export function runningNeo4j(opts: { uri: string; httpPort: number; dataDir: string; allowDefaultPort?: boolean }): StoreControl {
  if (!opts.allowDefaultPort && new URL(opts.uri).port === '7687') throw new Error(`refusing to kill the Neo4j on ${opts.uri}: name another instance (NEO4J_URI, --neo4j-data-dir)`);
  // A loaded machine may need minutes to recover a killed store's transaction log.
  const env = { NEO4J_URI: opts.uri, NEO4J_HTTP_PORT: String(opts.httpPort), MNEMOGRAPH_DATA_DIR: opts.dataDir, NEO4J_STARTUP_TIMEOUT_MS: '600000' };
  const pid = (): number | undefined => {
    const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
    const line = out.split('\n').find((l) => l.includes('java') && l.includes(`${opts.dataDir}/neo4j`));
    return line ? Number(line.trim().split(/\s+/)[0]) : undefined;
  };
  return {
    name: 'neo4j',
    env: { NEO4J_URI: opts.uri },
    async stop() {
      const p = pid();
      if (!p) throw new Error(`no Neo4j process with data directory ${opts.dataDir}`);
      process.kill(p, 'SIGKILL');
      await until(async () => pid() === undefined, 10_000);
    },
    async start() {
      // Not spawnSync: the service under test runs in this process and must keep answering while Neo4j restarts.
      const child = spawn('npx', ['tsx', 'src/cli/main.ts', 'stack', 'up'], { env: { ...process.env, ...env }, cwd: join(__dirname, '../..') });
      let output = '';
      for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      if (code !== 0) throw new Error(`stack up failed: ${output}`);
    },
    async close() {
      if (!pid()) await this.start();
    },
  };
}

function shellQuote(s: string): string {
  return /^[\w./=:,@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
