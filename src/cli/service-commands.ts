import type { Config } from '../config';
import { createMnemograph } from '../container';
import { startServer } from '../api/server';
import { mountMcp } from '../mcp/http';
import { runStdioMcp } from '../mcp/stdio';
import { REPO_ROOT } from '../migrate';
import { stackUp } from '../stack';
import { exitAfter, settlesBy, shutdownSignal } from '../infra/shutdown';
import { PgTenantStore } from '../tenancy';

/**
 * `mnemograph serve` (API, optionally with the worker) and `mnemograph start` (bring up
 * the local stack, migrate, then serve with the worker): the one command of the README.
 * Both stop gracefully on SIGINT/SIGTERM: /readyz turns 503, no new connections, requests
 * and jobs under way get SHUTDOWN_TIMEOUT_MS to finish; then open connections are closed,
 * the stores are closed and the process exits (code 1 if closing the stores hangs too).
 */
export async function serveCommand(config: Config, opts: { worker: boolean; port?: number }): Promise<number> {
  // Listened for from the start: a SIGTERM while the server warms up (it answers /readyz
  // by then) or issues a first key stops it gracefully once it is up, not by the default action.
  const stopRequested = shutdownSignal();
  const m = await createMnemograph(config);
  const worker = opts.worker ? m.createWorker() : undefined;
  worker?.start();
  const srv = await startServer(m, { port: opts.port ?? config.port, mount: mountMcp });
  const tenants = new PgTenantStore(m.pg.primary, 0);
  if ((await tenants.listKeys()).length === 0) {
    // A first run has no key at all: issue one for a "local" tenant so the service is usable at once.
    const { key } = await tenants.createKey('local', { name: 'created by the first start' });
    console.log(`no API keys existed; created one for tenant "local" (shown once, store it):\n  ${key}`);
  }
  console.log(`mnemograph API on ${srv.url}  (OpenAPI ${srv.url}/v1/openapi.json, MCP ${srv.url}/v1/mcp, metrics ${srv.url}/metrics)`);
  if (worker) console.log(`worker ${worker.workerId}: ${worker.state}; jobs ${config.worker.jobs.join(', ')}`);
  const signal = await stopRequested;
  const deadline = config.shutdownTimeoutMs;
  const until = Date.now() + deadline;
  console.log(`${signal}: stopping (requests and jobs get up to ${deadline} ms)`);
  let step = 'draining the HTTP server';
  exitAfter(deadline + 5_000, () => step);
  const workerStopped = worker?.stop() ?? Promise.resolve();
  await srv.close(deadline);
  step = 'stopping the worker';
  if (!(await settlesBy(workerStopped, until))) console.log(`worker ${worker?.workerId ?? ''}: jobs still running at the deadline are left (each resumes from its checkpoint on the next run)`);
  step = 'closing the stores';
  await m.close();
  return 0;
}

export async function startCommand(config: Config, opts: { stack: boolean; port?: number }): Promise<number> {
  if (opts.stack) await stackUp(REPO_ROOT, config, (line) => console.log(line));
  return serveCommand({ ...config, migrateOnStart: true }, { worker: true, port: opts.port });
}

export async function mcpCommand(config: Config, opts: { user: string; tenant?: string; channel?: string; conversation?: string }): Promise<number> {
  await runStdioMcp(config, opts);
  return 0;
}
