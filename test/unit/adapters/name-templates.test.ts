/**
 * Name templates keep consumers apart: a template is refused unless `{id}` (or `{login}`) is
 * followed by a separator, and where the separator is one ids may hold, an id holding it is
 * refused; then no consumer's expansion is ever the start of another's (generated below).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  leadsOverlap,
  separatorProblems,
  templateProblem,
  templateShape,
} from '../../../src/adapters/name-templates.js';
import { NAME_PATTERN } from '../../../src/text/names.js';

const subject = (id: string, login = `app_${id}`) => ({ id, login });

describe('name templates', () => {
  it('takes a template whose {id} or {login} is followed by a separator', () => {
    expect(templateShape('{id}:')).toEqual({ lead: '', placeholder: 'id', separator: ':', checked: false });
    expect(templateShape('app/{login}/{id}')).toEqual({
      lead: 'app/',
      placeholder: 'login',
      separator: '/',
      checked: false,
    });
    expect(templateShape('{{id}}:')).toEqual({ lead: '{', placeholder: 'id', separator: '}', checked: false });
    expect(templateShape('{id}-')).toEqual({ lead: '', placeholder: 'id', separator: '-', checked: true });
    expect(templateShape('x.{id}.')).toEqual({ lead: 'x.', placeholder: 'id', separator: '.', checked: true });
  });

  it.each(['{id}', 'app:{id}', '{id}{login}:', '{id}x', '{id}7', 'app:', 'photos-', '{ID}:'])(
    'refuses %j, saying why',
    (template) => {
      expect(templateProblem(template)).toMatch(
        /holds neither \{id\} nor \{login\}|must put a separator right after \{(id|login)\}/,
      );
    },
  );

  it('refuses an id holding the separator its template may share with ids, naming the field and the shorter id that would own it', () => {
    expect(separatorProblems('bucketPrefix', '{id}-', subject('team-billing'))).toEqual([
      'id: "team-billing" holds "-", the separator the provider\'s bucketPrefix "{id}-" puts after {id}: a consumer whose id is "team" would own every name this one\'s start with; ' +
        'give this consumer an id without "-", or the provider a bucketPrefix whose separator its consumers\' ids do not hold',
    ]);
    expect(separatorProblems('bucketPrefix', '{id}-', subject('team'))).toEqual([]);
    expect(separatorProblems('bucketPrefix', '{id}.', subject('team-billing'))).toEqual([]);
    expect(separatorProblems('keyPrefix', '{id}:', subject('team-billing.x_y'))).toEqual([]);
    expect(separatorProblems('channelPrefix', '{login}.', subject('a', 'app.a'))[0]).toMatch(
      /^login: "app\.a" holds "\."/,
    );
  });

  it('between providers: overlapping when one lead starts the other, or one gives every name', () => {
    expect(leadsOverlap('{id}:', '{id}:')).toBe(true);
    expect(leadsOverlap('{id}:', 'b:{id}:')).toBe(true);
    expect(leadsOverlap('a:{id}:', 'a:b:{id}:')).toBe(true);
    expect(leadsOverlap('a:{id}:', undefined)).toBe(true);
    expect(leadsOverlap('a:{id}:', 'b:{id}:')).toBe(false);
    expect(leadsOverlap('a:{id}:', 'ab:{id}:')).toBe(false);
  });

  const id = fc.stringMatching(NAME_PATTERN).filter((s) => s.length <= 12);
  const template = fc
    .tuple(
      fc.constantFrom('', 'a', 'app:', 'x.', '{'),
      fc.constantFrom('{id}', '{login}'),
      fc.constantFrom(':', '-', '.', '_', '/', '}', '', 'x'),
      fc.constantFrom('', '{id}', '{login}', ':z'),
    )
    .map((parts) => parts.join(''));
  const expand = (t: string, s: { id: string; login: string }) =>
    t.replaceAll('{id}', s.id).replaceAll('{login}', s.login);

  it("no accepted template lets one accepted consumer's names start another's (generated)", () => {
    fc.assert(
      // the other's id and login often start with this one's and a character ids may hold
      fc.property(
        template,
        id,
        id,
        fc.constantFrom('-', '.', '_', 'x'),
        id,
        id,
        fc.boolean(),
        (t, idA, tail, joint, loginA, other, derived) => {
          const idB = derived ? `${idA}${joint}${tail}` : other;
          const loginB = derived ? `${loginA}${joint}${tail}` : `${other}_`;
          fc.pre(idA !== idB && loginA !== loginB && templateProblem(t) === undefined);
          const [a, b] = [
            { id: idA, login: loginA },
            { id: idB, login: loginB },
          ];
          fc.pre(
            separatorProblems('keyPrefix', t, a).length === 0 && separatorProblems('keyPrefix', t, b).length === 0,
          );
          expect(expand(t, b).startsWith(expand(t, a))).toBe(false);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('two providers whose leads do not overlap never give names that start alike (generated)', () => {
    fc.assert(
      fc.property(template, template, id, id, (t1, t2, x, y) => {
        fc.pre(templateProblem(t1) === undefined && templateProblem(t2) === undefined && !leadsOverlap(t1, t2));
        const [e1, e2] = [expand(t1, { id: x, login: x }), expand(t2, { id: y, login: y })];
        expect(e1.startsWith(e2) || e2.startsWith(e1)).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });
});
