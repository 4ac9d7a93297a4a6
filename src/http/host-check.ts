/**
 * The `Host` names the dashboard answers to; any other gets 421, so a page on another site
 * whose name was rebound to this machine (DNS rebinding) cannot read the dashboard. Accepted:
 * the listen address with its port; the loopback names (`127.0.0.1`, `localhost`, `[::1]`) with
 * the port when it listens on loopback or on every address; and each `http.hosts` entry (a name
 * alone accepts any port).
 */
import { hostPort, isLoopback, isWildcard } from './listen-guard.js';

const HOST_HEADER = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/;

/** Tells whether a request's `Host` header is one the dashboard listening on `host`:`port` answers to. */
export function hostMatcher(
  host: string,
  port: number,
  hosts: readonly string[],
): (header: string | undefined) => boolean {
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  if (!isWildcard(host)) exact.add(hostPort(host, port).toLowerCase());
  if (isLoopback(host) || isWildcard(host))
    for (const name of ['127.0.0.1', 'localhost', '::1']) exact.add(hostPort(name, port));
  for (const entry of hosts) {
    const match = HOST_HEADER.exec(entry.toLowerCase());
    if (!match) continue;
    if (match[2] === undefined) anyPort.add(match[1]!);
    else exact.add(`${match[1]!}:${Number(match[2])}`);
  }
  return (header) => {
    const match = header === undefined ? null : HOST_HEADER.exec(header.toLowerCase());
    if (!match) return false;
    const name = match[1]!;
    return anyPort.has(name) || exact.has(`${name}:${match[2] === undefined ? 80 : Number(match[2])}`);
  };
}
