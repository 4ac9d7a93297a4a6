/**
 * A TCP proxy in front of a Redis server that notes every command clients send through it (what
 * reaches the server): its name (with the subcommand of a container command, `ACL GETUSER`) and
 * its first argument after that, with when it passed. Commands are read from the RESP arrays
 * clients send (ioredis sends nothing else); an inline command is noted whole.
 */
import type { BackendEndpoint } from '../backends/index.js';
import { notingProxy } from './noting-proxy.js';

export interface RedisCommand {
  at: number;
  /** Upper case, with its subcommand where it has one: `ACL SETUSER`, `CLIENT SETNAME`, `GET`. */
  name: string;
  /** The argument after the name (a key, a login), when there is one. */
  target?: string;
}

export interface RedisCommandCounter {
  /** The same server, reached through the proxy. */
  readonly endpoint: BackendEndpoint;
  readonly commands: readonly RedisCommand[];
  close(): Promise<void>;
}

/** Commands whose first argument is a subcommand. */
const CONTAINERS = new Set([
  'ACL',
  'CLIENT',
  'CONFIG',
  'CLUSTER',
  'COMMAND',
  'SCRIPT',
  'FUNCTION',
  'OBJECT',
  'MEMORY',
  'XINFO',
  'SENTINEL',
  'PUBSUB',
  'MODULE',
  'LATENCY',
  'SLOWLOG',
]);

function noted(args: readonly string[]): RedisCommand {
  const first = (args[0] ?? '').toUpperCase();
  const sub = CONTAINERS.has(first) && args[1] !== undefined;
  const name = sub ? `${first} ${args[1]!.toUpperCase()}` : first;
  const target = args[sub ? 2 : 1];
  return { at: Date.now(), name, ...(target !== undefined ? { target } : {}) };
}

/** Reads RESP arrays of bulk strings from a client's stream; each whole one is a command. */
function commandReader(onCommand: (args: string[]) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  /** One command from `at`, and where the next begins; undefined when it is not all here yet. */
  const parse = (at: number): { args: string[]; next: number } | undefined => {
    const line = pending.indexOf('\r\n', at);
    if (line < 0) return undefined;
    if (pending[at] !== 0x2a /* '*' */)
      return { args: pending.toString('latin1', at, line).split(' '), next: line + 2 };
    const count = Number(pending.toString('latin1', at + 1, line));
    const args: string[] = [];
    let offset = line + 2;
    for (let i = 0; i < count; i++) {
      const header = pending.indexOf('\r\n', offset);
      if (header < 0) return undefined;
      const length = Number(pending.toString('latin1', offset + 1, header));
      const start = header + 2;
      if (pending.length < start + length + 2) return undefined;
      args.push(pending.toString('utf8', start, start + length));
      offset = start + length + 2;
    }
    return { args, next: offset };
  };
  return (chunk) => {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    for (;;) {
      const command = parse(at);
      if (command === undefined) break;
      onCommand(command.args);
      at = command.next;
    }
    pending = pending.subarray(at);
  };
}

export async function redisCommandCounter(server: BackendEndpoint): Promise<RedisCommandCounter> {
  const commands: RedisCommand[] = [];
  const proxy = await notingProxy(server, () => commandReader((args) => commands.push(noted(args))));
  return { endpoint: proxy.endpoint, commands, close: () => proxy.close() };
}
