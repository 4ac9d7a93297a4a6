/**
 * A real Prometheus (Debian's `prometheus`, 2.42) as a local process for a test file: a free
 * loopback port, a throw-away data directory in the run directory, recorded there like every
 * server the harness starts (so the run's teardown reaps it whatever happens), and stopped
 * after the file's tests. It scrapes the targets given, evaluates the rule files given, and is
 * asked what it sees through its HTTP API.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, inject } from 'vitest';
import { version } from './local-server.js';
import { ManagedProcess } from './managed-process.js';
import { freePort } from './ports.js';
import { instanceDir } from './run-dir.js';
import { readSettings } from './settings.js';

export interface PrometheusOptions {
  /** `host:port` of each /metrics to scrape, as the job `holdfast`. */
  targets: readonly string[];
  /** Rule files to load (copied into the data directory). */
  ruleFiles: readonly string[];
  /** Scrape and evaluation interval, in seconds (the scrape timeout is the same). */
  everySeconds: number;
}

/** An alert as `/api/v1/alerts` lists it (pending or firing; resolved alerts leave the list). */
export interface PrometheusAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

export class LocalPrometheus {
  private constructor(
    readonly url: string,
    readonly flavor: string,
    private readonly process: ManagedProcess,
  ) {}

  static async start(options: PrometheusOptions): Promise<LocalPrometheus> {
    const binary = readSettings().binaries.prometheus;
    const flavor = version(binary, ['--version']);
    const dir = instanceDir({ root: inject('backendRunDir') }, 'prometheus');
    const rules = options.ruleFiles.map((file) => {
      copyFileSync(file, join(dir, basename(file)));
      return basename(file);
    });
    const every = `${options.everySeconds}s`;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      JSON.stringify({
        global: { scrape_interval: every, scrape_timeout: every, evaluation_interval: every },
        rule_files: rules,
        scrape_configs: [{ job_name: 'holdfast', static_configs: [{ targets: options.targets }] }],
      }),
    );
    const port = await freePort();
    const proc = new ManagedProcess(
      { root: inject('backendRunDir') },
      {
        command: binary,
        args: [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--log.level=warn',
        ],
        cwd: dir,
        logFile: join(dir, 'prometheus.log'),
      },
    );
    proc.start();
    const server = new LocalPrometheus(`http://127.0.0.1:${port}`, flavor, proc);
    started.push(server);
    await server.ready();
    return server;
  }

  private async ready(timeoutMs = 30_000): Promise<void> {
    const start = Date.now();
    for (;;) {
      const ok = await fetch(`${this.url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (!this.process.running) throw new Error(`prometheus exited at start: ${this.process.logTail()}`);
      if (Date.now() - start > timeoutMs)
        throw new Error(`prometheus not ready after ${timeoutMs} ms: ${this.process.logTail()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async api<T>(path: string): Promise<T> {
    const response = await fetch(`${this.url}/api/v1/${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  }

  /** The alerts pending or firing now. */
  async alerts(): Promise<PrometheusAlert[]> {
    return (await this.api<{ alerts: PrometheusAlert[] }>('alerts')).alerts;
  }

  /** An instant query's samples: labels and value. */
  async query(expr: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
    const data = await this.api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
      `query?query=${encodeURIComponent(expr)}`,
    );
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** What the rule files loaded say of themselves (their health, and the last evaluation's error). */
  async ruleHealth(): Promise<Array<{ name: string; health: string; lastError?: string }>> {
    const data = await this.api<{
      groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }>;
    }>('rules');
    return data.groups.flatMap((g) => g.rules);
  }

  logTail(): string {
    return this.process.logTail();
  }

  async stop(): Promise<void> {
    await this.process.stop();
  }
}

const started: LocalPrometheus[] = [];
afterAll(async () => {
  await Promise.allSettled(started.splice(0).map((p) => p.stop()));
});
