/**
 * One provider's failed logins within a window, as read from its backend's log: attributed to
 * its consumers by login (the logins its consumers claim), the rest counted to the provider only,
 * never attributed. Bounded: {@link FAILED_LOGIN_EVENTS} events per consumer, {@link TRACKED}
 * consumers, one unattributed count per read.
 */
import type { FailedLoginsRead } from '../adapters/login-failures.js';
import {
  FAILED_LOGIN_EVENTS,
  FAILED_LOGINS_LISTED,
  type FailedLoginEvent,
  type FailedLoginsNote,
} from '../queue/coordination.js';

/** The window the status and the metrics' alert speak of ("in the last 5 min"). */
export const FAILED_LOGIN_WINDOW_MS = 5 * 60_000;
/** Consumers tracked per provider at most; beyond, the oldest is forgotten. */
const TRACKED = 10_000;

/** `10.0.0.7` of `10.0.0.7:51234` (a client's port changes with each connection; `[::1]` stays bracketed). */
export function hostOf(address: string): string {
  return address.replace(/:\d+$/, '');
}

/** What one read added: per consumer key its new events, and the failures no consumer claims. */
export interface TallyStep {
  byConsumer: Map<string, FailedLoginEvent[]>;
  attributed: number;
  unattributed: number;
}

export class FailedLoginTally {
  private readonly consumers = new Map<string, FailedLoginEvent[]>();
  private readonly unattributed: Array<{ at: number; count: number }> = [];
  private readonly lost = new Map<string, number>();
  private nodes = 0;

  constructor(private readonly windowMs = FAILED_LOGIN_WINDOW_MS) {}

  /** Adds one read at `now` (ms); `owners`: login → the consumer key that claims it. */
  add(read: FailedLoginsRead, owners: ReadonlyMap<string, string>, now: number): TallyStep {
    this.nodes = read.nodes.length;
    for (const node of read.lost) this.lost.set(node, now);
    const step: TallyStep = { byConsumer: new Map(), attributed: 0, unattributed: 0 };
    for (const failure of read.failures) {
      const key = owners.get(failure.login);
      if (key === undefined) {
        step.unattributed += failure.count;
        continue;
      }
      step.attributed += failure.count;
      const events = step.byConsumer.get(key) ?? [];
      const address = hostOf(failure.address);
      const same = events.find((e) => e.address === address);
      if (same) {
        same.count += failure.count;
        same.at = Math.max(same.at, failure.at);
      } else events.push({ at: failure.at, address, count: failure.count });
      step.byConsumer.set(key, events);
    }
    if (step.unattributed > 0) this.unattributed.push({ at: now, count: step.unattributed });
    for (const [key, events] of step.byConsumer) this.keep(key, events);
    this.forget(now);
    return step;
  }

  /** The consumers turned away now (within the window). */
  turnedAway(): ReadonlySet<string> {
    return new Set(this.consumers.keys());
  }

  /** The note the status and the rotations read, at `now`. */
  note(now: number): FailedLoginsNote {
    this.forget(now);
    const listed = [...this.consumers]
      .map(([key, events]) => ({ key, count: events.reduce((n, e) => n + e.count, 0), events: [...events] }))
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
    return {
      at: new Date(now).toISOString(),
      windowMs: this.windowMs,
      nodes: this.nodes,
      lost: [...this.lost.keys()].sort(),
      unattributed: this.unattributed.reduce((n, u) => n + u.count, 0),
      consumers: listed.slice(0, FAILED_LOGINS_LISTED),
      more: Math.max(0, listed.length - FAILED_LOGINS_LISTED),
    };
  }

  private keep(key: string, added: readonly FailedLoginEvent[]): void {
    const events = [...added, ...(this.consumers.get(key) ?? [])].sort((a, b) => b.at - a.at);
    this.consumers.delete(key); // re-inserted: the map's order is the oldest-updated first
    this.consumers.set(key, events.slice(0, FAILED_LOGIN_EVENTS));
    for (const oldest of this.consumers.keys()) {
      if (this.consumers.size <= TRACKED) break;
      this.consumers.delete(oldest);
    }
  }

  /** Drops what is older than the window. */
  private forget(now: number): void {
    const since = now - this.windowMs;
    for (const [key, events] of this.consumers) {
      const kept = events.filter((e) => e.at >= since);
      if (kept.length === 0) this.consumers.delete(key);
      else this.consumers.set(key, kept);
    }
    while (this.unattributed.length > 0 && this.unattributed[0]!.at < since) this.unattributed.shift();
    for (const [node, at] of this.lost) if (at < since) this.lost.delete(node);
  }
}
