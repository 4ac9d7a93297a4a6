/**
 * holdfast's one HTTP server (fastify), started by `holdfast run` and `holdfast worker` when
 * `--http` or `http.listen` is given: the status page (`/`, `/consumer?key=`), Bull Board for
 * holdfast's queue (`/queues`), `/status` (the JSON of `holdfast status --json`), a consumer's
 * history (`/consumers/<provider>/<id>/history`, the JSON of `holdfast history --json`), `/healthz`
 * (200 only when everything is served, else 503 with the reasons) and `/metrics`.
 *
 * Read-only unless `http.readOnly: false`: only GET and HEAD are served; even then, of Bull
 * Board's writes only retrying, promoting and removing one job, resuming a queue and releasing its
 * rate limit are served, everything else refused with 403 ({@link refusedWrite}). Basic auth, required off
 * loopback ({@link refuseExposedDashboard}). A request whose `Host` is not one it answers to gets
 * 421 ({@link hostMatcher}). Every response carries a Content-Security-Policy, `X-Frame-Options:
 * DENY`, `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
 * Nothing it serves carries a secret: job data holds none, the status and records hold none;
 * Bull Board hides the queue Redis's details (its INFO).
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import type { HttpConfig } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { scrapeDeadlineMs, type Metrics } from '../metrics/metrics.js';
import type { ConsumerQueue } from '../schedule/consumer-queue.js';
import type { Coordination } from '../queue/coordination.js';
import type { QueuedChecks } from '../schedule/queued-checks.js';
import type { QueueControlsRead } from '../queue/queue-controls.js';
import type { OldConnectionsReads } from '../status/old-connections-status.js';
import { oldConnectionsLine } from '../old-connections/old-connections-words.js';
import { BoundedStatus, type StatusWhere } from '../status/bounded-status.js';
import { redReasons, type StatusReport, type StatusSources } from '../status/status-report.js';
import { providerOf } from '../store/consumer-key.js';
import type { ConsumerStore } from '../store/consumer-store.js';
import { basicAuthChecker } from './basic-auth.js';
import { BOARD_PREFIX, refusedWrite } from './board-guard.js';
import { boardCsp, withoutRemoteFonts } from './board-csp.js';
import { hostMatcher } from './host-check.js';
import { hostPort, refuseExposedDashboard } from './listen-guard.js';
import { consumerPage, PAGE_CSP, statusPage } from './status-page.js';
import { readContest } from './contest-read.js';
import { readNodeEvents } from './node-event-read.js';
import { pageReasons } from './incident-view.js';
import { readTimelines } from '../history/timeline-read.js';
import { HISTORY_ROUTE, historyAnswer } from './history-route.js';
import { chosenScale, SCALE_REFUSED } from './timeline-scale.js';

export interface HttpServerOptions {
  listen: { host: string; port: number };
  auth?: HttpConfig['auth'];
  /** `Host` names accepted besides the listen address (`http.hosts`). */
  hosts?: readonly string[] | undefined;
  /** Only GET and HEAD: even Bull Board's allowed writes (retry, remove, …) refused. */
  readOnly: boolean;
  store: Pick<ConsumerStore, 'providerStatuses' | 'get'>;
  coordination: Coordination;
  /** Whether silent consumers' checks are queued, for the status to tell a backlog. */
  queued?: QueuedChecks;
  /** What stops or throttles the queues (a pause, a global rate limit), for the status to be red naming it. */
  controls?: QueueControlsRead;
  /** The connections from before each consumer's rotation, for the status. */
  oldConnections?: OldConnectionsReads;
  queue: ConsumerQueue;
  providers: StatusSources['providers'];
  metrics?: Metrics | undefined;
  logger: Logger;
  /** Where the store and the queue's Redis are, for a status that names one not answering. */
  where?: StatusWhere | undefined;
}

/** The status page lists every consumer up to this many; beyond, the unserved only. */
const PAGE_LISTS_ALL_UP_TO = 2000;

export interface HttpServer {
  /** Where it listens, e.g. `http://127.0.0.1:9100`. */
  url: string;
  close(): Promise<void>;
}

/** Sent with every response. */
const SECURITY_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
const onBoard = (route: string) => route === BOARD_PREFIX || route.startsWith(`${BOARD_PREFIX}/`);
/** For everything that is not a page: nothing may load, nothing may frame it. */
const NOTHING_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { store, coordination, providers, metrics, auth, logger } = options;
  refuseExposedDashboard(options.listen, auth);
  const app: FastifyInstance = Fastify({ logger: false });
  const boardPolicy = boardCsp();
  const authorized = auth ? basicAuthChecker(auth) : () => true;
  // a young dashboard's timelines show the last hour by default (`timeline-scale.ts`)
  const startedAt = Date.now();
  // set once listening (the port may be 0 until then)
  let knownHost: (header: string | undefined) => boolean = () => false;

  // within the status's budget whatever does not answer, and shared by requests close together
  const status = new BoundedStatus(
    {
      store,
      coordination,
      providers,
      ...(options.queued ? { queued: options.queued } : {}),
      ...(options.controls ? { controls: options.controls } : {}),
      ...(options.oldConnections ? { oldConnections: options.oldConnections } : {}),
    },
    options.where ?? { store: 'the record store', queue: "the queue's Redis" },
  );
  const report = (all: boolean): Promise<StatusReport> => status.read({ all });

  app.addHook('onRequest', async (request, reply) => {
    // by the route matched, not the URL as spelled
    const route = request.routeOptions.url ?? '';
    reply.headers({
      ...SECURITY_HEADERS,
      'content-security-policy': onBoard(route)
        ? boardPolicy
        : route === '/' || route === '/consumer'
          ? PAGE_CSP
          : NOTHING_CSP,
    });
    if (!knownHost(request.headers.host)) {
      return reply
        .code(421)
        .type('text/plain; charset=utf-8')
        .send(
          `this server does not answer to Host ${JSON.stringify(request.headers.host ?? '')}: add the name to http.hosts to reach the dashboard by it\n`,
        );
    }
    if (!authorized(request.headers.authorization)) {
      return reply.code(401).header('www-authenticate', 'Basic realm="holdfast"').send('authentication required\n');
    }
    if (options.readOnly && request.method !== 'GET' && request.method !== 'HEAD') {
      return reply.code(405).send('read-only: set http.readOnly: false to allow changes\n');
    }
    const refused = refusedWrite(request.method, request.routeOptions.url);
    if (refused) return reply.code(403).send(refused);
    return undefined;
  });
  // Bull Board's page, without the remote font stylesheet its policy would refuse
  app.addHook('onSend', async (request, reply, payload) => {
    const html =
      typeof payload === 'string' &&
      onBoard(request.routeOptions.url ?? '') &&
      String(reply.getHeader('content-type') ?? '').startsWith('text/html');
    return html ? withoutRemoteFonts(payload) : payload;
  });

  app.get('/healthz', async (_request, reply) => {
    const r = await report(false);
    const reasons = redReasons(r);
    reply.type('text/plain; charset=utf-8');
    return r.healthy
      ? reply.code(200).send(`ok: ${r.total} consumers served\n`)
      : reply.code(503).send(`not served:\n${reasons.map((l) => `${l}\n`).join('')}`);
  });

  app.get('/status', async (request) => {
    const all = (request.query as { all?: string }).all;
    return report(all !== undefined && all !== '0' && all !== 'false');
  });

  app.get('/metrics', async (request, reply) => {
    if (!metrics) return reply.code(404).send('no metrics in this process\n');
    return reply
      .type(metrics.registry.contentType)
      .send(await metrics.text(scrapeDeadlineMs(request.headers['x-prometheus-scrape-timeout-seconds'])));
  });

  app.get('/', async (request, reply) => {
    const query = request.query as { provider?: string; state?: string; scale?: unknown };
    const scale = chosenScale(query.scale);
    if (scale === null) return reply.code(400).type('text/plain; charset=utf-8').send(SCALE_REFUSED);
    let r = await report(false);
    // (a store that did not answer leaves nothing to list: not asked twice)
    if (r.total > 0 && r.total <= PAGE_LISTS_ALL_UP_TO) r = await report(true);
    const names = r.providers.map((p) => p.provider);
    const [timelines, nodeEvents] = await Promise.all([
      readTimelines(coordination.notes, names, Date.parse(r.at)),
      readNodeEvents(coordination.signals, names),
    ]);
    return reply
      .type('text/html; charset=utf-8')
      .send(
        statusPage(
          r,
          { provider: query.provider || undefined, state: query.state || undefined, scale, startedAt },
          pageReasons(r),
          timelines,
          nodeEvents,
        ),
      );
  });

  app.get('/consumer', async (request, reply) => {
    const key = (request.query as { key?: string }).key ?? '';
    const scale = chosenScale((request.query as { scale?: unknown }).scale);
    if (scale === null) return reply.code(400).type('text/plain; charset=utf-8').send(SCALE_REFUSED);
    const now = new Date();
    const [record, r, timelines, contest, old] = await Promise.all([
      store.get(key),
      report(true),
      readTimelines(coordination.notes, [providerOf(key)], now.getTime()),
      readContest(coordination.contests, key, now.getTime()),
      oldConnectionsOf(options.oldConnections, key),
    ]);
    const status = r.consumers.find((c) => c.consumer === key);
    const own = timelines && (timelines.get(providerOf(key)) ?? []).filter((e) => e.key === key);
    return reply
      .code(record ? 200 : 404)
      .type('text/html; charset=utf-8')
      .send(consumerPage(key, status, record, now, own, contest, { scale, startedAt }, old));
  });

  app.get(HISTORY_ROUTE, async (request, reply) => {
    const since = (request.query as { since?: unknown }).since;
    // a since given twice (or as anything but one string) is refused as an empty one
    const answer = await historyAnswer(
      { store, reads: coordination.notes, nodeEvents: coordination.signals },
      (request.params as { '*': string })['*'],
      since === undefined || typeof since === 'string' ? since : '',
    );
    return reply.code(answer.code).send(answer.body);
  });

  const board = new FastifyAdapter();
  createBullBoard({
    // one board entry per shard, named by its prefix when there are several (each shard's queue has the same name)
    queues: [
      ...options.queue.queues.map(
        (queue, i, all) =>
          new BullMQAdapter(queue, {
            readOnlyMode: options.readOnly,
            description: `holdfast's consumer jobs: one event for one consumer each${all.length > 1 ? ` (shard ${i} of ${all.length})` : ''}`,
            ...(all.length > 1 ? { prefix: `${queue.opts.prefix}:` } : {}),
          }),
      ),
      ...options.queue.rounds.queues.map(
        (queue, i, all) =>
          new BullMQAdapter(queue, {
            readOnlyMode: options.readOnly,
            description: `holdfast's rounds: each job takes the consumers whose routine check fell due${all.length > 1 ? ` in shard ${i} of ${all.length}` : ''} and checks them; its result counts them (due, checked, held, lost, healed, late)`,
            ...(all.length > 1 ? { prefix: `${queue.opts.prefix}:` } : {}),
          }),
      ),
    ],
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'holdfast', hideRedisDetails: true, hideDocsLink: true } },
  });
  board.setBasePath(BOARD_PREFIX);
  await app.register(board.registerPlugin(), { prefix: BOARD_PREFIX });

  const { host, port } = options.listen;
  await app.listen({ host, port });
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  knownHost = hostMatcher(host, actualPort, options.hosts ?? []);
  const url = `http://${hostPort(host, actualPort)}`;
  logger.info(
    { url },
    `dashboard at ${url}/ (queue: ${url}/queues; ${url}/healthz, ${url}/metrics)${auth ? '; basic auth' : ''}`,
  );
  return { url, close: () => app.close() };
}

/** A consumer's connections from before its rotation, in words (`cache/photos: 2 connections from before …`), if listed. */
async function oldConnectionsOf(reads: OldConnectionsReads | undefined, key: string): Promise<string | null> {
  const provider = providerOf(key);
  const found = await reads?.oldConnections([provider]).catch(() => undefined);
  const old = found?.get(provider)?.get(key);
  return old && old.count > 0 ? oldConnectionsLine(key, old) : null;
}
