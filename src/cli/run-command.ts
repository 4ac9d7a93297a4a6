/**
 * `holdfast run` (desired-state sync and a worker) and `holdfast worker`, until SIGINT or SIGTERM; with `--http`, the
 * dashboard too.
 */
import { queueWhere } from '../engine/connect.js';
import { startEngine, type EngineOptions } from '../engine/engine.js';
import { startHttpServer, type HttpServer } from '../http/http-server.js';
import { refuseExposedDashboard } from '../http/listen-guard.js';
import { Metrics } from '../metrics/metrics.js';
import { guardConnectionFaults } from './connection-fault-guard.js';
import { load } from './load.js';

export async function runCommand(
  options: { config?: string; http?: { host: string; port: number } },
  roles: EngineOptions['roles'] = { sync: true, worker: true },
): Promise<void> {
  const { config, scrubber, logger } = await load(options.config);
  const listen = options.http ?? config.http.listen;
  if (listen) refuseExposedDashboard(listen, config.http.auth);
  const metrics = listen ? new Metrics() : undefined;
  // the last resort: a backend connection lost where nothing listened is logged and counted, not fatal; anything else
  // still is
  const unguard = guardConnectionFaults({
    logger,
    scrubber,
    ...(metrics ? { count: (kind) => metrics.unexpectedError(kind) } : {}),
  });
  const engine = await startEngine({ config, logger, scrubber, roles, ...(metrics ? { metrics } : {}) });
  let http: HttpServer | undefined;
  if (listen) {
    try {
      http = await startHttpServer({
        listen,
        auth: config.http.auth,
        hosts: config.http.hosts,
        readOnly: config.http.readOnly,
        store: engine.store,
        coordination: engine.coordination,
        queue: engine.queue,
        queued: engine.queued,
        controls: engine.controls,
        oldConnections: engine.rotations,
        providers: config.providers,
        metrics,
        logger,
        where: { store: config.store.url, queue: queueWhere(config) },
      });
    } catch (error) {
      await engine.stop();
      throw error;
    }
  }
  logger.info(
    {
      providers: config.providers.map((p) => p.name),
      concurrency: config.worker.concurrency,
      roles,
      ...(http ? { dashboard: http.url } : {}),
    },
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
      Promise.resolve(http?.close())
        .then(() => engine.stop())
        .then(
          () => {
            logger.info('stopped');
            unguard();
            resolve();
          },
          (error: unknown) => {
            logger.error({ err: scrubber.describe(error) }, 'stopped with an error');
            unguard();
            resolve();
          },
        );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
