/**
 * The status answers within its budget whatever does not answer: with the record store or the
 * queue's Redis frozen (SIGSTOP: connections stay open, nothing answers), `holdfast status`,
 * `/healthz` and `/status` (of a running `holdfast run --http`) each answer red, naming the
 * server and how long it has not answered, well before a driver's 30 s defaults. The bounds
 * below are generous (a loaded machine, a CLI started through tsx): they prove it does not
 * hang, the figures logged are what it took.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStatus } from '../../../src/cli/status-command.js';
import { freePort } from '../../backends/ports.js';
import { ownBackend, type OwnedBackend } from '../../backends/index.js';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';

/** Far below a driver's 30 s; above the 4 s budget plus a CLI's start-up on a loaded machine. */
const CLI_BOUND_MS = 12_000;
const HTTP_BOUND_MS = 8_000;

async function timedGet(url: string): Promise<{ status: number; text: string; ms: number }> {
  const started = Date.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  return { status: response.status, text, ms: Date.now() - started };
}

/** `holdfast status` once: its exit code, output, and how long it took from spawn to exit. */
async function cliStatus(
  f: EngineFixture,
): Promise<{ code: number | null | 'still running'; output: string; ms: number }> {
  const started = Date.now();
  const child = spawnHoldfast(['status', '-c', join(f.dir, 'holdfast.yaml')]);
  const code = await exitOf(child, 60_000);
  if (code === 'still running') child.kill('SIGKILL');
  return { code, output: child.output(), ms: Date.now() - started };
}

/** Runs `during` with `server` frozen, thawing it whatever happens. */
async function frozen<T>(server: OwnedBackend, during: () => Promise<T>): Promise<T> {
  await server.pause();
  try {
    return await during();
  } finally {
    await server.resume();
  }
}

describe('the status answers within its budget', () => {
  const fixture = engineFixtures();

  it('with the record store frozen and no worker running: holdfast status red, naming the store, within seconds', async () => {
    const store = await ownBackend('mongodb');
    const f = await fixture({ store, consumers: 2 });
    await f.startHeld();
    for (const engine of f.engines.splice(0)) await engine.stop();
    const green = await cliStatus(f);
    console.log(`holdfast status, all answering: exit ${green.code} after ${green.ms} ms`);
    const [answer, inProcess] = await frozen(store, async () => {
      const cli = await cliStatus(f);
      const started = Date.now();
      const read = await readStatus(f.config, {});
      return [cli, { ms: Date.now() - started, report: read }] as const;
    });
    console.log(
      `holdfast status, store frozen, no worker: exit ${answer.code} after ${answer.ms} ms; readStatus in process ${inProcess.ms} ms: ${inProcess.report.problems.join('; ')}`,
    );
    expect(inProcess.report.healthy).toBe(false);
    expect(inProcess.ms).toBeLessThan(HTTP_BOUND_MS);
    expect(answer.code).toBe(1);
    expect(answer.output).toMatch(
      new RegExp(`record store ${f.config.store.url.replace(/[.?/]/g, '\\$&')} has not answered for \\ds`),
    );
    expect(answer.ms).toBeLessThan(CLI_BOUND_MS);
  });

  for (const which of ['store', 'queue'] as const) {
    const named = which === 'store' ? 'record store' : "queue's Redis";
    it(`with the ${named} frozen under a running holdfast run --http: the CLI, /healthz and /status red, naming it`, async () => {
      const store = await ownBackend('mongodb');
      const queue = await ownBackend('redis');
      const f = await fixture({ store, queue, consumers: 3, timing: { verifyEvery: '2s', checkTimeout: '1s' } });
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const run = spawnHoldfast(['run', '-c', join(f.dir, 'holdfast.yaml'), '--http', `127.0.0.1:${port}`]);
      try {
        await f.until(
          'served, through the CLI and HTTP',
          async () =>
            (await cliStatus(f)).code === 0 &&
            (await timedGet(`${base}/healthz`).catch(() => ({ status: 0 }))).status === 200,
          60_000,
        );
        const queueUrl = `redis://${queue.host}:${queue.port}/0`;
        const saysIt =
          which === 'store'
            ? new RegExp(
                `record store ${f.config.store.url.replace(/[.?/]/g, '\\$&')} (does not answer since \\S+, \\d+s ago|has not answered for \\d+s)`,
              )
            : new RegExp(`queue Redis ${queueUrl.replace(/[.?/]/g, '\\$&')} (has not answered for \\d+s|unreachable)`);
        const server = which === 'store' ? store : queue;

        const [cli, healthz, status, again, inProcess] = await frozen(server, async () => {
          await new Promise((r) => setTimeout(r, 1000)); // frozen for a moment (a report read just before is shared for 250 ms)
          const first = await timedGet(`${base}/healthz`);
          const returned = await cliStatus(f);
          const json = await timedGet(`${base}/status`);
          const second = await timedGet(`${base}/healthz`);
          // what the CLI runs, without its start-up
          const started = Date.now();
          const read = await readStatus(f.config, {});
          return [returned, first, json, second, { ms: Date.now() - started, report: read }] as const;
        });
        console.log(
          `${named} frozen: holdfast status exit ${cli.code} after ${cli.ms} ms; /healthz ${healthz.status} after ${healthz.ms} ms, again ${again.status} after ${again.ms} ms; /status after ${status.ms} ms`,
        );
        console.log(
          `  readStatus (the CLI's read, in process) took ${inProcess.ms} ms: ${inProcess.report.problems.join('; ')}`,
        );
        console.log(`  holdfast status said: ${cli.output.trim()}\n  /healthz said: ${healthz.text.trim()}`);

        expect(cli.code).toBe(1);
        expect(cli.output).toMatch(saysIt);
        expect(cli.ms).toBeLessThan(CLI_BOUND_MS);
        expect(inProcess.report.healthy).toBe(false);
        expect(inProcess.report.problems.join('\n')).toMatch(saysIt);
        expect(inProcess.ms).toBeLessThan(HTTP_BOUND_MS);
        for (const answer of [healthz, again]) {
          expect(answer.status).toBe(503);
          expect(answer.text).toMatch(saysIt);
          expect(answer.ms).toBeLessThan(HTTP_BOUND_MS);
        }
        const report = JSON.parse(status.text) as { healthy: boolean; problems: string[] };
        expect(report.healthy).toBe(false);
        expect(report.problems.join('\n')).toMatch(saysIt);
        expect(status.ms).toBeLessThan(HTTP_BOUND_MS);

        // thawed: green again, through both
        await f.until(
          'served again',
          async () => (await cliStatus(f)).code === 0 && (await timedGet(`${base}/healthz`)).status === 200,
          60_000,
        );
      } finally {
        run.kill('SIGTERM');
        if ((await exitOf(run, 20_000)) === 'still running') run.kill('SIGKILL');
      }
    });
  }
});
