/** One consumer's page, for a record this holdfast cannot read: red, saying why, and escaped. */
import { describe, expect, it } from 'vitest';
import { consumerPage } from '../../../src/http/status-page.js';

describe('the consumer page', () => {
  it('says, red, that its record cannot be read and why', () => {
    const html = consumerPage(
      'cache/app-a',
      undefined,
      { _id: 'cache/app-a', unreadable: 'its desired spec is not a <document>', rev: 3, since: null, login: null },
      new Date(),
    );
    expect(html).toContain(
      '<p class="mark">✗ Its record cannot be read: its desired spec is not a &lt;document&gt;. It is left as it is and not acted on.</p>',
    );
  });
});
