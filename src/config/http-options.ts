/** `http:`: the dashboard, /status, /healthz and /metrics. Each option declared once (see `option.ts`). */
import { z } from 'zod';
import type { Options } from './option.js';
import { hostEntrySchema } from './http-hosts.js';
import { parseListen } from './listen-address.js';

export const HTTP_OPTIONS = {
  listen: {
    schema: (kinds) => kinds.text.transform(parseListen).optional(),
    shown: 'off',
    doc: '`host:port` (`[::1]:9100` for IPv6; a port alone listens on 127.0.0.1); `--http` wins. Off when neither is given',
  },
  username: { schema: (kinds) => kinds.text, default: 'holdfast', doc: 'the basic-auth user' },
  passwordFile: {
    schema: (kinds) => kinds.password.optional(),
    doc: "basic auth's password; required when `listen` is not loopback",
  },
  readOnly: {
    schema: () => z.boolean(),
    default: true,
    doc: '`false` lets Bull Board retry, promote or remove one job, resume a queue or release its rate limit; never pause, limit, clean, empty or obliterate a queue, nor add or change a job',
  },
  hosts: {
    schema: () => z.array(hostEntrySchema),
    default: [],
    doc: '`Host` names accepted besides the listen address (loopback names when it is loopback or 0.0.0.0); any other `Host` gets 421',
  },
} as const satisfies Options;
