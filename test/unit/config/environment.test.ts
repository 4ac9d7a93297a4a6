import { describe, expect, it } from 'vitest';
import { readEnvironment } from '../../../src/config/environment.js';

describe('readEnvironment', () => {
  it('reads the HOLDFAST_ variables and whether stdout is a terminal', () => {
    const env = { HOLDFAST_CONFIG: '/etc/holdfast.yaml', HOLDFAST_LOG_LEVEL: 'debug', HOLDFAST_LOG_FORMAT: 'pretty' };
    expect(readEnvironment(env, { isTTY: true })).toEqual({
      configPath: '/etc/holdfast.yaml',
      logLevel: 'debug',
      logFormat: 'pretty',
      stdoutIsTTY: true,
    });
  });

  it('treats empty variables as unset and a pipe as no terminal', () => {
    expect(readEnvironment({ HOLDFAST_CONFIG: '', OTHER: 'x' }, {})).toEqual({
      configPath: undefined,
      logLevel: undefined,
      logFormat: undefined,
      stdoutIsTTY: false,
    });
  });
});
