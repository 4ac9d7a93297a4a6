/**
 * A TCP proxy in front of a MongoDB wire server that notes every command clients send through
 * it (what reaches the server, not what a client meant to send): the first key of each `OP_MSG`
 * body, with when it passed. Legacy `OP_QUERY` handshakes are noted as `op_query`, anything else
 * by its opcode.
 */
import type { BackendEndpoint } from '../backends/index.js';
import { notingProxy } from './noting-proxy.js';

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
  const proxy = await notingProxy(store, () =>
    messages((m) => commands.push({ at: Date.now(), command: commandOf(m) })),
  );
  return { endpoint: proxy.endpoint, commands, close: () => proxy.close() };
}
