/** The deadline of one `mongodb-users` call, as each of its admin commands carries it. */
import type { Document } from 'mongodb';
import type { CallOptions } from '../adapter.js';

/**
 * What each admin command of a call carries: its signal (a command aborted in flight has its
 * connection closed by the driver, never reused) and, where the caller said its deadline,
 * `maxTimeMS` set to what is left of it, so that the server stops the command then too.
 * FerretDB v1.24 accepts `maxTimeMS` on the commands used here.
 */
export class Bound {
  constructor(private readonly options: CallOptions) {}

  get signal(): AbortSignal {
    return this.options.signal;
  }

  /** `command` with maxTimeMS, what is left of the deadline (at least 1 ms), when there is one. */
  command(command: Document): Document {
    const { deadline } = this.options;
    return deadline === undefined ? command : { ...command, maxTimeMS: Math.max(1, Math.ceil(deadline - Date.now())) };
  }

  /** Options for a find: maxTimeMS and the signal. */
  find(): { signal: AbortSignal; maxTimeMS?: number } {
    const { deadline, signal } = this.options;
    return deadline === undefined ? { signal } : { signal, maxTimeMS: Math.max(1, Math.ceil(deadline - Date.now())) };
  }
}
