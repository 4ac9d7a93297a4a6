/** What differs between an applied spec and a proposed one, in the words `holdfast plan` prints. */
import { describe, expect, it } from 'vitest';
import { specDifferences, type SpecSide } from '../../../src/plan/spec-diff.js';

const redis = (values: Record<string, unknown>, more: Partial<SpecSide> = {}): SpecSide => ({
  login: 'app_photos',
  secretPath: '/etc/holdfast/grants/photos.secret',
  values: { keys: ['photos:*'], channels: [], commands: ['+@read', '+@write'], ...values },
  ...more,
});

describe('specDifferences', () => {
  it('says nothing of equal specs', () => {
    expect(specDifferences(redis({}), redis({}))).toEqual([]);
  });

  it('says key patterns added as widened and dropped as narrowed', () => {
    expect(specDifferences(redis({}), redis({ keys: ['photos:*', 'thumbs:*'] }))).toEqual([
      'key patterns added: "thumbs:*" (widened)',
    ]);
    expect(specDifferences(redis({ keys: ['photos:*', 'old:*'] }), redis({}))).toEqual([
      'key patterns dropped: "old:*" (narrowed)',
    ]);
    expect(specDifferences(redis({ keys: ['a:*'] }), redis({ keys: ['b:*'] }))).toEqual([
      'key patterns added: "b:*" (widened)',
      'key patterns dropped: "a:*" (narrowed)',
    ]);
  });

  it('tells widened from narrowed command rules by their sign', () => {
    expect(specDifferences(redis({}), redis({ commands: ['+@read', '+@write', '+@all'] }))).toEqual([
      'command rules widened: "+@all" added',
    ]);
    expect(specDifferences(redis({ commands: ['+@read', '-@dangerous'] }), redis({ commands: ['+@read'] }))).toEqual([
      'command rules widened: "-@dangerous" dropped',
    ]);
    expect(specDifferences(redis({}), redis({ commands: ['+@read', '+@write', '-flushall'] }))).toEqual([
      'command rules narrowed: "-flushall" added',
    ]);
    expect(specDifferences(redis({}), redis({ commands: ['+@read'] }))).toEqual([
      'command rules narrowed: "+@write" dropped',
    ]);
    expect(specDifferences(redis({}), redis({ commands: ['+@write', '+@read'] }))).toEqual([
      'command rules reordered (a later rule overrides an earlier one)',
    ]);
  });

  it('says roles and databases granted or revoked', () => {
    const pg = (roles: string[], databases: string[]): SpecSide => ({
      login: 'app',
      secretPath: '/s',
      values: { databases, schemas: [], roles },
    });
    expect(specDifferences(pg([], ['app']), pg(['reporting'], ['app']))).toEqual([
      'roles granted: "reporting" (widened)',
    ]);
    expect(specDifferences(pg(['reporting'], ['app', 'old']), pg([], ['app']))).toEqual([
      'databases revoked: "old" (narrowed)',
      'roles revoked: "reporting" (narrowed)',
    ]);
  });

  it('says a single value changed from one to another (a MongoDB database)', () => {
    const mongo = (database: string): SpecSide => ({ login: 'app', secretPath: '/s', values: { database, roles: [] } });
    expect(specDifferences(mongo('a'), mongo('b'))).toEqual(['database changes from "a" to "b"']);
  });

  it('says a login renamed and a grant secret read elsewhere', () => {
    expect(
      specDifferences(redis({}), redis({}, { login: 'app_pics', secretPath: '/etc/holdfast/grants/pics.secret' })),
    ).toEqual([
      'login renamed from "app_photos" to "app_pics"',
      'grant secret read from "/etc/holdfast/grants/pics.secret" instead of "/etc/holdfast/grants/photos.secret"',
    ]);
  });

  it('names at most eight items, and counts the rest', () => {
    const many = Array.from({ length: 11 }, (_, i) => `k${i}:*`);
    const [line] = specDifferences(redis({ keys: [] }), redis({ keys: many }));
    expect(line).toBe(
      `key patterns added: ${many
        .slice(0, 8)
        .map((k) => JSON.stringify(k))
        .join(', ')} and 3 more (widened)`,
    );
  });

  it('says a field it has no words for by its name', () => {
    expect(
      specDifferences(
        { login: 'a', secretPath: '/s', values: { tags: ['x'] } },
        { login: 'a', secretPath: '/s', values: { tags: ['x', 'y'] } },
      ),
    ).toEqual(['tags added: "y" (widened)']);
  });
});
