/**
 * Loopback ports for the servers the tests start. They are chosen below the kernel's ephemeral
 * range (`net.ipv4.ip_local_port_range`, 32768–60999 by default), where no outgoing connection
 * of this or another suite on the machine takes one between the check and the server's bind;
 * each is checked free by listening on it. Another suite choosing the same port meanwhile
 * remains possible (rarely): `LocalServer.start` tries again on other ports.
 */
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

/** Where ports are chosen: above the well-known and registered services most machines run, below the ephemeral range. */
const LOWEST = 20_000;
const HIGHEST = 32_767;

/** Whether nobody listens on `port` of 127.0.0.1 right now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = randomInt(LOWEST, HIGHEST + 1);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${HIGHEST} after 200 tries`);
}

/** `count` distinct loopback ports nobody listens on right now. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
