/**
 * Status notes, what the status reads instead of the records: each consumer's record **in
 * brief** (a {@link ConsumerBrief}) and state, each provider's consumers by when they were
 * last **asked**, each provider's **orphans** (logins under its prefix that no consumer claims,
 * as last listed) and its **confirmed removals** (the held-back change a person confirmed with
 * `holdfast confirm-removals`, for the running desired-state sync to apply), and each provider's
 * **timeline** (a capped stream of its consumers' losses, heals and brakes, written with the
 * briefs of the transitions they come from).
 *
 * What the status, the metrics and the sync conclude from (each state, brief and confirmation) is sealed
 * (`../note-seal.ts`): a value holdfast did not write reads as absent (a state: unknown, and said), never as held.
 */
import { providerOf } from '../../store/consumer-key.js';
import { decodeBrief, encodeBrief, stateToken, type ConsumerBrief } from '../consumer-brief.js';
import type { NoteSeal } from '../note-seal.js';
import { CoordinationPart, type CoordinationContext } from './context.js';
import { hashFields, perProvider } from './reads.js';
import type { NotedBrief } from './scripts.js';
import type { TimelineEvent } from '../timeline-event.js';
import { boundedNote, mergeMissing } from './nodes-note-merge.js';
import type { Finding, FindingOutcome } from '../contest.js';
import { HealNotes } from './heal-notes.js';
import {
  decodeJson,
  failedLoginsNoteCodec,
  nodesNoteCodec,
  orphanReportCodec,
  timelineEventCodec,
  type FailedLoginsNote,
  type NodesNote,
  type OrphanReport,
} from './values.js';

/** A record's brief as noted, and the timeline events of the transition that wrote it (if any). */
export type NotedEntry = readonly [key: string, brief: ConsumerBrief, events?: readonly TimelineEvent[]];

/** Records in brief, as their writers note them. */
export interface BriefNotes {
  /**
   * After a record is written (or read by a sweep): its state and brief, for the status; one of
   * an older revision is ignored. A consumer becoming held counts as asked (in the provider's
   * sorted set) until its first routine check says when it was. One script per provider; the
   * events are added to the provider's timeline in the same round trip (sent before any reply).
   */
  noteBriefs(entries: ReadonlyArray<NotedEntry>): Promise<void>;
}

/**
 * Timeline events that come from no record write: a heal of what the record says was applied (`workers/heal-noted.ts`).
 */
export interface TimelineNotes {
  /**
   * Adds `events` to their providers' timelines (no brief: the record did not change), and counts
   * the heal's `finding` toward its consumer being contested (`../contest.ts`), in one script call
   * with them and with the other heals of the turn (`heal-notes.ts`). `finding`'s consumer is the
   * events' (one shard).
   */
  noteTimeline(events: readonly TimelineEvent[], finding?: Finding): Promise<FindingOutcome | undefined>;
}

/** A provider's orphans, as its listing notes them. */
export interface OrphanNotes {
  /** What the last listing of `provider`'s logins found unclaimed (an empty list clears it). */
  setOrphans(provider: string, report: OrphanReport): Promise<void>;
}

/** A provider's backend nodes, as a worker notes them for the status (which runs in another process). */
export interface NodeNotes {
  /** The nodes of `provider`'s backend as this worker sees them now, kept `ttlMs` unless noted again. */
  setNodes(provider: string, note: NodesNote, ttlMs: number): Promise<void>;
}

/** A provider's failed logins, as the reader of its backend's log notes them for the status and the rotations. */
export interface FailedLoginNotes {
  /** The failed logins of `provider` within the note's window, kept `ttlMs` unless noted again. */
  setFailedLogins(provider: string, note: FailedLoginsNote, ttlMs: number): Promise<void>;
}

/** A person's confirmation: exactly the change held back, as held back since `since` (ms; the provider's status's). */
export interface RemovalConfirmation {
  change: string;
  since: number;
}

/** A held-back removal a person confirmed, as the CLI notes it and the desired-state sync uses it up. */
export interface RemovalConfirmations {
  /** A person confirms the held-back change of `provider` (kept a day at most). */
  confirmRemovals(provider: string, confirmation: RemovalConfirmation): Promise<void>;
  /**
   * The change of `provider` a person confirmed, or null; `unsealed`: a confirmation holdfast did not write (a plain
   * `SET` into the queue's Redis) is there, and confirms nothing.
   */
  confirmedRemovals(provider: string): Promise<RemovalConfirmation | 'unsealed' | null>;
  /** The confirmation of `change` is used up (a newer confirmation is left alone). */
  clearConfirmedRemovals(provider: string, change: string): Promise<void>;
}

/** Every consumer's noted state, and the consumers whose noted state holdfast did not write. */
export interface NotedStates {
  /** `<state token> <revision>` by consumer key (read the state with `briefState`), as holdfast sealed it. */
  states: Record<string, string>;
  /**
   * Consumers whose state in the queue's Redis fails its seal (written there by another, or by a release before seals,
   * until a sweep notes it again): their state is unknown.
   */
  unsealed: string[];
}

/** The notes, as the status reads them. */
export interface NoteReads {
  /** Every consumer's noted state, by key; those holdfast did not write apart. */
  allStates(): Promise<NotedStates>;
  /** The records in brief of `keys`; absent when unknown, unreadable or not holdfast's (unsealed). */
  briefsOf(keys: readonly string[]): Promise<Map<string, ConsumerBrief>>;
  /** When any consumer of each provider was last checked (ms since the epoch), by provider. */
  lastCheckedAt(providers: readonly string[]): Promise<Map<string, number>>;
  /**
   * How many consumers of each provider were held or asked at least once (the size of its asked-at set), by provider:
   * what a first apply's progress counts.
   */
  askedCounts(providers: readonly string[]): Promise<Map<string, number>>;
  /** Up to `limit` consumers of `provider` whose checks last ended before `beforeMs`, oldest first, with when. */
  checkedBefore(provider: string, beforeMs: number, limit: number): Promise<Array<[key: string, at: number]>>;
  /** The orphans last found among `providers`. */
  orphans(providers: readonly string[]): Promise<Map<string, OrphanReport>>;
  /** The backend nodes last noted among `providers` (a provider of one node, or none noted lately, is absent). */
  nodes(providers: readonly string[]): Promise<Map<string, NodesNote>>;
  /** The failed logins last noted among `providers` (none read lately: absent). */
  failedLogins(providers: readonly string[]): Promise<Map<string, FailedLoginsNote>>;
  /** `provider`'s timeline events at or after `sinceMs`, oldest first (the newest {@link TIMELINE_READ} at most). */
  timeline(provider: string, sinceMs: number): Promise<TimelineEvent[]>;
}

/**
 * The notes part of coordination (`coordination.notes`): every slice above, as one shard or a sharded queue serves it.
 */
export interface NotesPart
  extends BriefNotes, TimelineNotes, OrphanNotes, NodeNotes, FailedLoginNotes, RemovalConfirmations, NoteReads {}

/** Consumers noted per script call: a sweep of 100k consumers never sends one call of them all. */
const NOTED_PER_CALL = 1000;
/** A provider's timeline keeps about this many events (`XADD … MAXLEN ~`): a day of a fleet's worth of losses. */
export const TIMELINE_CAP = 10_000;
/** At most this many events are read for a picture. */
export const TIMELINE_READ = TIMELINE_CAP;
/** How long a confirmation is kept (s). */
const CONFIRMATION_TTL_S = 86_400;

function noted(seal: NoteSeal, key: string, brief: ConsumerBrief): NotedBrief {
  return {
    key,
    rev: brief.rev,
    state: seal.seal('state', key, `${stateToken(brief)} ${brief.rev}`),
    brief: seal.seal('brief', key, encodeBrief(brief)),
    heldSince: brief.state === 'held' ? brief.since : null,
  };
}

/** The entries as the script notes them, sealed, by provider (one call per provider). */
function byProvider(
  seal: NoteSeal,
  entries: ReadonlyArray<NotedEntry>,
): Map<string, { notes: NotedBrief[]; events: TimelineEvent[] }> {
  const out = new Map<string, { notes: NotedBrief[]; events: TimelineEvent[] }>();
  for (const [key, brief, events] of entries) {
    const provider = providerOf(key);
    const list = out.get(provider) ?? { notes: [], events: [] };
    list.notes.push(noted(seal, key, brief));
    if (events) list.events.push(...events);
    out.set(provider, list);
  }
  return out;
}

/** An event read from a stream entry (`[id, [field, value…]]`); null when it is not one holdfast wrote. */
function eventOf(entry: [id: string, fields: string[]]): TimelineEvent | null {
  const fields = entry[1];
  const at = fields.indexOf('e');
  return at >= 0 && at % 2 === 0 ? decodeJson(timelineEventCodec, fields[at + 1]) : null;
}

/** `[member, score, member, score…]` as pairs. */
function scored(flat: readonly string[]): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
  return out;
}

/** Status notes on one connection, under one key table. */
export class Notes extends CoordinationPart implements NotesPart {
  /** The quiet heals' notes of a turn, one script call per provider (`heal-notes.ts`). */
  private readonly heals: HealNotes;

  constructor(
    context: CoordinationContext,
    private readonly seal: NoteSeal,
  ) {
    super(context);
    this.heals = new HealNotes(this.scripts, TIMELINE_CAP);
  }

  async noteBriefs(entries: ReadonlyArray<NotedEntry>): Promise<void> {
    for (const [provider, { notes, events }] of byProvider(this.seal, entries)) {
      const noting = this.writeBriefs(provider, notes);
      // sent right behind the briefs, before any reply: no round trip of their own
      const added = events.map((e) =>
        this.redis.xadd(this.keys.events(provider), 'MAXLEN', '~', TIMELINE_CAP, '*', 'e', JSON.stringify(e)),
      );
      await Promise.all([noting, ...added]);
    }
  }

  noteTimeline(events: readonly TimelineEvent[], finding?: Finding): Promise<FindingOutcome | undefined> {
    return this.heals.note(events, finding);
  }

  private async writeBriefs(provider: string, notes: readonly NotedBrief[]): Promise<void> {
    for (let i = 0; i < notes.length; i += NOTED_PER_CALL)
      await this.scripts.run('noteBriefs', { provider, entries: notes.slice(i, i + NOTED_PER_CALL) });
  }

  async timeline(provider: string, sinceMs: number): Promise<TimelineEvent[]> {
    const entries = await this.redis.xrevrange(
      this.keys.events(provider),
      '+',
      String(Math.max(0, Math.floor(sinceMs))),
      'COUNT',
      TIMELINE_READ,
    );
    return entries
      .flatMap((entry) => eventOf(entry) ?? [])
      .filter((e) => e.at >= sinceMs)
      .reverse();
  }

  async allStates(): Promise<NotedStates> {
    const states: Record<string, string> = {};
    const unsealed: string[] = [];
    for (const [key, raw] of Object.entries(await this.redis.hgetall(this.keys.states))) {
      const state = this.seal.open('state', key, raw);
      if (state === null) unsealed.push(key);
      else states[key] = state;
    }
    return { states, unsealed };
  }

  briefsOf(keys: readonly string[]): Promise<Map<string, ConsumerBrief>> {
    return hashFields(this.redis, this.keys.briefs, keys, (raw, key) => {
      const brief = this.seal.open('brief', key, raw);
      return brief === null ? null : decodeBrief(brief);
    });
  }

  async lastCheckedAt(providers: readonly string[]): Promise<Map<string, number>> {
    const latest = await Promise.all(
      providers.map((p) => this.redis.zrevrange(this.keys.checked(p), 0, 0, 'WITHSCORES')),
    );
    return new Map(
      providers.flatMap((p, i) => (latest[i]?.[1] === undefined ? [] : [[p, Number(latest[i][1])] as const])),
    );
  }

  async askedCounts(providers: readonly string[]): Promise<Map<string, number>> {
    const counts = await Promise.all(providers.map((p) => this.redis.zcard(this.keys.checked(p))));
    return new Map(providers.map((p, i) => [p, counts[i] ?? 0]));
  }

  async checkedBefore(provider: string, beforeMs: number, limit: number): Promise<Array<[key: string, at: number]>> {
    return scored(
      await this.redis.zrangebyscore(
        this.keys.checked(provider),
        '-inf',
        `(${beforeMs}`,
        'WITHSCORES',
        'LIMIT',
        0,
        limit,
      ),
    );
  }

  async setOrphans(provider: string, report: OrphanReport): Promise<void> {
    if (report.logins.length === 0) await this.redis.del(this.keys.orphans(provider));
    else await this.redis.set(this.keys.orphans(provider), JSON.stringify(report));
  }

  orphans(providers: readonly string[]): Promise<Map<string, OrphanReport>> {
    return perProvider(this.redis, providers, this.keys.orphans, (raw) => decodeJson(orphanReportCodec, raw));
  }

  async setNodes(provider: string, note: NodesNote, ttlMs: number): Promise<void> {
    const key = this.keys.nodes(provider);
    // another worker's fresh count of the consumers a node lacks is kept when larger (nodes-note-merge.ts)
    const previous = note.by !== undefined ? decodeJson(nodesNoteCodec, await this.redis.get(key)) : null;
    const bounded = boundedNote(mergeMissing(previous, note, ttlMs));
    await this.redis.set(key, JSON.stringify(bounded), 'PX', Math.max(1, Math.round(ttlMs)));
  }

  nodes(providers: readonly string[]): Promise<Map<string, NodesNote>> {
    return perProvider(this.redis, providers, this.keys.nodes, (raw) => decodeJson(nodesNoteCodec, raw));
  }

  async setFailedLogins(provider: string, note: FailedLoginsNote, ttlMs: number): Promise<void> {
    const key = this.keys.failedLogins(provider);
    await this.redis.set(key, JSON.stringify(note), 'PX', Math.max(1, Math.round(ttlMs)));
  }

  failedLogins(providers: readonly string[]): Promise<Map<string, FailedLoginsNote>> {
    return perProvider(this.redis, providers, this.keys.failedLogins, (raw) => decodeJson(failedLoginsNoteCodec, raw));
  }

  async confirmRemovals(provider: string, { change, since }: RemovalConfirmation): Promise<void> {
    const sealed = this.seal.seal('removals', provider, `${change} ${since}`);
    await this.redis.set(this.keys.confirmRemovals(provider), sealed, 'EX', CONFIRMATION_TTL_S);
  }

  async confirmedRemovals(provider: string): Promise<RemovalConfirmation | 'unsealed' | null> {
    const raw = await this.redis.get(this.keys.confirmRemovals(provider));
    if (raw === null) return null;
    const match = /^(\S+) (\d+)$/.exec(this.seal.open('removals', provider, raw) ?? '');
    return match ? { change: match[1]!, since: Number(match[2]) } : 'unsealed';
  }

  async clearConfirmedRemovals(provider: string, change: string): Promise<void> {
    const confirmed = await this.confirmedRemovals(provider);
    if (confirmed !== null && confirmed !== 'unsealed' && confirmed.change === change)
      await this.redis.del(this.keys.confirmRemovals(provider));
  }
}
