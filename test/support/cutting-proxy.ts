/**
 * A TCP proxy between an adapter and its backend that a test can stall (what the adapter sends
 * is held back, so its call waits mid-flight) and cut (every connection reset, as a failover, a
 * restart or a middlebox would).
 */
import { createServer, connect, type Socket } from 'node:net';

export interface CuttingProxy {
  /** host:port of the proxy. */
  readonly address: string;
  /** Holds back what clients send from now on (the server sees nothing more). */
  stall(): void;
  /** Bytes held back since the last stall: a call is in flight when this is above 0. */
  held(): number;
  /** Everything clients sent through the proxy so far (latin1: binary protocols' field names readable). */
  sent(): string;
  /** Resets every open connection (RST to the client) and forwards again. */
  cut(): void;
  close(): Promise<void>;
}

export async function cuttingProxy(host: string, port: number): Promise<CuttingProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let stalled = false;
  let heldBytes = 0;
  const chunks: Buffer[] = [];
  const server = createServer((client) => {
    const upstream = connect(port, host);
    const pair = { client, upstream };
    pairs.add(pair);
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (d: Buffer) => {
      chunks.push(d);
      if (stalled) heldBytes += d.length;
      else upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => client.write(d));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bound = server.address();
  const at = typeof bound === 'object' && bound ? bound.port : 0;
  return {
    address: `127.0.0.1:${at}`,
    stall: () => {
      stalled = true;
      heldBytes = 0;
    },
    held: () => heldBytes,
    sent: () => Buffer.concat(chunks).toString('latin1'),
    cut: () => {
      for (const { client, upstream } of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
      stalled = false;
    },
    close: () => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
