/**
 * The one module that reads `process.env`. Everything else receives an {@link Environment}.
 */

/** What holdfast takes from its environment. Empty variables count as unset. */
export interface Environment {
  /** `HOLDFAST_CONFIG`: the configuration file. */
  configPath?: string;
  /** `HOLDFAST_LOG_LEVEL`: overrides `log.level`. */
  logLevel?: string;
  /** `HOLDFAST_LOG_FORMAT`: overrides `log.format`. */
  logFormat?: string;
  /** Decides the default log format: pretty on a terminal, json otherwise. */
  stdoutIsTTY: boolean;
}

export function readEnvironment(
  env: NodeJS.ProcessEnv = process.env,
  stdout: { isTTY?: boolean } = process.stdout,
): Environment {
  const read = (name: string) => (env[name] === '' ? undefined : env[name]);
  return {
    configPath: read('HOLDFAST_CONFIG'),
    logLevel: read('HOLDFAST_LOG_LEVEL'),
    logFormat: read('HOLDFAST_LOG_FORMAT'),
    stdoutIsTTY: stdout.isTTY === true,
  };
}

/**
 * `NODE_OPTIONS`: the Node and V8 flags the process was started with besides its command line's
 * (`engine/heap-growth.ts` keeps them).
 */
export function nodeOptions(env: NodeJS.ProcessEnv = process.env): string {
  return env.NODE_OPTIONS ?? '';
}
