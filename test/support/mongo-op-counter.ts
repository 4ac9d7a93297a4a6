/**
 * A TCP proxy in front of a MongoDB wire server that notes every command clients send through
 * it (what reaches the server, not what a client meant to send): the first key of each `OP_MSG`
 * body, with when it passed. Legacy `OP_QUERY` handshakes are noted as `op_query`, anything else
 * by its opcode.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { BackendEndpoint } from '../backends/index.js';

export interface NotedCommand {
  at: number;
  command: string;
}

export interface MongoOpCounter {
  /** The same server, reached through the proxy. */
  readonly endpoint: BackendEndpoint;
  /** Every command noted so far, oldest first. */
  readonly commands: readonly NotedCommand[];
  close(): Promise<void>;
}

const OP_MSG = 2013;
const OP_QUERY = 2004;

/** The command a whole wire message carries. */
function commandOf(message: Buffer): string {
  const opCode = message.readInt32LE(12);
  if (opCode === OP_QUERY) return 'op_query';
  if (opCode !== OP_MSG || message.length < 27 || message[20] !== 0) return `opcode ${opCode}`;
  // flags (4 bytes), section kind 0, the body's length (4 bytes), its first element's type, then its name
  const start = 26;
  const end = message.indexOf(0, start);
  return end > start ? message.toString('latin1', start, end) : 'unknown';
}

/** Splits the client's stream into whole wire messages (each begins with its int32 length). */
function messages(onMessage: (message: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 16) {
      const length = pending.readInt32LE(0);
      if (pending.length < length) break;
      onMessage(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
  };
}

export async function mongoOpCounter(store: BackendEndpoint): Promise<MongoOpCounter> {
  const commands: NotedCommand[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(store.port, store.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    const note = messages((m) => commands.push({ at: Date.now(), command: commandOf(m) }));
    client.on('data', (d: Buffer) => {
      note(d);
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => client.write(d));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(store.url);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    endpoint: { ...store, host: '127.0.0.1', port, url: url.toString() },
    commands,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
