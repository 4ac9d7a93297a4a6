/**
 * Where the dashboard may listen without a password: loopback only. Anywhere else (`0.0.0.0`,
 * `::`, a host's address or name) it needs `http.passwordFile`, or holdfast refuses to start.
 */
import { HoldfastError } from '../errors/holdfast-error.js';

/** `localhost`, `127.0.0.0/8` or `::1`. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Every address of the machine: `0.0.0.0` or `::`. */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/** `host:port`, IPv6 in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Throws `CONFIG_INVALID`, saying what to set, when `listen` is not loopback and there is no password. */
export function refuseExposedDashboard(listen: { host: string; port: number }, auth: unknown): void {
  if (auth !== undefined || isLoopback(listen.host)) return;
  throw new HoldfastError(
    'CONFIG_INVALID',
    `the dashboard would listen on ${hostPort(listen.host, listen.port)}, which is not a loopback address, with no password: ` +
      'set http.passwordFile (basic auth for every page, /queues, /status and /metrics), or listen on 127.0.0.1',
  );
}
