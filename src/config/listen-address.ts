/** `http.listen` (and `--http`): where the HTTP server listens. */
import { z } from 'zod';

/** `host:port` (`[::1]:9100` for IPv6; a port alone means loopback) where the HTTP server listens. */
export function parseListen(text: string, ctx?: z.RefinementCtx): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text) ?? /^()()(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    const message = `expected host:port, e.g. 127.0.0.1:9100; got ${JSON.stringify(text)}`;
    if (!ctx) throw new Error(message);
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  }
  return { host: match[1] || match[2] || '127.0.0.1', port };
}
