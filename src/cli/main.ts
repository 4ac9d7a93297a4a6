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

program
  .command('run')
  .description('run desired-state sync and a worker until SIGINT or SIGTERM')
  .option('-c, --config <file>', 'configuration file (default: $HOLDFAST_CONFIG)')
  .action(async (options: { config?: string }) => {
    await runCommand(options);
  });

program
  .command('worker')
  .description('run a worker only (more workers for the same queue and store)')
  .option('-c, --config <file>', 'configuration file (default: $HOLDFAST_CONFIG)')
  .action(async (options: { config?: string }) => {
    await runCommand(options, { sync: false, worker: true });
  });

program
  .command('check <consumer>')
  .description('ask the backend about one consumer now (e.g. cache/photos)')
  .option('-c, --config <file>', 'configuration file (default: $HOLDFAST_CONFIG)')
  .action(async (consumer: string, options: { config?: string }) => {
    await sendCommand(consumer, { type: 'CHECK_NOW' }, options);
  });

program
  .command('reapply <consumer>')
  .description('apply one consumer again now')
  .option('-c, --config <file>', 'configuration file (default: $HOLDFAST_CONFIG)')
  .action(async (consumer: string, options: { config?: string }) => {
    await sendCommand(consumer, { type: 'REAPPLY' }, options);
  });

program
  .command('status')
  .description("every consumer's state; exits 1 when any consumer is not held")
  .option('-c, --config <file>', 'configuration file (default: $HOLDFAST_CONFIG)')
  .option('--json', 'machine-readable output')
  .action(async (options: { config?: string; json?: boolean }) => {
    process.exitCode = await statusCommand(options);
  });

program.parseAsync().catch((error: unknown) => {
  const message = isHoldfastError(error) ? `${error.message} [${error.code}]` : processScrubber.describe(error);
  process.stderr.write(`holdfast: ${processScrubber.scrub(message)}\n`);
  process.exitCode = 2;
});
