import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Mnemograph } from '../container';
import { createApiApp, type ApiApp, type ApiOptions } from './app';
import { warmUp } from './warm-up';

export interface RunningServer {
  url: string;
  port: number;
  api: ApiApp;
  server: Server;
  /**
   * Drains and stops: /readyz answers 503 from now on and every response asks its client to
   * close the connection; no new connections are accepted, idle ones are closed, and requests
   * under way may finish until `deadlineMs` (default SHUTDOWN_TIMEOUT_MS), when every
   * connection still open is closed. Resolves once the server is closed; idempotent.
   */
  close(deadlineMs?: number): Promise<void>;
}

/** Listens on `port` (0: a free one) and `host` (default 127.0.0.1). */
export async function startServer(m: Mnemograph, opts: ApiOptions & { port?: number; host?: string; warmUp?: boolean } = {}): Promise<RunningServer> {
  const api = createApiApp(m, opts);
  const host = opts.host ?? m.config.api.host;
  const server = await new Promise<Server>((resolve, reject) => {
    const s = api.app.listen(opts.port ?? m.config.port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  // Listening already (a load balancer may ask), but not ready until the first request is warm.
  if (opts.warmUp !== false) {
    api.setWarming(true);
    const report = await warmUp(m, { http: () => api.rehearseBody() });
    api.setWarming(false);
    m.log.info({ subsystem: 'api', ...report }, 'warmed up');
  }
  return {
    url: `http://${host}:${port}`,
    port,
    api,
    server,
    close(deadlineMs = m.config.shutdownTimeoutMs) {
      closing ??= drain(server, api, deadlineMs);
      return closing;
    },
  };
}

async function drain(server: Server, api: ApiApp, deadlineMs: number): Promise<void> {
  api.drain();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A connection whose last request finished is closed within 100 ms, not left idle until the deadline.
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  const deadline = setTimeout(() => server.closeAllConnections(), deadlineMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
    api.close();
  }
}
