/**
 * At most `max` requests a server has not answered yet. A request keeps its slot until the server answers it, not
 * until its caller gives up: SeaweedFS finishes an IAM request whose client went away (a write rewrites every identity
 * all the same), so a slot freed at the caller's deadline would let a new request queue behind the old one at the
 * server, and a heal that misses its deadlines would pile up work there. A caller whose signal aborts while it waits
 * leaves the line, nothing sent.
 */
export class AnswerSlots {
  private unanswered = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /** Sends once fewer than `max` requests are unanswered; rejects, nothing sent, when `signal` aborts first. */
  async send<T>(signal: AbortSignal, request: () => Promise<T>): Promise<T> {
    while (this.unanswered >= this.max) await this.turn(signal);
    if (signal.aborted) throw new Error('aborted while waiting for an answer slot');
    this.unanswered++;
    const answered = () => {
      this.unanswered--;
      this.waiting.shift()?.();
    };
    const sent = Promise.resolve().then(request);
    sent.then(answered, answered);
    return sent;
  }

  private turn(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(wake);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new Error('aborted while waiting for an answer slot'));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(wake);
    });
  }
}
