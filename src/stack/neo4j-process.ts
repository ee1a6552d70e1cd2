import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { boltPort, type Config } from '../config';
import { StackError } from '../errors';
import { dataRoot } from '../package-info';
import { createNeo4jDriver, waitForNeo4j } from '../infra/neo4j';
import { processAlive, portOpen, run, waitFor } from './process';

/** Where the embedded Neo4j lives: the Maven project, its data, pid and log files. */
export interface Neo4jPaths {
  project: string;
  dataDir: string;
  pidFile: string;
  logFile: string;
}

export function neo4jPaths(repoRoot: string, config: Config): Neo4jPaths {
  const base = resolve(dataRoot(repoRoot), config.dataDir);
  return {
    project: join(repoRoot, 'neo4j'),
    dataDir: join(base, 'neo4j'),
    pidFile: join(base, 'neo4j.pid'),
    logFile: join(base, 'neo4j.out.log'),
  };
}

// The module opens Neo4j's server script passes on Java 17, so the embedded DBMS behaves as the server does.
const JVM_FLAGS = [
  '-XX:+UseG1GC',
  '-XX:-OmitStackTraceInFastThrow',
  '-XX:+DisableExplicitGC',
  '-Djdk.nio.maxCachedBufferSize=1024',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '-Dlog4j2.disable.jmx=true',
  // JVM warnings would otherwise go to stdout, where the launcher prints its READY line.
  '-Xlog:disable',
  '-Xlog:all=warning:stderr',
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/java.io=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-opens=java.base/java.lang=ALL-UNNAMED',
  '--add-opens=java.base/java.util=ALL-UNNAMED',
  '--add-opens=java.base/java.util.concurrent=ALL-UNNAMED',
  '--add-opens=java.base/java.net=ALL-UNNAMED',
  '--add-exports=java.base/sun.nio.ch=ALL-UNNAMED',
  '--enable-native-access=ALL-UNNAMED',
];

const LAUNCHER = 'dev.mnemograph.neo4j.Launcher';

/** Builds the Maven project when its sources are newer than the last build. */
export function ensureNeo4jBuilt(paths: Neo4jPaths): void {
  run('java', ['-version'], 'run Neo4j', { missingHint: 'install Java 17 (apt-get install openjdk-17-jre-headless)' });
  const stamp = join(paths.project, 'target', '.built');
  const newest = Math.max(statSync(join(paths.project, 'pom.xml')).mtimeMs, ...listFiles(join(paths.project, 'src')).map((f) => statSync(f).mtimeMs));
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= newest && existsSync(join(paths.project, 'target', 'lib'))) return;
  process.stderr.write('building the embedded Neo4j launcher with Maven (first run downloads Neo4j from Maven Central)...\n');
  run('mvn', ['-B', '-q', '-f', join(paths.project, 'pom.xml'), 'package', '-DskipTests'], 'building the Neo4j launcher', {
    missingHint: 'install Maven 3.8+ (apt-get install maven)',
  });
  writeFileSync(stamp, new Date().toISOString());
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]));
}

export function readPid(paths: Neo4jPaths): number | undefined {
  if (!existsSync(paths.pidFile)) return undefined;
  const pid = Number(readFileSync(paths.pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined;
}

export type Neo4jUpResult = { state: 'started' | 'reused'; pid?: number; ms: number };

/**
 * Starts the embedded Neo4j unless ours is already running (then reuses it). Fails with the
 * tail of Neo4j's log when the process dies or does not answer before the deadline, and
 * with a clear message when another program holds the Bolt port.
 */
export async function neo4jUp(paths: Neo4jPaths, config: Config): Promise<Neo4jUpResult> {
  const t0 = Date.now();
  const port = boltPort(config.neo4j.uri);
  const host = config.neo4j.uri.replace(/^[a-z+]+:\/\//, '').replace(/:\d+\/?$/, '');
  const running = readPid(paths);
  if (running) {
    await waitUntilAnswering(config, paths, config.neo4j.startupTimeoutMs).catch((err: unknown) => {
      // The launcher sets NEO4J_PASSWORD when it starts; one already running keeps the old password.
      if (!/rejected the credentials/.test((err as Error).message)) throw err;
      throw new StackError(
        `the local Neo4j (pid ${running}) was started with another password than NEO4J_PASSWORD (changed by \`mnemograph init\`?); restart it so it takes the new one: \`npm run stack:down\`, then \`npm run stack:up\` or \`npm start\``,
        { pid: running },
      );
    });
    return { state: 'reused', pid: running, ms: Date.now() - t0 };
  }
  if (await portOpen(host, port)) {
    // Someone else's Neo4j (a server, another checkout) is fine if it accepts our credentials.
    try {
      await waitUntilAnswering(config, paths, 2_000);
      return { state: 'reused', ms: Date.now() - t0 };
    } catch {
      throw new StackError(`port ${port} is already taken by another program, not a Neo4j that accepts NEO4J_USER/NEO4J_PASSWORD; stop it or set NEO4J_URI to another port`, { port });
    }
  }
  if (await portOpen('127.0.0.1', config.neo4j.httpPort)) {
    throw new StackError(`HTTP port ${config.neo4j.httpPort} (Neo4j Browser) is already taken; stop that program or set NEO4J_HTTP_PORT`, { port: config.neo4j.httpPort });
  }

  ensureNeo4jBuilt(paths);
  mkdirSync(paths.dataDir, { recursive: true });
  const out = openSync(paths.logFile, 'w');
  const child = spawn('java', [`-Xmx${config.neo4j.heap}`, ...JVM_FLAGS, '-cp', `${join(paths.project, 'target', 'classes')}:${join(paths.project, 'target', 'lib', '*')}`, LAUNCHER, paths.dataDir], {
    detached: true,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      NEO4J_BOLT_PORT: String(port),
      NEO4J_HTTP_PORT: String(config.neo4j.httpPort),
      NEO4J_PASSWORD: config.neo4j.password,
      NEO4J_PAGECACHE: config.neo4j.pageCache,
      NEO4J_VECTOR_MERGE_FACTOR: String(config.neo4j.vectorMergeFactor),
    },
  });
  closeSync(out);
  child.unref();
  if (child.pid === undefined) throw new StackError('could not start java for Neo4j');
  writeFileSync(paths.pidFile, String(child.pid));

  const ready = await waitFor(
    async () => {
      if (!processAlive(child.pid!)) throw new Error('exited');
      return readFileSync(paths.logFile, 'utf8').includes('MNEMOGRAPH_NEO4J_READY');
    },
    config.neo4j.startupTimeoutMs,
    250,
  );
  if (!ready || !processAlive(child.pid)) {
    if (processAlive(child.pid)) process.kill(child.pid, 'SIGKILL');
    rmSync(paths.pidFile, { force: true });
    throw new StackError(`Neo4j failed to start${ready ? '' : ` within ${config.neo4j.startupTimeoutMs} ms`}; the end of its log (${paths.logFile}):\n${logTail(paths)}`);
  }
  await waitUntilAnswering(config, paths, config.neo4j.startupTimeoutMs);
  return { state: 'started', pid: child.pid, ms: Date.now() - t0 };
}

async function waitUntilAnswering(config: Config, paths: Neo4jPaths, deadlineMs: number): Promise<void> {
  const driver = createNeo4jDriver(config.neo4j);
  try {
    await waitForNeo4j(driver, { uri: config.neo4j.uri, database: config.neo4j.database }, deadlineMs);
  } catch (err) {
    throw new StackError(`${(err as Error).message}\nNeo4j log tail (${paths.logFile}):\n${logTail(paths)}`);
  } finally {
    await driver.close();
  }
}

export function logTail(paths: Neo4jPaths, lines = 25): string {
  const chunks: string[] = [];
  for (const file of [paths.logFile, join(paths.dataDir, 'logs', 'debug.log')]) {
    if (existsSync(file)) chunks.push(readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n'));
  }
  return chunks.join('\n---\n') || '(no log written)';
}

/** Stops the Neo4j that neo4jUp started (SIGTERM, then SIGKILL after the deadline). */
export async function neo4jDown(paths: Neo4jPaths, deadlineMs = 60_000): Promise<boolean> {
  const pid = readPid(paths);
  if (!pid) {
    rmSync(paths.pidFile, { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const stopped = await waitFor(async () => !processAlive(pid), deadlineMs, 200);
  if (!stopped) process.kill(pid, 'SIGKILL');
  rmSync(paths.pidFile, { force: true });
  return true;
}
