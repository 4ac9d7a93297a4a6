/**
 * The scene of every alert test: `holdfast run --http` on an engine fixture's configuration, left
 * until its page shows every consumer held, then scraped each second by a real Prometheus loaded
 * with the shipped rules (`deploy/prometheus/holdfast-rules.yml`). The Prometheus is stopped by
 * its own harness (`test/backends/prometheus.ts`); the process by {@link ScrapedHoldfast.kill}.
 */
import { resolve } from 'node:path';
import { freePort } from '../backends/ports.js';
import { LocalPrometheus, type PrometheusAlert } from '../backends/prometheus.js';
import type { EngineFixture } from '../integration/engine/engine-fixture.js';
import { spawnHoldfast, type HoldfastProcess } from './holdfast-cli.js';
import { until } from './until.js';

export const SHIPPED_RULES = resolve(import.meta.dirname, '../../deploy/prometheus/holdfast-rules.yml');

/** A consumer as `/status?all=1` lists it. */
interface ListedConsumer {
  consumer: string;
  state: string;
}

export interface ScrapedHoldfast {
  holdfast: HoldfastProcess;
  /** Its HTTP server's origin. */
  hf: string;
  prometheus: LocalPrometheus;
  /** `/status?all=1`, as the test reads it. */
  status: <T extends { consumers: ListedConsumer[] }>() => Promise<T>;
  /** The alerts of one rule, as Prometheus has them now. */
  alertsNamed: (name: string) => Promise<PrometheusAlert[]>;
  /** What holdfast said last: a wait's message when it times out. */
  said: () => Promise<string>;
  /** Prometheus's alerts and the end of its log: a wait's message when it times out. */
  seen: () => Promise<string>;
  kill: () => void;
}

/** Starts the scene for `fixture`'s `consumers` consumers; resolves once they are held and Prometheus scrapes. */
export async function startScrapedHoldfast(fixture: EngineFixture, consumers: number): Promise<ScrapedHoldfast> {
  const port = await freePort();
  const holdfast = spawnHoldfast(['run', '-c', `${fixture.dir}/holdfast.yaml`, '--http', String(port)]);
  const hf = `http://127.0.0.1:${port}`;
  const said = () => Promise.resolve(`holdfast said: ${holdfast.output().split('\n').slice(-8).join('\n')}`);
  const status = async <T>() => (await (await fetch(`${hf}/status?all=1`)).json()) as T;
  await until(
    'every consumer held',
    async () => {
      const listed = await status<{ consumers: ListedConsumer[] }>().catch(() => undefined);
      return listed?.consumers.length === consumers && listed.consumers.every((c) => c.state === 'held')
        ? true
        : undefined;
    },
    60_000,
    said,
  );
  const prometheus = await LocalPrometheus.start({
    targets: [`127.0.0.1:${port}`],
    ruleFiles: [SHIPPED_RULES],
    everySeconds: 1,
  });
  return {
    holdfast,
    hf,
    prometheus,
    status,
    alertsNamed: async (name) => (await prometheus.alerts()).filter((a) => a.labels.alertname === name),
    said,
    seen: async () =>
      `alerts: ${JSON.stringify(await prometheus.alerts().catch(() => []))}; prometheus said: ${prometheus.logTail()}`,
    kill: () => holdfast.kill('SIGKILL'),
  };
}
