#!/usr/bin/env node
/**
 * The `holdfast` command line. Exit codes: 0 fine, 1 something is not served (status) or would change (plan), 2 could
 * not run (or a usage error; plan: refused or invalid).
 */
// first: bounds V8's heap growth before any other module loads
import './heap-first.js';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { JobCommand } from '../schedule/consumer-queue.js';

// loaded once heap-first has run: a static import is loaded and compiled before any line here
// runs, and loading these grew V8's young generation to 8 MB before its bound was set (2 MB now)
const { Command, CommanderError, InvalidArgumentError } = await import('commander');
const { parseListen } = await import('../config/load-config.js');
const { parseDuration } = await import('../config/duration.js');
const { isHoldfastError } = await import('../errors/holdfast-error.js');
const { processScrubber } = await import('./load.js');
const { printErr } = await import('../text/terminal-text.js');

/** holdfast's own package.json, found upwards from here (src/cli or dist/src/cli). */
function version(): string {
  for (let dir = import.meta.dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'holdfast' && pkg.version) return pkg.version;
    }
  }
  return 'unknown';
}

const HELP_AFTER = `
Exit codes:
  0  done; for status: everything declared is served
  1  status: something is not served (each reason is named)
     plan: something would change (a create, change or removal, or a drifted consumer to heal)
  2  could not run: a usage error, a bad configuration, a store that cannot be reached
     plan: also when anything is refused, a contributions file is invalid, or a backend could not be asked

Environment variables:
  HOLDFAST_CONFIG      configuration file, when --config is not given
  HOLDFAST_LOG_LEVEL   trace, debug, info, warn, error or fatal (overrides log.level)
  HOLDFAST_LOG_FORMAT  json or pretty (overrides log.format)

check, reapply, suspend and resume only queue a job: a running worker (\`holdfast run\` or
\`holdfast worker\`) acts on it, and \`holdfast status\` shows the outcome.`;

const program = new Command()
  .name('holdfast')
  .description("Keeps every consumer's credential true on the backends that serve it.")
  .version(version(), '-V, --version')
  .showHelpAfterError()
  .addHelpText('after', HELP_AFTER)
  // a usage error exits 2: 1 means only "something is not served"
  .exitOverride((error) => {
    throw error;
  });

/** Every command reads the configuration file. */
function command(nameAndArgs: string, description: string) {
  return program
    .command(nameAndArgs)
    .description(description)
    .option('-c, --config <file>', 'configuration file (default: $HOLDFAST_CONFIG)')
    .addHelpText('after', HELP_AFTER);
}

function listen(value: string): { host: string; port: number } {
  try {
    return parseListen(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

const HTTP_HELP =
  'serve the dashboard (/), /queues, /status, /healthz and /metrics there (default: http.listen; off when neither); a port alone listens on 127.0.0.1';

command('run', 'run desired-state sync and a worker until SIGINT or SIGTERM')
  .option('--http <host:port>', HTTP_HELP, listen)
  .action(async (options: { config?: string; http?: { host: string; port: number } }) => {
    const { runCommand } = await import('./run-command.js');
    await runCommand(options);
  });

command('worker', 'run a worker only (more workers for the same queue and store)')
  .option('--http <host:port>', HTTP_HELP, listen)
  .action(async (options: { config?: string; http?: { host: string; port: number } }) => {
    const { runCommand } = await import('./run-command.js');
    await runCommand(options, { sync: false, worker: true });
  });

/** Commands that send one consumer an event, which a running worker acts on. */
const SENDS: ReadonlyArray<[name: string, description: string, event: JobCommand]> = [
  ['check', 'ask the backend about one consumer now (e.g. cache/photos)', { type: 'CHECK_NOW' }],
  ['reapply', 'apply one consumer again now', { type: 'REAPPLY' }],
  ['suspend', 'leave one consumer as it is: not checked, not applied, until resumed', { type: 'SUSPEND' }],
  ['resume', 'end a suspension: the consumer is asked now, and applied again if need be', { type: 'RESUME' }],
];
for (const [name, description, event] of SENDS) {
  command(
    `${name} <consumer>`,
    `${description}; only queues a job: a running worker (holdfast run or worker) acts on it`,
  ).action(async (consumer: string, options: { config?: string }) => {
    const { sendCommand } = await import('./send-command.js');
    await sendCommand(consumer, event, options);
  });
}

command('status', 'counts per provider and state, and every consumer not served; exits 1 when anything is not served')
  .option('--json', 'machine-readable output')
  .option('--all', 'list every consumer, not only those not served')
  .action(async (options: { config?: string; json?: boolean; all?: boolean }) => {
    // each command loads only what it needs: the status answers fast
    const { statusCommand } = await import('./status-command.js');
    process.exitCode = await statusCommand(options);
  });

function since(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

command(
  'history <consumer>',
  "every transition of one consumer holdfast still keeps (e.g. cache/photos), oldest first: when, from and to, who caused it (check, desired, command, heal, wait, recovery), the node, the reason; and how far back that goes (the record's last 20 transitions, and the heals only the provider's timeline holds)",
)
  .option('--json', 'machine-readable output (as GET /consumers/<provider>/<id>/history)')
  .option('--since <duration>', 'only the transitions of the last <duration> (e.g. 24h, 30m)', since)
  .action(async (consumer: string, options: { config?: string; json?: boolean; since?: number }) => {
    const { historyCommand } = await import('./history-command.js');
    await historyCommand(consumer, { ...options, ...(options.since !== undefined ? { sinceMs: options.since } : {}) });
  });

command(
  'confirm-removals <provider>',
  'apply the change the mass-removal guard holds back for a provider, exactly as held back and named by its digest (holdfast status and plan print it); refused when the change held back now is another',
)
  .requiredOption('--change <digest>', 'the held-back change reviewed, by its digest as status and plan print it')
  .action(async (provider: string, options: { config?: string; change: string }) => {
    const { confirmRemovalsCommand } = await import('./confirm-removals-command.js');
    await confirmRemovalsCommand(provider, options);
  });

command(
  'plan',
  'read only: what holdfast run would create, change, remove or refuse, and what has drifted now, against the records and the live backends',
)
  .option(
    '--contributions <provider=file>',
    'plan this proposed contributions file for the provider instead of the one in place (repeatable)',
    (value: string, all: string[] = []) => [...all, value],
  )
  .option(
    '--deep',
    'ask every consumer the deep check (rules compared), not only those whose light check (a login) does not pass',
  )
  .option('--json', 'machine-readable output')
  .action(async (options: { config?: string; json?: boolean; deep?: boolean; contributions?: string[] }) => {
    const { planCommand } = await import('./plan-command.js');
    process.exitCode = await planCommand(options);
  });

command(
  'doctor',
  "as this process: can every admin and grant secret be read and used, does each grant secret hold what its writer meant (no trailing space, second newline, CRLF, byte-order mark, non-UTF-8 byte, nor a hash's form), and does every server answer? one line per problem; exits 1 on any",
).action(async (options: { config?: string }) => {
  const { doctorCommand } = await import('./doctor-command.js');
  process.exitCode = await doctorCommand(options);
});

program.parseAsync().catch((error: unknown) => {
  if (error instanceof CommanderError) {
    // --help and --version exit 0; every other commander error is a usage error
    process.exitCode = error.exitCode === 0 ? 0 : 2;
    return;
  }
  const message = isHoldfastError(error) ? `${error.message} [${error.code}]` : processScrubber.describe(error);
  printErr(`holdfast: ${processScrubber.scrub(message)}\n`);
  process.exitCode = 2;
});
