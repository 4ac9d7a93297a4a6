/**
 * Every route Bull Board declares, read from its own route table (@bull-board/api's `appRoutes`, and
 * the routes it adds when a history provider is configured), so that a test over them covers a
 * route a newer Bull Board adds.
 */
import { appRoutes, buildHistoryRoutes } from '@bull-board/api/dist/routes.js';

export interface BoardRoute {
  /** Upper case, as a request sends it. */
  method: string;
  /** As Bull Board declares it, e.g. `/api/queues/:queueName/pause` (under the board's mount). */
  route: string;
  summary: string;
}

export function boardRoutes(): BoardRoute[] {
  const history = buildHistoryRoutes({} as Parameters<typeof buildHistoryRoutes>[0], {
    hasUsage: true,
    canPurge: true,
    hasLatency: true,
  });
  const declared: Array<{ method: string | string[]; route: string | string[]; spec?: { summary?: string } }> = [
    { ...appRoutes.entryPoint, spec: { summary: 'the page' } },
    ...appRoutes.api,
    ...history,
  ];
  return declared.flatMap((r) =>
    [r.method]
      .flat()
      .flatMap((method) =>
        [r.route].flat().map((route) => ({ method: method.toUpperCase(), route, summary: r.spec?.summary ?? '' })),
      ),
  );
}

/** The routes that are not reads. */
export function boardWrites(): BoardRoute[] {
  return boardRoutes().filter((r) => r.method !== 'GET' && r.method !== 'HEAD');
}
