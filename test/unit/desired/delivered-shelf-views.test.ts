import { describe, expect, it } from 'vitest';
import { DeliveredShelf } from '../../../src/desired/delivered-shelf.js';

describe("DeliveredShelf: the claimed logins' views", () => {
  it('tells each login its consumer, and follows every change of a login', () => {
    const claimed = new DeliveredShelf();
    claimed.set('cache/a', undefined, 'app-a');
    claimed.set('cache/b', undefined, 'app-b');
    expect([...claimed.owners()]).toEqual([
      ['app-a', 'cache/a'],
      ['app-b', 'cache/b'],
    ]);
    expect([...claimed.loginSet()]).toEqual(['app-a', 'app-b']);

    claimed.set('cache/a', undefined, 'app-a2'); // a consumer's login changed
    expect(claimed.owners().get('app-a2')).toBe('cache/a');
    expect(claimed.owners().has('app-a')).toBe(false);
    expect(claimed.loginSet().has('app-a')).toBe(false);

    claimed.delete('cache/b'); // no longer declared
    expect(claimed.owners().has('app-b')).toBe(false);
    expect([...claimed.loginSet()]).toEqual(['app-a2']);
  });

  it('hands out the same views while nothing changed, and never changes one handed out', () => {
    const claimed = new DeliveredShelf();
    claimed.set('cache/a', undefined, 'app-a');
    const owners = claimed.owners();
    const logins = claimed.loginSet();
    claimed.set('cache/a', undefined, 'app-a'); // the same login again: no change
    expect(claimed.owners()).toBe(owners);
    expect(claimed.loginSet()).toBe(logins);

    claimed.set('cache/c', undefined, 'app-c');
    expect([...owners]).toEqual([['app-a', 'cache/a']]);
    expect([...logins]).toEqual(['app-a']);
    expect(claimed.owners().get('app-c')).toBe('cache/c');
  });
});
