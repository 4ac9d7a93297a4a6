/**
 * What the consumer machine's transitions say, and how loudly: each a `say` action, by name,
 * whose announcement (level and message) the worker logs once the record says so
 * (`machine-step.ts` collects them). The sentences are `consumer-words.ts`'.
 */
import type { AnnouncedFields, Announcement } from './consumer-events.js';
import * as words from './consumer-words.js';
import type { About } from './consumer-words.js';
import type { ConsumerTiming } from './delays.js';

/** A sentence of the log, in a provider's timing. */
type Sentence = (about: About, timing: ConsumerTiming) => string;

/** A failure's fields: `timedOut` when its deadline passed. */
function failureFields({ event }: About): AnnouncedFields | undefined {
  return event.type === 'APPLY_FAILED' && event.timedOut === true ? { timedOut: true } : undefined;
}

/** The chart's announcements for a provider's timing, by name: `{ type: 'say', params }` each. */
export function announcementsFor(timing: ConsumerTiming) {
  const say = (
    level: Announcement['level'],
    sentence: Sentence,
    fieldsOf: (about: About) => AnnouncedFields | undefined = () => undefined,
  ) => ({
    type: 'say' as const,
    params: (about: About): Announcement => {
      const fields = fieldsOf(about);
      return { level, message: sentence(about, timing), ...(fields ? { fields } : {}) };
    },
  });
  return {
    secretStillMissing: say('warn', words.secretStillMissing),
    secretUnreadable: say('error', words.secretUnreadable),
    secretUnusable: say('error', words.secretUnusable),
    secretReadableAgain: say('info', words.secretReadableAgain),
    applyFailed: say('warn', words.applyFailed, failureFields),
    applyRefused: say('error', words.applyRefused),
    observedNotHeld: say('warn', words.observedNotHeld),
    refusedByPolicy: say('error', words.refusedByPolicy),
    quarantined: say('error', words.quarantined),
    stillNotHeld: say('error', words.stillNotHeld),
    notHeld: say('warn', words.notHeldNow),
    removeFailed: say('warn', words.removeFailed),
    removeRefused: say('error', words.removeRefused),
  };
}
