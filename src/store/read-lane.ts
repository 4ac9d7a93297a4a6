/**
 * At most a few record reads in flight at once, where the store serialises every command
 * (FerretDB's SQLite handler): more reads at once are no faster there, and each slows the bulk
 * writes beside it (measured by `test/bench/store-batch-cost.ts`: a bulk of 32 updates costs
 * 1.5 ms a record alone, 3.4 with one read beside it, 15 with 32).
 */
export class ReadLane {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // the slot passes to the next reader
      else this.running--;
    }
  }
}
