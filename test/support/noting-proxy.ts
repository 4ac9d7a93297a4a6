/**
 * A TCP proxy on 127.0.0.1 in front of a backend: every byte passes unchanged, and what each
 * client sends is also given to that client's own reader (made per connection, so a reader may
 * keep the bytes of a message cut across chunks). The counters (`mongo-op-counter.ts`,
 * `redis-command-counter.ts`) are this with a protocol's reader.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { BackendEndpoint } from '../backends/index.js';

export interface NotingProxy {
  /** The same server, reached through the proxy. */
  readonly endpoint: BackendEndpoint;
  close(): Promise<void>;
}

export async function notingProxy(
  target: BackendEndpoint,
  newReader: () => (chunk: Buffer) => void,
): Promise<NotingProxy> {
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    const read = newReader();
    client.on('data', (d: Buffer) => {
      read(d);
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => client.write(d));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  const url = new URL(target.url);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    endpoint: { ...target, host: '127.0.0.1', port, url: url.toString() },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
