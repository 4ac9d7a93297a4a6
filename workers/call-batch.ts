/**
 * The effects' calls on one provider's adapter, batched: the applies (`create`) and the deep
 * checks (`holds`) its consumers ask for within {@link BATCH_WINDOW_MS} of each other (a round's
 * checks, and the heals of what they found not held) are sent together as one batch,
 * in the form the adapter declares (`Adapter.batch`: Redis pipelines per node, PostgreSQL one
 * transaction; an adapter without `createMany`/`holdsMany` is called once per grant, as before).
 *
 * Each call keeps its own outcome and its own deadline: one grant refused or failing fails that
 * call alone, a call whose deadline passes rejects with `DEADLINE_EXCEEDED` at once, and the
 * batch goes on while any of its calls still waits for it.
 */
import { setMaxListeners } from 'node:events';
import type { Adapter, CallOptions, Each, Grant, HoldsAnswer } from '../src/adapters/adapter.js';
import { onAbort } from '../src/adapters/abort-listeners.js';
import { batchFormOf, createEach, holdsEach } from '../src/adapters/batch-calls.js';
import { HoldfastError } from '../src/errors/holdfast-error.js';

/** A batch sent: which call, and how many grants it carried. */
export type BatchNote = (call: 'create' | 'holds', size: number) => void;

interface Pending<T> {
  grant: Grant;
  options: CallOptions;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

type Batching = Adapter & Required<Pick<Adapter, 'createMany' | 'holdsMany'>>;

/**
 * How long the first call of a batch waits for others (ms): the checks of a round, and the heals
 * of what they found, fall due over the interval, not all in one turn of the event loop. Short
 * beside any deadline or interval; a batch that reaches its adapter's limit goes at once.
 */
export const BATCH_WINDOW_MS = 25;

/** The calls of one kind waiting for the turn to end. */
class Queue<T> {
  private pending: Array<Pending<T>> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limit: number,
    private readonly send: (grants: Grant[], options: CallOptions) => Promise<Array<Each<T>>>,
    private readonly noted: (size: number) => void,
  ) {}

  add(grant: Grant, options: CallOptions): Promise<T> {
    if (options.signal.aborted) return Promise.reject(deadline());
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ grant, options, resolve, reject });
      if (this.pending.length === 1) this.timer = setTimeout(() => this.flush(), BATCH_WINDOW_MS);
      else if (this.pending.length >= this.limit) this.flush();
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    const taken = this.pending;
    this.pending = [];
    // one call per login in a batch (one actor per consumer makes two unlikely): a repeat goes in the next batch
    const seen = new Set<string>();
    const batch: Array<Pending<T>> = [];
    for (const call of taken) {
      if (seen.has(call.grant.login)) this.again(call);
      else {
        seen.add(call.grant.login);
        batch.push(call);
      }
    }
    void this.sendBatch(batch);
  }

  private again(call: Pending<T>): void {
    this.add(call.grant, call.options).then(call.resolve, call.reject);
  }

  private async sendBatch(batch: Array<Pending<T>>): Promise<void> {
    const live = batch.filter((call) => {
      if (!call.options.signal.aborted) return true;
      call.reject(deadline());
      return false;
    });
    if (live.length === 0) return;
    this.noted(live.length);
    const { options, done } = batchOptions(live);
    try {
      const answers = await this.send(
        live.map((c) => c.grant),
        options,
      );
      live.forEach((call, i) => {
        const answer = answers[i];
        if (answer === undefined)
          call.reject(new HoldfastError('BACKEND_ERROR', 'the batch gave no answer for this login'));
        else if (answer.ok) call.resolve(answer.value);
        else call.reject(answer.error);
      });
    } catch (error) {
      for (const call of live) call.reject(error);
    } finally {
      done();
    }
  }
}

function deadline(): HoldfastError {
  return new HoldfastError('DEADLINE_EXCEEDED', 'the call did not finish before its deadline');
}

/**
 * The batch's own options: it aborts once every one of its calls' signals aborted (each call
 * rejects at its own deadline, see {@link raced}), and its deadline is the latest of theirs. Calls
 * begun in one turn share a signal (`turn-deadline.ts`): a batch of them all is given it as it is.
 */
function batchOptions<T>(calls: ReadonlyArray<Pending<T>>): { options: CallOptions; done: () => void } {
  const signals = new Set(calls.map((call) => call.options.signal));
  const deadlines = calls.map((c) => c.options.deadline).filter((d): d is number => d !== undefined);
  const deadline = deadlines.length === calls.length ? { deadline: Math.max(...deadlines) } : {};
  if (signals.size === 1) return { options: { signal: calls[0]!.options.signal, ...deadline }, done: () => undefined };
  const controller = new AbortController();
  // each of the batch's grants may listen to it (a call slot waited for, a node's call): as many as the batch holds
  setMaxListeners(0, controller.signal);
  // one listener per distinct signal: a listener added twice to one signal is called once
  let left = signals.size;
  const aborted = () => {
    left -= 1;
    if (left === 0) controller.abort();
  };
  const stops = [...signals].map((signal) => onAbort(signal, aborted));
  const options: CallOptions = { signal: controller.signal, ...deadline };
  return { options, done: () => stops.forEach((stop) => stop()) };
}

/** Settles with `work`, or rejects with `DEADLINE_EXCEEDED` as soon as `signal` aborts. */
function raced<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // the calls of a turn share their signal: one listener on it for them all (`abort-listeners.ts`)
    const stop = onAbort(signal, () => reject(deadline()));
    void work.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error: unknown) => {
        stop();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * One provider adapter's batched calls (see the file's comment). An adapter with no `createMany`
 * (`holdsMany`) is called once per grant, with the caller's own options: a batch's shared signal
 * would keep a call that passed its deadline running on the backend while its retry starts (two
 * applies of one login at once, found on SeaweedFS under load), and gains nothing there.
 */
export class CallBatch {
  private readonly creates: Queue<void> | undefined;
  private readonly checks: Queue<HoldsAnswer> | undefined;

  constructor(
    private readonly adapter: Adapter,
    noted: BatchNote = () => undefined,
  ) {
    const { limit } = batchFormOf(adapter);
    if (adapter.createMany)
      this.creates = new Queue(
        limit,
        (grants, options) => createEach(adapter as Batching, grants, options),
        (n) => noted('create', n),
      );
    if (adapter.holds && adapter.holdsMany)
      this.checks = new Queue(
        limit,
        (grants, options) => holdsEach(adapter as Batching, grants, options),
        (n) => noted('holds', n),
      );
  }

  /** `create`, sent with the others of this turn where the adapter batches. */
  create(grant: Grant, options: CallOptions): Promise<void> {
    return this.creates ? raced(this.creates.add(grant, options), options.signal) : this.adapter.create(grant, options);
  }

  /** `holds`, sent with the others of this turn where the adapter batches; the adapter must be able to be asked. */
  holds(grant: Grant, options: CallOptions): Promise<HoldsAnswer> {
    if (!this.adapter.holds)
      return Promise.reject(
        new HoldfastError('BACKEND_ERROR', 'this adapter cannot be asked whether it holds a login'),
      );
    return this.checks ? raced(this.checks.add(grant, options), options.signal) : this.adapter.holds(grant, options);
  }
}
