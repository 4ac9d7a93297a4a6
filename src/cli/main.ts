#!/usr/bin/env node
/** The `holdfast` command line. Exit codes: 0 fine, 1 not healthy, 2 could not run. */
import { Command } from 'commander';
import type { CommandEvent } from '../../machines/consumer-events.js';
import { isHoldfastError } from '../errors/holdfast-error.js';
import { processScrubber } from './load.js';
import { runCommand } from './run-command.js';
import { sendCommand } from './send-command.js';
import { statusCommand } from './status-command.js';
import { confirmRemovalsCommand } from './confirm-removals-command.js';
import { doctorCommand } from './doctor-command.js';

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

/** Commands that send one consumer an event, which a running worker acts on. */
const SENDS: ReadonlyArray<[name: string, description: string, event: CommandEvent]> = [
  ['check', 'ask the backend about one consumer now (e.g. cache/photos)', { type: 'CHECK_NOW' }],
  ['reapply', 'apply one consumer again now', { type: 'REAPPLY' }],
  ['suspend', 'leave one consumer as it is: not checked, not applied, until resumed', { type: 'SUSPEND' }],
  ['resume', 'end a suspension: the consumer is asked now, and applied again if need be', { type: 'RESUME' }],
];
for (const [name, description, event] of SENDS) {
  command(`${name} <consumer>`, `${description}; a running worker acts on it`).action(async (consumer: string, options: { config?: string }) => {
    await sendCommand(consumer, event, options);
  });
}

command('status', "every consumer's state; exits 1 when any consumer is not held")
  .option('--json', 'machine-readable output')
  .action(async (options: { config?: string; json?: boolean }) => {
    process.exitCode = await statusCommand(options);
  });

command('confirm-removals <provider>', 'apply the change the mass-removal guard holds back for a provider, exactly as held back')
  .action(async (provider: string, options: { config?: string }) => {
    await confirmRemovalsCommand(provider, options);
  });

command('doctor', 'as this process: can every admin and grant secret be read and used, and does every server answer? one line per problem; exits 1 on any')
  .action(async (options: { config?: string }) => {
    process.exitCode = await doctorCommand(options);
  });

program.parseAsync().catch((error: unknown) => {
  const message = isHoldfastError(error) ? `${error.message} [${error.code}]` : processScrubber.describe(error);
  process.stderr.write(`holdfast: ${processScrubber.scrub(message)}\n`);
  process.exitCode = 2;
});
