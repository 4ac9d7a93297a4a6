/**
 * The timelines' scales over HTTP, on a running engine: after a login deleted by hand and healed, the status page and
 * the consumer's page draw the heal at the last hour (their default on a young run) and at 24 h, each linking to the
 * other; a scale that is not `1h` or `24h` is refused with fixed words, never shown back.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../../src/http/http-server.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from '../engine/engine-fixture.js';

/** The sum of the `data-count` of the marks of `kind` in `html`. */
const marks = (html: string, kind: string) =>
  [...html.matchAll(new RegExp(`data-kind="${kind}" data-count="(\\d+)"`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);

describe('the timeline scales over HTTP', () => {
  const fixture = engineFixtures();
  let server: HttpServer | undefined;
  afterAll(async () => server?.close());

  it('render the last hour and the 24 h on both pages, and refuse any other scale', async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    const engine = await f.start();
    await f.until('every consumer held', () => f.allHeld());
    server = await f.httpServer(engine, undefined);
    const get = (path: string) => fetch(`${server!.url}${path}`);
    const text = async (path: string, status = 200) => {
      const r = await get(path);
      expect(r.status, path).toBe(status);
      return r.text();
    };

    const healed = f.consumers[0]!;
    const admin = new Redis(sharedBackend('redis').url);
    await admin.call('ACL', 'DELUSER', healed.login);
    admin.disconnect();
    await f.until('the heal on the timeline', async () => marks(await text('/'), 'healed') >= 1);
    expect(await f.canLogin(healed)).toBe(true);

    const byDefault = await text('/');
    expect(byDefault).toContain('<h2>Last hour</h2>');
    expect(byDefault).toMatch(/<svg class="timeline"[^>]*data-provider="cache" data-scale="1h"/);
    expect(byDefault).toContain('<a href="?scale=24h" data-scale="24h">the last 24 h</a>');
    for (const scale of ['1h', '24h']) {
      const page = await text(`/?scale=${scale}`);
      expect(page).toMatch(new RegExp(`<svg class="timeline"[^>]*data-provider="cache" data-scale="${scale}"`));
      expect(page).toContain(`<strong aria-current="true" data-scale="${scale}">`);
      expect(marks(page, 'healed')).toBeGreaterThanOrEqual(1);
      expect(marks(page, 'lost')).toBeGreaterThanOrEqual(1);
      const own = await text(`/consumer?key=${encodeURIComponent(healed.key)}&scale=${scale}`);
      expect(own).toMatch(new RegExp(`<svg class="timeline"[^>]*data-consumer="${healed.key}" data-scale="${scale}"`));
      expect(marks(own, 'healed')).toBeGreaterThanOrEqual(1);
      const other = scale === '1h' ? '24h' : '1h';
      expect(own).toContain(`<a href="?key=${encodeURIComponent(healed.key)}&amp;scale=${other}"`);
    }
    expect(await text('/?provider=cache&scale=24h')).toContain('<a href="?provider=cache&amp;scale=1h"');

    for (const refused of ['2h', '%3Cscript%3Ealert(1)%3C%2Fscript%3E', '1h&scale=24h', 'toString']) {
      for (const path of [`/?scale=${refused}`, `/consumer?key=${encodeURIComponent(healed.key)}&scale=${refused}`]) {
        const body = await text(path, 400);
        expect(body).toBe('scale: 1h or 24h (or none, for the default)\n');
      }
    }
    const empty = await text('/?scale=');
    expect(empty).toContain('data-scale="1h"');
    for (const c of f.consumers) expect(byDefault).not.toContain(c.password);
  });
});
