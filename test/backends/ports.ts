/**
 * Loopback ports for the servers the tests start. They are chosen below the kernel's ephemeral
 * range (`net.ipv4.ip_local_port_range`, 32768–60999 by default), where no outgoing connection
 * of this or another suite on the machine takes one between the check and the server's bind;
 * each is checked free by listening on it. Another suite choosing the same port meanwhile
 * remains possible (rarely): `LocalServer.start` tries again on other ports.
 */
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * Where ports are chosen: above the services most machines run, and low enough that a Redis
 * Cluster node's bus port (its port + 10000, 22000–31999) is below the ephemeral range too and
 * never one of the ports chosen here.
 */
const LOWEST = 12_000;
const HIGHEST = 21_999;
/** A Redis Cluster node listens on its port and this much above it (its cluster bus). */
export const CLUSTER_BUS_OFFSET = 10_000;

/** Whether nobody listens on `port` of 127.0.0.1 right now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback TCP port nobody listens on right now (nor on each of `offsets` above it). */
export async function freePort(offsets: readonly number[] = []): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = randomInt(LOWEST, HIGHEST + 1);
    if ((await isFree(port)) && (await Promise.all(offsets.map((o) => isFree(port + o)))).every(Boolean)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${HIGHEST} after 200 tries`);
}

/** `count` distinct loopback ports nobody listens on right now (nor on each of `offsets` above them). */
export async function freePorts(count: number, offsets: readonly number[] = []): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(offsets));
  return [...ports];
}
