#!/usr/bin/env node
/** The `holdfast` command line. Exit codes: 0 fine, 1 not healthy, 2 could not run. */
import { Command } from 'commander';
import { isHoldfastError } from '../errors/holdfast-error.js';
import { processScrubber } from './load.js';
import { runCommand } from './run-command.js';
import { sendCommand } from './send-command.js';
import { statusCommand } from './status-command.js';

const program = new Command()
  .name('holdfast')
  .description("Keeps every consumer's credential true on the backends that serve it.")
  .showHelpAfterError();

/** Every command reads the configuration file. */
function command(nameAndArgs: string, description: string) {
  return program.command(nameAndArgs).description(description).option('-c, --config <file>', 'configuration file (default: $HOLDFAST_CONFIG)');
}

command('run', 'run desired-state sync and a worker until SIGINT or SIGTERM')
  .action(async (options: { config?: string }) => {
    await runCommand(options);
  });

command('worker', 'run a worker only (more workers for the same queue and store)')
  .action(async (options: { config?: string }) => {
    await runCommand(options, { sync: false, worker: true });
  });

command('check <consumer>', 'ask the backend about one consumer now (e.g. cache/photos)')
  .action(async (consumer: string, options: { config?: string }) => {
    await sendCommand(consumer, { type: 'CHECK_NOW' }, options);
  });

command('reapply <consumer>', 'apply one consumer again now')
  .action(async (consumer: string, options: { config?: string }) => {
    await sendCommand(consumer, { type: 'REAPPLY' }, options);
  });

command('status', "every consumer's state; exits 1 when any consumer is not held")
  .option('--json', 'machine-readable output')
  .action(async (options: { config?: string; json?: boolean }) => {
    process.exitCode = await statusCommand(options);
  });

program.parseAsync().catch((error: unknown) => {
  const message = isHoldfastError(error) ? `${error.message} [${error.code}]` : processScrubber.describe(error);
  process.stderr.write(`holdfast: ${processScrubber.scrub(message)}\n`);
  process.exitCode = 2;
});
