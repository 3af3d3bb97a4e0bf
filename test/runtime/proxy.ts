/** A TCP proxy in front of the API server whose link can be cut, to simulate a network partition. */

import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';

export class PartitionableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private partitioned = false;

  /** Starts proxying to `target` (`http://host:port`); resolves with the proxy's URL. */
  async start(target: string): Promise<string> {
    const url = new URL(target);
    const server = createServer((client) => {
      if (this.partitioned) {
        client.destroy();
        return;
      }
      const upstream = connect(Number(url.port), url.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return `${url.protocol}//127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Drops every connection and refuses new ones until `heal`. */
  partition(): void {
    this.partitioned = true;
    for (const s of this.sockets) s.destroy();
  }

  heal(): void {
    this.partitioned = false;
  }

  async close(): Promise<void> {
    this.partition();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
