/** `holdfast run` (desired-state sync and a worker) and `holdfast worker`, until SIGINT or SIGTERM. */
import { startEngine, type EngineOptions } from '../engine/engine.js';
import { load } from './load.js';

export async function runCommand(
  options: { config?: string },
  roles: EngineOptions['roles'] = { sync: true, worker: true },
): Promise<void> {
  const { config, scrubber, logger } = await load(options.config);
  const engine = await startEngine({ config, logger, scrubber, roles });
  logger.info(
    { providers: config.providers.map((p) => p.name), concurrency: config.worker.concurrency, roles },
    `holdfast ${roles.sync ? 'running' : 'worker running'}: ${config.providers.length} provider${config.providers.length === 1 ? '' : 's'}, config ${config.source}`,
  );
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn(`${signal} again: exiting without waiting`);
        process.exit(1);
      }
      stopping = true;
      logger.info(`${signal}: stopping; finishing in-flight jobs`);
      engine.stop().then(
        () => {
          logger.info('stopped');
          resolve();
        },
        (error: unknown) => {
          logger.error({ err: scrubber.describe(error) }, 'stopped with an error');
          resolve();
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
