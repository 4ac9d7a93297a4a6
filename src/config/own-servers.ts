/**
 * holdfast's own servers are never a tenant's. A provider whose backend is the queue's Redis or
 * the record store's server is refused at load, naming both, unless it says
 * `sharesHoldfastServer: true`; then holdfast's names there are withheld from its every consumer
 * (`src/policy/own-names.ts`, at load and in the worker) and its policy is tightened by its
 * adapter (`ownServerPolicy`). A tenant who could name holdfast's keys would read its records'
 * briefs and forge its verdicts; one whose database is the store's would read the records.
 *
 * One server, as `backend-overlap.ts` judges providers with each other (host and port once
 * normalised, the loopback names as one host, a node in common between lists), and besides:
 * each host name resolved (`localhost`, `vm` and `127.0.0.1` are one host where they resolve
 * alike), and this machine's own addresses (and `0.0.0.0`, `::`) counted as loopback.
 *
 * Not judged here: a Sentinel's master and the nodes a provider discovers (its replicas, a
 * Cluster's unlisted nodes) are known only once connected; an operator who knows a provider
 * reaches holdfast's server that way says `sharesHoldfastServer: true`.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { AdapterKind } from '../adapters/adapter.js';
import type { OwnNames } from './config.js';
import { adminAddresses, backendAddresses, normalHost, type ProviderAddress } from './backend-overlap.js';
import { prefixGlob } from './glob-overlap.js';
import { shardPrefixes } from './shard-prefixes.js';
import type { FieldPath, YamlSource } from './yaml-source.js';

/** How long one host name may take to resolve at load; one that does not is compared by name. */
const LOOKUP_MS = 2_000;

/** What the check needs of the configuration, as validated. */
export interface OwnServerFields {
  queue: {
    url?: { host: string; port: number } | undefined;
    cluster?: ReadonlyArray<{ host: string; port: number }> | undefined;
    prefix: string;
    shards: number;
  };
  store: { url: string; database: string };
  providers: ReadonlyArray<
    ProviderAddress & { adapter: Pick<AdapterKind, 'kind'>; sharesHoldfastServer?: boolean | undefined }
  >;
}

/** One of holdfast's servers: where the configuration names it, and its addresses. */
interface OwnServer {
  what: "the queue's Redis" | "the record store's server";
  path: FieldPath;
  addresses: readonly string[];
}

/** The outcome: problems, and each provider's withheld names (by index) where it shares a server. */
export interface OwnServerJudgement {
  problems: string[];
  ownNames: Map<number, OwnNames>;
}

/** `host:port` as a URL of `scheme` (an IPv6 host bracketed). */
const urlOf = (scheme: string, { host, port }: { host: string; port: number }) =>
  `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;

/** Every address the queue's Redis and the store are reached at, normalised. */
function ownServers(config: OwnServerFields): OwnServer[] {
  const queueNodes = config.queue.cluster ?? (config.queue.url ? [config.queue.url] : []);
  return [
    {
      what: "the queue's Redis",
      path: ['queue', config.queue.cluster ? 'cluster' : 'url'],
      addresses: queueNodes.flatMap((node) => backendAddresses(urlOf('redis', node))),
    },
    { what: "the record store's server", path: ['store', 'url'], addresses: backendAddresses(config.store.url) },
  ];
}

/** This machine's own addresses, and the unspecified ones, which reach it: counted as loopback. */
function localAddresses(): Set<string> {
  const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => normalHost(i.address)));
  return new Set([...own, '0.0.0.0', '::', normalHost('0:0:0:0:0:0:0:0')]);
}

/**
 * `address` (`host:port`) and the addresses its host resolves to, each normalised (this
 * machine's own as `loopback`). A name that does not resolve within {@link LOOKUP_MS} is itself alone.
 */
async function spellings(address: string, local: ReadonlySet<string>): Promise<string[]> {
  const cut = address.lastIndexOf(':');
  if (address.startsWith('srv:') || cut < 0) return [address];
  const [host, port] = [address.slice(0, cut), address.slice(cut + 1)];
  const asLocal = (h: string) => (local.has(h) ? 'loopback' : h);
  if (host === 'loopback' || isIP(host) !== 0) return [...new Set([address, `${asLocal(host)}:${port}`])];
  const resolved = await Promise.race([
    lookup(host, { all: true }).catch(() => []),
    new Promise<[]>((done) => setTimeout(() => done([]), LOOKUP_MS).unref()),
  ]);
  return [address, ...new Set(resolved.map((r) => `${asLocal(normalHost(r.address))}:${port}`))];
}

/** The names holdfast keeps on `server`: every key and channel under the queue's prefixes, or the store's database. */
export function ownNamesOf(config: OwnServerFields, server: OwnServer['what'], at: string): OwnNames {
  if (server === "the record store's server")
    return { server: `${server} (${at})`, keys: [], channels: [], databases: [config.store.database] };
  const keys = [prefixGlob(config.queue.prefix), ...shardsGlob(config.queue.prefix, config.queue.shards)];
  return {
    server: `${server} (${at})`,
    keys,
    // keyspace notifications name holdfast's keys in their channels, keyevent ones in their messages
    channels: [...keys, ...keys.map((glob) => `__keyspace@*__:${glob}`), '__keyevent@*'],
    databases: [],
  };
}

/** One pattern for every shard's prefix (`shard-prefixes.ts`): the shard's number as `*`. */
function shardsGlob(prefix: string, shards: number): string[] {
  if (shards <= 1) return [];
  const [first, second] = shardPrefixes(prefix, 2) as [string, string];
  const at = [...first].findIndex((c, i) => c !== second[i]);
  return [`${prefixGlob(first.slice(0, at)).slice(0, -1)}*${prefixGlob(first.slice(at + 1))}`];
}

/**
 * Each provider on holdfast's own servers: a problem naming both unless it says
 * `sharesHoldfastServer: true`, its withheld names when it does (also when no address shows it:
 * the operator knows more than the addresses).
 */
export async function judgeOwnServers(source: YamlSource, config: OwnServerFields): Promise<OwnServerJudgement> {
  const local = localAddresses();
  // each address looked up once, all at once: a name that does not resolve costs LOOKUP_MS once
  const looked = new Map<string, Promise<string[]>>();
  const spelled = (a: string) => looked.get(a) ?? looked.set(a, spellings(a, local)).get(a)!;
  const widen = async (addresses: readonly string[]) => new Set((await Promise.all(addresses.map(spelled))).flat());
  const servers = await Promise.all(
    ownServers(config).map(async (server) => ({ ...server, reach: await widen(server.addresses) })),
  );
  const judgement: OwnServerJudgement = { problems: [], ownNames: new Map() };
  // a Sentinel is not the server it names (see the file's comment)
  const reaches = await Promise.all(
    config.providers.map((p) =>
      widen((p.admin.sentinels === undefined ? adminAddresses(p.admin) : []).filter((a) => !a.includes('://'))),
    ),
  );
  for (const [index, provider] of config.providers.entries()) {
    const reach = reaches[index]!;
    const shared = servers.flatMap((server) => {
      const address = [...reach].find((a) => server.reach.has(a));
      return address === undefined ? [] : [{ server, address }];
    });
    const at = (server: (typeof servers)[number]) => `${source.at(server.path)}`;
    if (provider.sharesHoldfastServer === true) {
      // no address in common: withheld on both (the operator knows more than the addresses)
      const which = shared.length > 0 ? shared.map(({ server }) => server) : servers;
      judgement.ownNames.set(index, merged(which.map((server) => ownNamesOf(config, server.what, at(server)))));
      continue;
    }
    for (const { server, address } of shared) {
      judgement.problems.push(
        source.problem(
          ['providers', index, 'admin'],
          `provider ${provider.name} is on ${server.what} (${address}, ${server.path.join('.')} at ${at(server)}): ` +
            `a tenant of it could ${server.what === "the queue's Redis" ? "read and forge holdfast's keys" : "read holdfast's records"}; ` +
            'give it a server of its own, or say sharesHoldfastServer: true to share it with holdfast, whose names are then withheld from its consumers',
        ),
      );
    }
  }
  return judgement;
}

/** Several servers' names as one. */
function merged(all: OwnNames[]): OwnNames {
  return {
    server: all.map((n) => n.server).join(' and '),
    keys: all.flatMap((n) => n.keys),
    channels: all.flatMap((n) => n.channels),
    databases: all.flatMap((n) => n.databases),
  };
}
