import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

// A Bolt COMMIT message on the wire: chunk of 2 bytes, struct of 0 fields (0xB0), signature 0x12, end marker.
const BOLT_COMMIT = Buffer.from([0x00, 0x02, 0xb0, 0x12, 0x00, 0x00]);

/** A TCP proxy in front of a shared store (Neo4j, PostgreSQL), so a test can cut it off without stopping it for everyone. */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private loseCommitAck: (() => void) | undefined;
  private dropping = false;
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}
  async open(): Promise<void> {
    this.server = createServer((client) => {
      if (this.dropping) {
        client.destroy();
        return;
      }
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      // Bolt only (Neo4j): once this connection sent a COMMIT while a lost acknowledgement is
      // armed, the server's answer is dropped and the connection cut, so the commit lands
      // but the driver never hears of it.
      let swallow = false;
      client.on('data', (chunk: Buffer) => {
        if (this.loseCommitAck && chunk.includes(BOLT_COMMIT)) {
          swallow = true;
          const done = this.loseCommitAck;
          this.loseCommitAck = undefined;
          upstream.write(chunk);
          upstream.once('data', () => {
            client.destroy();
            upstream.destroy();
            done();
          });
          return;
        }
        if (!swallow) upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!swallow) client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as AddressInfo).port;
  }
  /**
   * Arms a lost acknowledgement: the next Bolt COMMIT through the proxy reaches Neo4j, which
   * commits, but its answer is dropped and the connection cut. Resolves once that happened.
   */
  loseNextCommitAck(): Promise<void> {
    return new Promise((resolve) => (this.loseCommitAck = resolve));
  }
  /**
   * Cuts every open connection and drops new ones as soon as they are accepted (as a store
   * just killed, or one whose port is open before it serves), until `restore()`.
   */
  cut(): void {
    this.dropping = true;
    for (const s of this.sockets) s.destroy();
  }
  restore(): void {
    this.dropping = false;
  }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
