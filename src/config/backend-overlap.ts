/**
 * One backend, one owner per login: providers whose admin URLs reach the same server (the same
 * host and port once the URL is normalised, the loopback names counting as one host, or the
 * same URL; every host an `admin.urls` lists counts) are refused at config load unless both set
 * a `loginPrefix` and neither prefix starts with the other. Without that, one provider could
 * claim (and re-password, or remove as an orphan) a login another provider made.
 */
import type { YamlSource } from './yaml-source.js';

/** What the check needs of a provider, as the configuration gives it. */
export interface ProviderAddress {
  name: string;
  /** `urls`: every host of the backend (a primary and its standbys), each counted as the provider's. */
  admin: { url?: string | undefined; urls?: readonly string[] | undefined };
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
function normalHost(host: string): string {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (name === 'localhost' || /^127(\.\d{1,3}){3}$/.test(name) || /^(0{0,4}:){2,7}0{0,3}1$/.test(name) || /^::ffff:127(\.\d{1,3}){3}$/.test(name)) return 'loopback';
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
  return hosts.split(',').filter(Boolean).map((hostPort) => address(scheme, hostPort));
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
export function sharedBackends(providers: readonly Pick<ProviderAddress, 'admin'>[]): Array<{ i: number; j: number; shared: string }> {
  const addresses = providers.map((p) => new Set(adminUrlsOf(p.admin).flatMap((url) => [url, ...backendAddresses(url)])));
  const pairs: Array<{ i: number; j: number; shared: string }> = [];
  providers.forEach((_, j) => {
    for (let i = 0; i < j; i++) {
      const shared = [...addresses[j]!].find((a) => addresses[i]!.has(a));
      if (shared !== undefined) pairs.push({ i, j, shared });
    }
  });
  return pairs;
}

/** Why two providers on one backend may not both be configured, naming the later's URL and the earlier's line; `[]` when none. */
export function backendOverlaps(source: YamlSource, providers: readonly ProviderAddress[]): string[] {
  const problems: string[] = [];
  const field = (p: ProviderAddress) => (p.admin.urls === undefined ? 'url' : 'urls');
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
        ['providers', j, 'admin', field(later)],
        `provider ${later.name} shares its backend (${shared}) with provider ${earlier.name} (${source.at(['providers', i, 'admin', field(earlier)])}), and ${why}: ` +
          'give both a loginPrefix, neither starting with the other, so that each owns its own logins',
      ),
    );
  }
  return problems;
}
