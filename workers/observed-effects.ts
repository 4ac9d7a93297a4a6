/** Effects that tell a {@link WorkObserver} (the metrics) what each check and apply did; in process only. */
import type { WorkObserver } from '../src/metrics/metrics.js';
import { lastCheckOf } from './check-memo.js';
import type { Effects } from './effects.js';

export function observedEffects(effects: Effects, observer: WorkObserver): Effects {
  return {
    ...effects,
    async check(input) {
      const result = await effects.check(input);
      const outcome = lastCheckOf(result.event, new Date(0))?.outcome;
      if (outcome) observer.checked(input.provider.config.name, result.deep, outcome);
      return result;
    },
    async confirm(input, password, found) {
      const result = await effects.confirm(input, password, found);
      const outcome = lastCheckOf(result.event, new Date(0))?.outcome;
      if (outcome) observer.checked(input.provider.config.name, result.deep, outcome);
      return result;
    },
    async apply(input) {
      const event = await effects.apply(input);
      observer.applied(input.provider.config.name, input.context.reapplying, event.type === 'APPLIED');
      return event;
    },
  };
}
