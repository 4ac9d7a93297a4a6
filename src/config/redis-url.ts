/** A Redis URL of the configuration (`queue.url`, each `queue.cluster` node): host, port, database and TLS. */
import { z } from 'zod';

/** A Redis URL's parts: a queue connection, less its credentials. */
export interface ParsedRedisUrl {
  host: string;
  port: number;
  db: number;
  tls: boolean;
}

/** `redis://host:port/db` (`rediss://` for TLS) parsed; problems go to `ctx`. */
export function parseRedisUrl(text: string, ctx: z.RefinementCtx): ParsedRedisUrl {
  const fail = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('expected a URL such as redis://127.0.0.1:6379/0');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return fail('expected a redis:// or rediss:// URL');
  if (url.hostname === '') return fail('the URL has no host');
  const db = url.pathname === '' || url.pathname === '/' ? 0 : Number(url.pathname.slice(1));
  if (!Number.isInteger(db) || db < 0) return fail('the path must be a database number, e.g. redis://127.0.0.1:6379/0');
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 6379 : Number(url.port),
    db,
    tls: url.protocol === 'rediss:',
  };
}
