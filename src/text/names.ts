/** Provider names and consumer ids: safe in record ids, job ids, log lines and URLs. */
import { z } from 'zod';

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * Every character a consumer id or login may hold (logins have the same alphabet,
 * `src/adapters/login-shape.ts`): name templates rely on it to keep consumers apart
 * (`src/adapters/name-templates.ts`).
 */
export const NAME_CHARACTER = /^[A-Za-z0-9_.-]$/;

export const nameSchema = z
  .string()
  .regex(NAME_PATTERN, 'must be 1 to 128 letters, digits, _ . or -, starting with a letter or digit');
