/** A bounded set, least recently used out first: what an adapter remembers without growing with the number of consumers. */
export class Remembered {
  private readonly keys = new Set<string>();

  constructor(private readonly max: number) {}

  has(key: string): boolean {
    if (!this.keys.delete(key)) return false;
    this.keys.add(key);
    return true;
  }

  add(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value as string);
  }
}
