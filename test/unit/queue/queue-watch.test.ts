/**
 * The queue watch says a failover of the queue's cluster master once per outage: a stale slot map
 * that names the dead master again during the failover says neither a second "does not answer"
 * nor a failover back to it; a node that answers again and then stops is a second outage.
 */
import { EventEmitter } from 'node:events';
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/logging/logger.js';
import { QueueWatch } from '../../../src/queue/queue-watch.js';

const SLOT = 42;

/** A cluster as the watch sees it: a slot map, its masters' PINGs, and the events ioredis emits. */
class FakeCluster extends EventEmitter {
  slots: string[][] = [];
  readonly answering = new Set<string>();

  call(): Promise<number> {
    return Promise.resolve(SLOT);
  }

  nodes(): Array<{ options: { host: string; port: number }; ping: () => Promise<string> }> {
    return ['a:1', 'b:1'].map((address) => {
      const [host, port] = address.split(':');
      return {
        options: { host: host!, port: Number(port) },
        ping: () => (this.answering.has(address) ? Promise.resolve('PONG') : new Promise<string>(() => undefined)),
      };
    });
  }

  serve(address: string): void {
    this.slots[SLOT] = [address];
    this.emit('refresh');
  }
}

function watched(): { cluster: FakeCluster; said: string[]; moves: () => number } {
  const cluster = new FakeCluster();
  const said: string[] = [];
  const logger = { warn: (_: unknown, msg: string) => said.push(msg) } as unknown as Logger;
  let moves = 0;
  new QueueWatch(cluster as unknown as Cluster, { key: 'hf:alive', logger }).onMoved(() => moves++);
  return { cluster, said, moves: () => moves };
}

const settle = () => new Promise((r) => setTimeout(r, 1_100));
const down = (said: string[], node: string) =>
  said.filter((m) => m.startsWith(`the queue's Redis node ${node}`)).length;
const failovers = (said: string[]) => said.filter((m) => m.includes('a failover')).length;

describe('the queue watch', () => {
  it('says a master down once though a stale slot map names it again during the failover', async () => {
    const { cluster, said, moves } = watched();
    cluster.slots[SLOT] = ['a:1'];
    cluster.emit('ready');
    await settle();
    cluster.emit('node error', new Error('connect ECONNREFUSED'), 'a:1');
    cluster.serve('b:1'); // the replica promoted
    cluster.answering.add('b:1');
    cluster.serve('a:1'); // a node that has not heard yet still names the dead master
    await settle();
    cluster.emit('node error', new Error('connect ECONNREFUSED'), 'a:1');
    cluster.serve('b:1');
    await settle();
    expect(down(said, 'a:1')).toBe(1);
    expect(failovers(said)).toBe(1);
    expect(moves()).toBe(1);
  });

  it('says a second outage of a node that answered again in between', async () => {
    const { cluster, said } = watched();
    cluster.slots[SLOT] = ['a:1'];
    cluster.emit('ready');
    await settle();
    cluster.emit('node error', new Error('connect ECONNREFUSED'), 'a:1');
    cluster.answering.add('a:1'); // back before any promotion
    cluster.serve('a:1');
    await settle();
    cluster.emit('node error', new Error('connect ECONNREFUSED'), 'a:1');
    expect(down(said, 'a:1')).toBe(2);
    expect(failovers(said)).toBe(0);
  });
});
