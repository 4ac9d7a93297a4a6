/**
 * The kinds of value the configuration's options share, some of which depend on where the file
 * is: a relative path resolves in the file's directory, a password file is read, an adapter is
 * one holdfast has. Built once per file read; each option's schema picks its kind from them.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { AdapterKind } from '../adapters/adapter.js';
import { readSecretFile } from '../secrets/secret-file.js';
import { shortAdminSecret } from './admin-secret.js';
import { parseRedisUrl } from './redis-url.js';

const NOT_EMPTY = 'must not be empty';

/** The value kinds of a file in `dir`, where `adapters` are the adapters holdfast has. */
export function valueKinds(dir: string, adapters: ReadonlyMap<string, AdapterKind>) {
  const text = z.string().min(1, NOT_EMPTY);
  const filePath = text.transform((path) => resolve(dir, path));
  const url = text.superRefine((value, ctx) => {
    const problem = urlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
  const known = [...adapters.keys()].sort().join(', ') || '(none)';
  return {
    text,
    filePath,
    /** A password file's path, transformed to the password it holds. */
    password: filePath.transform(readPassword),
    url,
    mongoUrl: url.refine((value) => /^mongodb(\+srv)?:\/\//.test(value), 'expected a mongodb:// or mongodb+srv:// URL'),
    redisUrl: url.transform(parseRedisUrl),
    adapter: z.string().transform((kind, ctx) => {
      const adapter = adapters.get(kind);
      if (adapter) return adapter;
      ctx.addIssue({ code: 'custom', message: `unknown adapter "${kind}"; known adapters: ${known}` });
      return z.NEVER;
    }),
  };
}

export type ValueKinds = ReturnType<typeof valueKinds>;

/** Why `url` is unusable (not a URL, or carrying credentials), without repeating it. */
function urlProblem(url: string): string | undefined {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:([^/?#]*)@)?/.exec(url);
  if (!match) return 'expected a URL such as redis://127.0.0.1:6379';
  const userinfo = match[1];
  if (userinfo === undefined) return undefined;
  return userinfo.includes(':')
    ? 'the URL must not carry a password: put it in passwordFile'
    : 'the URL must not carry a username: put it in username';
}

/** The password in `path`, less one trailing newline. Messages name the path, never the content. */
function readPassword(path: string, ctx: z.RefinementCtx): string {
  let password: string;
  try {
    password = readSecretFile(path);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    });
    return z.NEVER;
  }
  const problem = password === '' ? `${path} is empty` : shortAdminSecret(path, password);
  if (problem === undefined) return password;
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
}
