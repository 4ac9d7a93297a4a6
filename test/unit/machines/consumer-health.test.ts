/** Every state the chart has is classified for the status and the health rule, and only those. */
import { describe, expect, it } from 'vitest';
import { STATE_MEANINGS } from '../../../machines/consumer-health.js';
import { CONSUMER_STATES } from '../../../machines/consumer-machine.js';

describe('state meanings', () => {
  it('classify exactly the states of the chart', () => {
    expect(Object.keys(STATE_MEANINGS).sort()).toEqual([...CONSUMER_STATES].sort());
  });

  it('count as served only held, removing and removed (status is never green over the rest)', () => {
    const served = Object.entries(STATE_MEANINGS)
      .filter(([, meaning]) => meaning.healthy)
      .map(([state]) => state);
    expect(served.sort()).toEqual(['held', 'removed', 'removing']);
  });
});
