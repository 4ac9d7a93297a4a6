/**
 * `http.hosts`: the names the dashboard may be reached by besides its listen address, as the
 * browser sends them in `Host` (a reverse proxy's name, a published port). An entry is a name
 * (`holdfast.example.com`, any port) or a name and port (`127.0.0.1:9200`, `[::1]:9200`).
 */
import { z } from 'zod';

const HOST_ENTRY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::(\d{1,5}))?$/;

/** One `http.hosts` entry, lower-cased. */
export const hostEntrySchema = z.string().transform((text, ctx) => {
  const match = HOST_ENTRY.exec(text);
  if (match && (match[1] === undefined || Number(match[1]) <= 65535)) return text.toLowerCase();
  ctx.addIssue({
    code: 'custom',
    message: `expected a host name, optionally with a port (holdfast.example.com, 127.0.0.1:9200, [::1]:9200); got ${JSON.stringify(text)}`,
  });
  return z.NEVER;
});
