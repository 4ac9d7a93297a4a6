/** The global setup's start-up: a failed one stops what it started; servers start with a clean environment. */
import { describe, expect, it } from 'vitest';
import { allStarted } from '../backends/all-started.js';
import { serverEnvironment } from '../backends/settings.js';

describe('the servers started together', () => {
  it('tell a failure only once every start has settled, so that the clean-up stops one that started last', async () => {
    const started: string[] = [];
    let finish: () => void = () => undefined;
    const slow = new Promise<string>((resolve) => (finish = () => resolve('postgres'))).then((name) => {
      started.push(name);
      return name;
    });
    const failing = Promise.reject(new Error('weed did not start'));
    const told = allStarted([Promise.resolve('redis').then((n) => (started.push(n), n)), slow, failing]).catch(
      (error: unknown) => ({ error, startedThen: [...started] }),
    );
    await new Promise((r) => setTimeout(r, 20));
    finish();
    expect(await told).toEqual({ error: new Error('weed did not start'), startedThen: ['redis', 'postgres'] });
  });

  it('reply every value when all started', async () => {
    expect(await allStarted([Promise.resolve(1), Promise.resolve(2)])).toEqual([1, 2]);
  });
});

describe("a server's environment", () => {
  it('keeps where programs are, the locale and who runs it; drops what is meant for the tests (DEBUG, PG*, WEED_*)', () => {
    const env = serverEnvironment(
      { AWS_ACCESS_KEY_ID: 'k' },
      { PATH: '/usr/bin', HOME: '/root', LC_ALL: 'C', DEBUG: '*', PGHOST: 'elsewhere', WEED_MASTER_PORT: '1' },
    );
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/root', LC_ALL: 'C', AWS_ACCESS_KEY_ID: 'k' });
  });
});
