/**
 * A node event in a person's words, as the log and the status say it: `cache 127.0.0.1:6379 restarted (new run id)`,
 * or with its time, `restarted at 06:05:10 (new run id)`.
 */
import type { IncarnationKind } from './incarnation.js';

/**
 * What makes a node's consumers suspect: a new incarnation, or `loss-wave`, logins of the provider found missing one
 * after another (`src/queue/contest.ts`).
 */
export type NodeEventKind = IncarnationKind | 'loss-wave';

/** What happened to the node (`restarted`) and what showed it (`new run id`), for `why`. */
export function incarnationWords(why: NodeEventKind): { happened: string; shown: string } {
  switch (why) {
    case 'loss-wave':
      return { happened: 'lost logins', shown: 'a wave of logins found missing' };
    case 'new-system-id':
      return { happened: 'was re-initialised', shown: 'new system id' };
    case 'new-run-id':
      return { happened: 'restarted', shown: 'new run id' };
    case 'promoted':
      return { happened: 'was promoted', shown: 'a replica before' };
    case 'answers-again':
      return { happened: 'answers again', shown: 'did not answer before' };
    case 'joined':
      return { happened: 'joined the backend', shown: 'a node new to it' };
  }
}

/** `restarted (new run id)`, or with `at` (ISO), `restarted at 06:05:10 (new run id)` (UTC). */
export function nodeEventWords(why: NodeEventKind, at?: string): string {
  const { happened, shown } = incarnationWords(why);
  const time =
    at !== undefined && Number.isFinite(Date.parse(at)) ? ` at ${new Date(at).toISOString().slice(11, 19)}` : '';
  return `${happened}${time} (${shown})`;
}
