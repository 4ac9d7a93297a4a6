/**
 * The logins one provider's consumers claim on its backend (consumer key → login), and the two views read of them
 * while nothing changes: the set of logins (the orphan watch's) and login → consumer key (the failed-logins watch's,
 * read at every pass: every `verifyEvery`). Each view is made once and kept until a login changes, not made again at
 * every read: at 20,000 consumers and a 250 ms interval, making the owners' map again was a seventh of the engine's CPU
 * in the routine check's profile (`test/bench/check-rate.ts`). A view handed out is never changed afterwards: a change
 * makes a new one at the next read.
 */
export class ClaimedLogins {
  private readonly byKey = new Map<string, string>();
  private ownersView: ReadonlyMap<string, string> | undefined;
  private loginsView: ReadonlySet<string> | undefined;

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  set(key: string, login: string): void {
    if (this.byKey.get(key) === login) return;
    this.byKey.set(key, login);
    this.changed();
  }

  delete(key: string): void {
    if (this.byKey.delete(key)) this.changed();
  }

  /** Every login claimed. */
  logins(): ReadonlySet<string> {
    return (this.loginsView ??= new Set(this.byKey.values()));
  }

  /** Login → the consumer key that claims it. */
  owners(): ReadonlyMap<string, string> {
    if (this.ownersView === undefined) {
      const owners = new Map<string, string>();
      for (const [key, login] of this.byKey) owners.set(login, key);
      this.ownersView = owners;
    }
    return this.ownersView;
  }

  private changed(): void {
    this.ownersView = undefined;
    this.loginsView = undefined;
  }
}
