/** The shared call wrapper: deadlines, call slots, error codes and scrubbing. */
import { describe, expect, it } from 'vitest';
import { BackendCalls } from '../../../src/adapters/backend-calls.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';

class Answered extends Error {}

const calls = (maxConcurrent?: number) =>
  new BackendCalls({
    adapter: 'test-kind',
    where: 'db:1',
    adminSecrets: ['admin-secret-1'],
    answered: (e) => e instanceof Answered,
    code: (e) => (e instanceof Answered && e.message.includes('owns') ? 'BACKEND_REFUSED' : undefined),
    ...(maxConcurrent === undefined ? {} : { maxConcurrent }),
  });

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof HoldfastError ? e.code : 'other'),
  );
const never = () => new Promise<never>(() => undefined);

describe('backend calls', () => {
  it("maps errors: answered → BACKEND_ERROR or the adapter's code, anything else → BACKEND_UNAVAILABLE; scrubbed", async () => {
    const c = calls();
    const signal = AbortSignal.timeout(1000);
    const error = await c
      .run(signal, 'CREATE ROLE', ['grant-pw-99'], () => Promise.reject(new Answered('bad grant-pw-99 and SCRAM-x1y2')))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HoldfastError);
    expect((error as HoldfastError).code).toBe('BACKEND_ERROR');
    expect((error as HoldfastError).message).toBe(
      'test-kind at db:1: CREATE ROLE failed: bad [redacted] and SCRAM-x1y2',
    );
    const scrubbedForm = await c
      .run(signal, 'x', [], () => Promise.reject(new Answered('SCRAM-x1y2')), ['SCRAM-x1y2'])
      .catch((e: unknown) => (e as Error).message);
    expect(scrubbedForm).toContain('[redacted]');
    expect(await codeOf(c.run(signal, 'x', [], () => Promise.reject(new Error('ECONNREFUSED admin-secret-1'))))).toBe(
      'BACKEND_UNAVAILABLE',
    );
    expect(await codeOf(c.run(signal, 'x', [], () => Promise.reject(new Answered('role owns objects'))))).toBe(
      'BACKEND_REFUSED',
    );
  });

  it('rejects with DEADLINE_EXCEEDED at once when aborted, and never starts the call', async () => {
    let started = false;
    const c = calls();
    expect(await codeOf(c.run(AbortSignal.abort(), 'x', [], () => ((started = true), Promise.resolve())))).toBe(
      'DEADLINE_EXCEEDED',
    );
    expect(started).toBe(false);
    const controller = new AbortController();
    const pending = codeOf(c.run(controller.signal, 'x', [], never));
    controller.abort();
    expect(await pending).toBe('DEADLINE_EXCEEDED');
  });

  it('runs at most maxConcurrent calls at once; a waiter whose deadline passes leaves the line and never runs', async () => {
    const c = calls(2);
    let running = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const work = () =>
      new Promise<void>((resolve) => {
        running++;
        most = Math.max(most, running);
        releases.push(() => {
          running--;
          resolve();
        });
      });
    const forever = new AbortController().signal;
    const first = [c.run(forever, 'a', [], work), c.run(forever, 'b', [], work)];
    const impatient = new AbortController();
    let lateStarted = false;
    const late = codeOf(c.run(impatient.signal, 'late', [], () => ((lateStarted = true), Promise.resolve())));
    const third = c.run(forever, 'c', [], work);
    await new Promise((r) => setTimeout(r, 20));
    expect(running).toBe(2);
    impatient.abort();
    expect(await late).toBe('DEADLINE_EXCEEDED');
    releases.shift()!();
    await first[0];
    await new Promise((r) => setTimeout(r, 20));
    expect(running).toBe(2); // the third took the freed slot, the aborted one did not
    for (const release of releases.splice(0)) release();
    await Promise.all([first[1], third]);
    expect(most).toBe(2);
    expect(lateStarted).toBe(false);
  });

  it("holds a call's slot past its caller's deadline until the backend's call has ended: no more calls on the server than its slots", async () => {
    const c = calls(1);
    let end: (() => void) | undefined;
    const hung = new AbortController();
    // the server still runs the first call when its caller gives up on it
    const first = codeOf(c.run(hung.signal, 'slow', [], () => new Promise<void>((resolve) => (end = resolve))));
    while (!end) await new Promise((r) => setTimeout(r, 1));
    hung.abort();
    expect(await first).toBe('DEADLINE_EXCEEDED');
    let nextStarted = false;
    const next = c.run(new AbortController().signal, 'next', [], () => ((nextStarted = true), Promise.resolve('ran')));
    await new Promise((r) => setTimeout(r, 20));
    expect(nextStarted).toBe(false); // the slot is the slow call's until the server ends it
    end();
    expect(await next).toBe('ran');
    expect(nextStarted).toBe(true);
  });
});
