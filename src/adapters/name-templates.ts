/**
 * The templates a policy expands for each consumer into the start of the names it may use
 * (Redis key and channel prefixes, S3 bucket prefixes): literal text with `{id}` and `{login}`.
 * Consumers are kept apart only if no consumer's expansion is the start of another's: with
 * `{id}-` and ids that may hold `-`, `team-` is the start of `team-billing-`, and consumer
 * `team` may ask for `team-*`, which covers `team-billing`'s names.
 *
 * The rule, for every such template: it holds `{id}` or `{login}`, and the first of them is
 * followed by a separator, a character that no value of that placeholder holds. Ids and logins
 * are letters, digits, `_ . -` ({@link NAME_CHARACTER}), so `:`, `/` or `}` always separate;
 * `.`, `-` and `_` separate only where the provider's consumers' ids (or logins) do not hold
 * them, which {@link separatorProblems} checks for each consumer (at load and in the worker).
 * Then two expansions that start alike hold the same value up to the separator: the same
 * consumer (ids and logins are unique within a provider).
 *
 * Between providers on one backend, each template's text before its first placeholder (its
 * lead) must not be the start of the other's ({@link leadsOverlap}): expansions that differ
 * within both leads can never be the start of one another.
 */
import { NAME_CHARACTER } from '../text/names.js';

export type Placeholder = 'id' | 'login';

const PLACEHOLDERS: readonly Placeholder[] = ['id', 'login'];

/** A template that keeps consumers apart: its lead, its first placeholder and the separator after it. */
export interface TemplateShape {
  lead: string;
  placeholder: Placeholder;
  separator: string;
  /** Whether ids (logins) may hold the separator, so that each consumer's must be checked. */
  checked: boolean;
}

/** The shape of `template`, or why it does not keep consumers apart (a sentence without the field's name). */
export function templateShape(template: string): TemplateShape | { problem: string } {
  const found = PLACEHOLDERS.map((placeholder) => ({ placeholder, at: template.indexOf(`{${placeholder}}`) }))
    .filter(({ at }) => at >= 0)
    .sort((a, b) => a.at - b.at)[0];
  if (found === undefined) {
    return {
      problem: `"${template}" holds neither {id} nor {login}: every consumer would get the same names; put {id} in it, and a separator right after it`,
    };
  }
  const { placeholder, at } = found;
  const rest = template.slice(at + placeholder.length + 2);
  const separator = rest.slice(0, 1);
  const example = `e.g. "${template.slice(0, at)}{${placeholder}}:${rest}"`;
  if (separator === '' || PLACEHOLDERS.some((p) => rest.startsWith(`{${p}}`)) || /^[A-Za-z0-9]$/.test(separator)) {
    return {
      problem:
        `"${template}" must put a separator right after {${placeholder}}: a character that is not a letter or digit (":" or "/", which no ${placeholder} holds; ` +
        `or ".", "-" or "_", then refused in this provider's ${placeholder}s); without one, one consumer's names start another's (${example})`,
    };
  }
  return { lead: template.slice(0, at), placeholder, separator, checked: NAME_CHARACTER.test(separator) };
}

/** A zod refinement's check: the problem of `template` as a name template, or undefined. */
export function templateProblem(template: string): string | undefined {
  const shape = templateShape(template);
  return 'problem' in shape ? shape.problem : undefined;
}

/**
 * Why `subject` cannot be a consumer under the template in the policy's `field`: its id (or
 * login) holds the separator the template puts after it. One sentence naming the field; empty
 * when none (or when the template itself is refused, which the policy's load says).
 */
export function separatorProblems(field: string, template: string, subject: { id: string; login: string }): string[] {
  const shape = templateShape(template);
  if ('problem' in shape || !shape.checked) return [];
  const value = subject[shape.placeholder];
  if (!value.includes(shape.separator)) return [];
  const shorter = value.slice(0, value.indexOf(shape.separator));
  return [
    `${shape.placeholder}: "${value}" holds "${shape.separator}", the separator the provider's ${field} "${template}" puts after {${shape.placeholder}}: ` +
      `a consumer whose ${shape.placeholder} is "${shorter}" would own every name this one's start with; ` +
      `give this consumer ${shape.placeholder === 'id' ? 'an id' : 'a login'} without "${shape.separator}", or the provider a ${field} whose separator its consumers' ${shape.placeholder}s do not hold`,
  ];
}

/** Whether two providers' templates (undefined: every name) on one backend can expand to names that start alike. */
export function leadsOverlap(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  const [left, right] = [templateShape(a), templateShape(b)];
  // a refused template is said where the policy is read
  if ('problem' in left || 'problem' in right) return false;
  return left.lead.startsWith(right.lead) || right.lead.startsWith(left.lead);
}
