import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Mnemograph } from '../container';
import { createApiApp, type ApiApp, type ApiOptions } from './app';

export interface RunningServer {
  url: string;
  port: number;
  api: ApiApp;
  server: Server;
  /** Stops accepting connections and waits for open requests to end. */
  close(): Promise<void>;
}

/** Listens on `port` (0: a free one) and `host` (default 127.0.0.1). */
export async function startServer(m: Mnemograph, opts: ApiOptions & { port?: number; host?: string } = {}): Promise<RunningServer> {
  const api = createApiApp(m, opts);
  const host = opts.host ?? m.config.api.host;
  const server = await new Promise<Server>((resolve, reject) => {
    const s = api.app.listen(opts.port ?? m.config.port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    api,
    server,
    async close() {
      api.close();
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
