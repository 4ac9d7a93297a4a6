/**
 * The quiet heals' notes (`workers/heal-noted.ts`), sent per turn of the event loop: the heals a
 * round confirms together go to the queue's Redis as one script call per provider
 * (`contest-script.ts`: their timeline events added and their findings counted), not one call
 * and a few commands each. Each heal gets its own finding's outcome, or the call's error.
 */
import { providerOf } from '../../store/consumer-key.js';
import { CONTEST_CAP, CONTESTED_AFTER, mayBeLossWave, type Finding, type FindingOutcome } from '../contest.js';
import type { TimelineEvent } from '../timeline-event.js';
import { healOutcomes, type HealNoteArgs } from './contest-script.js';
import type { ScriptRunner } from './scripts.js';
import { TurnBatch } from './turn-batch.js';

/** One heal's note: its events (of its consumer) and its finding, if any. */
interface HealNote {
  events: readonly TimelineEvent[];
  finding: Finding | undefined;
}

/** One provider's heals in a turn, and which note each came from (-1: events of another provider's note). */
interface ProviderHeals {
  heals: HealNoteArgs[];
  from: number[];
}

/** A finding as the script takes it. */
function findingArgs(f: Finding): NonNullable<HealNoteArgs['finding']> {
  const { key, at, windowMs, words, waveMs } = f;
  return {
    key,
    now: at,
    windowMs,
    needed: CONTESTED_AFTER,
    lossWave: mayBeLossWave(f.reason),
    words,
    waveMs,
    cap: CONTEST_CAP,
  };
}

/** The notes of a turn by provider: a note's events of another provider than its own go with that provider's. */
function byProvider(notes: readonly HealNote[]): Map<string, ProviderHeals> {
  const groups = new Map<string, ProviderHeals>();
  const add = (provider: string, heal: HealNoteArgs, from: number) => {
    let group = groups.get(provider);
    if (!group) groups.set(provider, (group = { heals: [], from: [] }));
    group.heals.push(heal);
    group.from.push(from);
  };
  notes.forEach(({ events, finding }, i) => {
    const provider = providerOf(finding?.key ?? events[0]!.key);
    const own = events.filter((e) => providerOf(e.key) === provider);
    add(
      provider,
      { events: own.map((e) => JSON.stringify(e)), ...(finding ? { finding: findingArgs(finding) } : {}) },
      i,
    );
    for (const e of events)
      if (providerOf(e.key) !== provider) add(providerOf(e.key), { events: [JSON.stringify(e)] }, -1);
  });
  return groups;
}

export class HealNotes {
  private readonly turn = new TurnBatch<HealNote, FindingOutcome | undefined>((notes) => this.send(notes));

  constructor(
    private readonly scripts: Pick<ScriptRunner, 'run'>,
    /** A provider's timeline keeps about this many events. */
    private readonly timelineCap: number,
  ) {}

  /** Adds a heal's `events` to their providers' timelines and counts its `finding`, with the turn's other heals. */
  note(events: readonly TimelineEvent[], finding?: Finding): Promise<FindingOutcome | undefined> {
    if (events.length === 0 && !finding) return Promise.resolve(undefined);
    return this.turn.call({ events, finding });
  }

  private async send(notes: readonly HealNote[]): Promise<Array<FindingOutcome | undefined>> {
    const out = new Array<FindingOutcome | undefined>(notes.length).fill(undefined);
    await Promise.all(
      [...byProvider(notes)].map(async ([provider, { heals, from }]) => {
        const flat = await this.scripts.run('noteHeals', { provider, timelineCap: this.timelineCap, heals });
        healOutcomes(flat, heals).forEach((outcome, j) => {
          if (from[j]! >= 0) out[from[j]!] = outcome;
        });
      }),
    );
    return out;
  }
}
