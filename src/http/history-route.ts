/**
 * `GET /consumers/<provider>/<id>/history[?since=24h]`: a consumer's history as JSON, the same as
 * `holdfast history <provider>/<id> --json` (`history/consumer-history.ts`), behind the dashboard's
 * own guards (Host, basic auth, read-only: `http-server.ts`). Matched as a wildcard and parsed
 * here, so that a key of any length or spelling gets a clear refusal (400, with a code), not a
 * route that does not match: `../x`, an empty part, a control character, a key too long.
 */
import { parseDuration } from '../config/duration.js';
import { HoldfastError, isHoldfastError, type ErrorCode } from '../errors/holdfast-error.js';
import { readHistory, type HistorySources } from '../history/read-history.js';
import { inertText } from '../text/terminal-text.js';
import type { ConsumerHistory } from '../history/consumer-history.js';

/** Where it is mounted: `/consumers/*`. */
export const HISTORY_ROUTE = '/consumers/*';
const SUFFIX = '/history';
/** The longest `since` read. */
const MAX_SINCE = 32;

/** An answer: a status code and its JSON body. */
export type HistoryAnswer =
  | { code: 200; body: ConsumerHistory }
  | { code: 400 | 404 | 500; body: { error: { code: ErrorCode; message: string } } };

const STATUS_OF: Partial<Record<ErrorCode, 400 | 404>> = {
  CONSUMER_KEY_INVALID: 400,
  ARGUMENT_INVALID: 400,
  CONSUMER_UNKNOWN: 404,
};

function sinceOf(text: string | undefined, now: number): number | null {
  if (text === undefined) return null;
  try {
    if (text.length > MAX_SINCE) throw new Error(`more than ${MAX_SINCE} characters`);
    return now - parseDuration(text);
  } catch (error) {
    throw new HoldfastError('ARGUMENT_INVALID', `since: ${inertText((error as Error).message)}`);
  }
}

/** The answer to a request for `path` (what follows `/consumers/`, decoded) with the query's `since`. */
export async function historyAnswer(
  sources: HistorySources,
  path: string,
  since: string | undefined,
  now = Date.now(),
): Promise<HistoryAnswer> {
  try {
    if (!path.endsWith(SUFFIX))
      throw new HoldfastError(
        'CONSUMER_KEY_INVALID',
        'not found: the history of a consumer is at /consumers/<provider>/<id>/history',
      );
    return { code: 200, body: await readHistory(sources, path.slice(0, -SUFFIX.length), sinceOf(since, now), now) };
  } catch (error) {
    if (!isHoldfastError(error)) throw error;
    return { code: STATUS_OF[error.code] ?? 500, body: { error: { code: error.code, message: error.message } } };
  }
}
