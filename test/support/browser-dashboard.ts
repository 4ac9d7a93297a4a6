/**
 * A `holdfast run --http` on a test's configuration, and Debian's chromium (through
 * playwright-core, no browser downloaded) on its pages, every Content-Security-Policy violation
 * and page error collected. Shared by the browser tests; `stop` ends both.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from '../backends/ports.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
export const CHROMIUM = '/usr/bin/chromium';

/** Polls `predicate` every 250 ms until it holds, or throws naming `what`. */
export async function until(what: string, predicate: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export class BrowserDashboard {
  private constructor(
    private readonly run: ChildProcess,
    readonly url: string,
    private readonly output: { text: string },
  ) {}

  private browser: Browser | undefined;

  /** Starts `holdfast run --http` on a free port and waits until `/healthz` says every consumer is served. */
  static async start(configPath: string): Promise<BrowserDashboard> {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} missing: scripts/install-deps.sh installs Debian's chromium`);
    const port = await freePort();
    const run = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, 'run', '-c', configPath, '--http', `127.0.0.1:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = { text: '' };
    run.stdout?.on('data', (d: Buffer) => (output.text += d.toString()));
    run.stderr?.on('data', (d: Buffer) => (output.text += d.toString()));
    const dashboard = new BrowserDashboard(run, `http://127.0.0.1:${port}`, output);
    await until('every consumer served', () => dashboard.healthy(), 60_000).catch(async (error: Error) => {
      await dashboard.stop();
      throw new Error(`${error.message}\n${output.text}`);
    });
    return dashboard;
  }

  /** What `holdfast run` wrote so far. */
  get log(): string {
    return this.output.text;
  }

  async healthy(): Promise<boolean> {
    return (await fetch(`${this.url}/healthz`).catch(() => undefined))?.status === 200;
  }

  /** A new page; `violations` collects each CSP violation and page error the browser reports. */
  async page(options: {
    viewport: { width: number; height: number };
    deviceScaleFactor?: number;
  }): Promise<{ page: Page; violations: string[] }> {
    this.browser ??= await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    const page = await this.browser.newPage(options);
    const violations: string[] = [];
    await page.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline')));",
    });
    page.on('console', (message) => {
      if (/Content Security Policy|CSP violation/i.test(message.text()))
        violations.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => violations.push(`${page.url()}: page error ${error.message}`));
    return { page, violations };
  }

  async stop(): Promise<void> {
    await this.browser?.close();
    if (this.run.exitCode === null) {
      const exited = new Promise((r) => this.run.once('exit', r));
      this.run.kill('SIGTERM');
      await exited;
    }
  }
}
