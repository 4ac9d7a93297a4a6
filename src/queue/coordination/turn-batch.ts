/**
 * Calls made in one turn of the event loop, sent as one: a round starts its runs at once, so
 * their lock claims (and, as their `AUTH` replies arrive together, their releases) go to the
 * queue's Redis as one script call instead of one each. Each caller gets its own reply, or the
 * call's error.
 */

/** The most calls sent as one (a script's KEYS and ARGV grow with it). */
const MAX_BATCH = 256;

interface Pending<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

export class TurnBatch<I, O> {
  private pending: Array<Pending<I, O>> = [];

  /** `send` gets the inputs of one turn and replies each one's output, in their order. */
  constructor(private readonly send: (inputs: I[]) => Promise<O[]>) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
      else if (this.pending.length >= MAX_BATCH) this.flush();
    });
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.send(batch.map((p) => p.input)).then(
      (outputs) =>
        batch.forEach((p, i) =>
          i < outputs.length ? p.resolve(outputs[i]!) : p.reject(new Error('a batched call returned nothing')),
        ),
      (error: unknown) => batch.forEach((p) => p.reject(error)),
    );
  }
}
