/**
 * One backend, one owner per login: providers whose admin URLs reach the same server (the same
 * host and port once the URL is normalised, the loopback names counting as one host, or the
 * same URL; a node in common between cluster lists; a Sentinel in common naming one master;
 * every host an `admin.urls` lists counts) are refused at config load unless both set a
 * `loginPrefix` and neither prefix starts with the other. Without that, one provider could claim
 * (and re-password, or remove as an orphan) a login another provider made.
 */
import type { YamlSource } from './yaml-source.js';

/** What the check needs of a provider, as the configuration gives it. */
export interface ProviderAddress {
  name: string;
  /**
   * One of `url`, `urls` (every host of a primary and its standbys, each counted as the
   * provider's), `sentinels` (with `master`) and `cluster` (a backend of several nodes).
   */
  admin: {
    url?: string | undefined;
    urls?: readonly string[] | undefined;
    sentinels?: readonly string[] | undefined;
    master?: string | undefined;
    cluster?: readonly string[] | undefined;
  };
  loginPrefix?: string | undefined;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  redis: 6379,
  rediss: 6379,
  postgres: 5432,
  postgresql: 5432,
  mongodb: 27017,
  http: 80,
  https: 443,
};

/** `localhost`, `127.0.0.0/8`, `::1` (and its long and IPv4-mapped forms): one host. */
export function normalHost(host: string): string {
  const name = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (
    name === 'localhost' ||
    /^127(\.\d{1,3}){3}$/.test(name) ||
    /^(0{0,4}:){2,7}0{0,3}1$/.test(name) ||
    /^::ffff:127(\.\d{1,3}){3}$/.test(name)
  )
    return 'loopback';
  return name;
}

/** One `host[:port]` of a URL's host list, as `host:port`. */
function address(scheme: string, hostPort: string): string {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(hostPort);
  const host = normalHost(match?.[1] ?? hostPort);
  const port = match?.[2] ? Number(match[2]) : DEFAULT_PORTS[scheme];
  return `${host}:${port ?? '?'}`;
}

/**
 * The servers an admin URL reaches, as `host:port` (every host of a MongoDB seed list; the
 * socket directory of a PostgreSQL `?host=`; `srv:<name>` for `mongodb+srv://`).
 */
export function backendAddresses(url: string): string[] {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:[^@/?#]*@)?([^/?#]*)([^#]*)/.exec(url);
  if (!match) return [];
  const scheme = match[1]!.toLowerCase();
  const hosts = match[2]!;
  if (scheme === 'mongodb+srv') return [`srv:${normalHost(hosts)}`];
  const socket = /^postgres(ql)?$/.test(scheme) ? /[?&]host=([^&]*)/.exec(match[3] ?? '')?.[1] : undefined;
  if (socket) return [address(scheme, `${decodeURIComponent(socket)}:${/:(\d+)$/.exec(hosts)?.[1] ?? ''}`)];
  return hosts
    .split(',')
    .filter(Boolean)
    .map((hostPort) => address(scheme, hostPort));
}

/**
 * What identifies an admin's backend: its URL and the servers it reaches; for Sentinel, each
 * Sentinel's address with the master's name (two providers naming the same master through a
 * shared Sentinel are one backend); for a Cluster, each listed node (overlapping node lists are
 * one backend, and so is a `url` naming one of its nodes).
 */
export function adminAddresses(admin: ProviderAddress['admin']): string[] {
  if (admin.sentinels !== undefined) {
    return admin.sentinels.flatMap((url) => backendAddresses(url).map((a) => `${a}, master ${admin.master ?? '?'}`));
  }
  return (admin.cluster ?? adminUrlsOf(admin)).flatMap((url) => [url, ...backendAddresses(url)]);
}

function fieldOf(admin: ProviderAddress['admin']): 'url' | 'urls' | 'sentinels' | 'cluster' {
  return admin.sentinels !== undefined
    ? 'sentinels'
    : admin.cluster !== undefined
      ? 'cluster'
      : admin.urls !== undefined
        ? 'urls'
        : 'url';
}

/** Whether two providers' logins can collide: neither prefix is set, one is missing, or one starts with the other. */
function overlapping(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a.startsWith(b) || b.startsWith(a);
}

/** Every host a provider's admin lists: its `urls` (a primary and its standbys), else its one `url`. */
function adminUrlsOf(admin: ProviderAddress['admin']): readonly string[] {
  return admin.urls ?? (admin.url === undefined ? [] : [admin.url]);
}

/**
 * Each pair of providers (by index, earlier first) whose admin URLs reach one server (any host
 * of an `admin.urls` counting), with the address they share.
 */
export function sharedBackends(
  providers: readonly Pick<ProviderAddress, 'admin'>[],
): Array<{ i: number; j: number; shared: string }> {
  const addresses = providers.map((p) => new Set(adminAddresses(p.admin)));
  const pairs: Array<{ i: number; j: number; shared: string }> = [];
  providers.forEach((_, j) => {
    for (let i = 0; i < j; i++) {
      const shared = [...addresses[j]!].find((a) => addresses[i]!.has(a));
      if (shared !== undefined) pairs.push({ i, j, shared });
    }
  });
  return pairs;
}

/**
 * Why two providers on one backend may not both be configured, naming the later's URL and the earlier's line; `[]` when
 * none.
 */
export function backendOverlaps(source: YamlSource, providers: readonly ProviderAddress[]): string[] {
  const problems: string[] = [];
  for (const { i, j, shared } of sharedBackends(providers)) {
    const earlier = providers[i]!;
    const later = providers[j]!;
    if (!overlapping(earlier.loginPrefix, later.loginPrefix)) continue;
    const both = earlier.loginPrefix !== undefined && later.loginPrefix !== undefined;
    const why = both
      ? `their loginPrefix settings "${earlier.loginPrefix}" and "${later.loginPrefix}" overlap (one starts with the other)`
      : 'not both set a loginPrefix';
    problems.push(
      source.problem(
        ['providers', j, 'admin', fieldOf(later.admin)],
        `provider ${later.name} shares its backend (${shared}) with provider ${earlier.name} (${source.at(['providers', i, 'admin', fieldOf(earlier.admin)])}), and ${why}: ` +
          'give both a loginPrefix, neither starting with the other, so that each owns its own logins',
      ),
    );
  }
  return problems;
}
