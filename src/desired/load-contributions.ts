/**
 * Reads a provider's contributions file:
 *
 * ```yaml
 * consumers:                        # `consumers: []` declares none; an empty file is an error
 *   - id: photos                    # unique in the file
 *     login: app_photos             # unique in the file
 *     secret: grants/photos.secret  # the grant secret, relative to this file (not read here); it
 *                                   # must be in this file's directory (or below), or under the
 *                                   # provider's `secretsRoot`: a path leaving them (`../`, an
 *                                   # absolute path elsewhere, a symlink out) is refused, and
 *                                   # so is one in another provider's directory
 *     values: { keys: ['photos:*'] }  # optional, validated by the provider's adapter
 * ```
 *
 * Any problem with the file rejects all of it, so a truncated or mistyped file never removes a
 * consumer; so does a file larger than `sync.contributionsMaxBytes` (64 MiB), refused unread, one
 * declaring more than `sync.maxConsumers` (or the provider's `maxConsumers`), refused by its count
 * before its entries are read, and one nested deeper or holding more YAML nodes than holdfast's
 * bounds (`src/config/yaml-bounds.ts`), refused before the parser builds it: these three with
 * `CONTRIBUTIONS_BEYOND_BOUNDS`. A consumer that asks for more than the provider's policy allows
 * is rejected alone; so is one naming a grant secret an earlier entry names (a secret serves one
 * consumer: shared, one tenant's password would be another's).
 *
 * A file of the plain shape (`consumers:` then a block list, see `contribution-items.ts`) is
 * read one item at a time, so no tree of the whole document is held; any other file, or one
 * whose items do not parse alone, is read as one document. Both say the same problems.
 */
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import type { ProviderConfig } from '../config/config.js';
import { readBounded } from '../config/bounded-read.js';
import { invalidFile, YamlSource } from '../config/yaml-source.js';
import { sha256Hex } from '../secrets/sha256.js';
import type { SecretRoots } from '../secrets/secret-roots.js';
import { canonicalJson } from '../text/canonical-json.js';
import { nameSchema } from '../text/names.js';
import { consumerKey } from '../store/consumer-key.js';
import type { ContributionsRead, DeclaredConsumer, DesiredState } from './consumer-spec.js';
import { DeclaredBriefs } from './declared-briefs.js';
import { digestText, specDigestBytes } from './spec-digest.js';
import { ownString } from './own-string.js';
import { SpecShelf } from './spec-shelf.js';
import { itemSpans, type ItemSpan, type ItemSpans } from './contribution-items.js';
import { consumerItemShape } from './consumer-item.js';
import { consumersLimit, contributionsLimit, ENTRY_BOUNDS, FILE_BOUNDS } from './contributions-limit.js';
import { consumerProblems, RealPaths, rootsOf } from './consumer-problems.js';
import { isBoundIssue } from '../adapters/value-bounds.js';
import type { DeliveredDigests } from './delivered-shelf.js';

const fileSchema = z.strictObject({ consumers: z.array(z.unknown()) });
const consumerSchema = z.strictObject({
  id: nameSchema,
  login: nameSchema,
  secret: z.string().min(1, 'must not be empty'),
  /** Validated by the adapter's values schema, apart. */
  values: z.unknown().optional(),
});

/** Items whose grant secrets' symlinks are looked at together, at most. */
const ITEMS_AT_ONCE = 256;

/** YAML nodes parsed between two turns of the event loop, about (a few tens of milliseconds of the parser's). */
const NODES_AT_ONCE = 20_000;

/** The first entry naming each grant secret (its resolved path), for the later ones' refusal. */
type SecretFirsts = Map<string, { index: number; id: string }>;

/**
 * The desired state `provider`'s contributions file declares. Throws `CONTRIBUTIONS_INVALID`
 * listing every problem as `<file>:<line>: <field>: <reason>` when the file cannot be used.
 */
export async function loadContributions(provider: ProviderConfig): Promise<DesiredState> {
  const file = provider.contributionsPath;
  const read = await readBounded(file, contributionsLimit(provider));
  if (!read.ok) throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', file, [read.problem]);
  return declaredIn(provider, read.text);
}

/**
 * What the text of `provider`'s contributions file declares: read one item at a time when it
 * has the plain shape, else (or with `whole`, or when an item does not parse alone) as one document.
 */
export async function declaredIn(
  provider: ProviderConfig,
  text: string,
  options: { whole?: boolean; named?: string } = {},
): Promise<DesiredState> {
  const spans = options.whole ? undefined : itemSpans(text);
  const named = options.named ?? provider.contributionsPath;
  const items = new ItemChecker(provider, await rootsOf(provider), full, undefined, named);
  const byItem = spans && (await items.readItems(text, spans));
  return {
    provider: provider.name,
    consumers: byItem ?? (await new ItemChecker(provider, items.roots, full, undefined, named).readDocument(text)),
  };
}

/**
 * What the file at `path` would declare were it `provider`'s contributions file: read and judged
 * as {@link loadContributions} reads the file in place (its grant secrets found from where that
 * file is), each problem naming `path`. Throws `CONTRIBUTIONS_INVALID` as it does.
 */
export async function loadProposed(provider: ProviderConfig, path: string): Promise<DesiredState> {
  const read = await readBounded(path, contributionsLimit(provider));
  if (!read.ok) throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', path, [read.problem]);
  return declaredIn(provider, read.text, { named: path });
}

/**
 * `provider`'s contributions file read and validated whole, as {@link loadContributions} does,
 * each item parsed once: every consumer is kept in brief (key and digest), and the full spec of
 * each whose digest differs from the one `delivered` names (all, when none was delivered) is kept
 * until asked ({@link ContributionsRead.specs}), as its JSON (`spec-shelf.ts`); the text is not
 * kept. Throws `CONTRIBUTIONS_INVALID` as {@link loadContributions} does.
 */
export async function readContributions(
  provider: ProviderConfig,
  delivered: DeliveredDigests = new Map(),
): Promise<ContributionsRead> {
  const file = provider.contributionsPath;
  const read = await readBounded(file, contributionsLimit(provider));
  if (!read.ok) throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', file, [read.problem]);
  const spans = itemSpans(read.text);
  const roots = await rootsOf(provider);
  const shelving = new ItemChecker(provider, roots, shelvingChanged(delivered));
  const kept = spans && (await shelving.readItems(read.text, spans));
  if (kept)
    return {
      provider: provider.name,
      consumers: kept.briefs,
      specs: (indexes) => Promise.resolve().then(() => indexes.map((i) => kept.shelf.get(i))),
    };
  const specs = await new ItemChecker(provider, roots, full).readDocument(read.text);
  const briefs = inBrief();
  for (const consumer of specs) briefs.add(consumer);
  return {
    provider: provider.name,
    consumers: briefs.result(),
    specs: (indexes) => Promise.resolve(indexes.map((i) => specs[i]!)),
  };
}

/** The item of `span` parsed alone, as a list of that one item; undefined when it does not parse alone. */
function itemAlone(
  file: string,
  text: string,
  span: ItemSpan,
  index: number,
): { source: YamlSource; item: unknown } | undefined {
  const read = YamlSource.parseItem(file, text.slice(span.start, span.end), index, span.line, ENTRY_BOUNDS);
  // beyond a bound: refused here, not parsed again whole
  if (!read.ok && read.beyond) throw invalidFile('CONTRIBUTIONS_BEYOND_BOUNDS', 'contributions', file, read.problems);
  if (!read.ok || !Array.isArray(read.source.value) || read.source.value.length !== 1) return undefined;
  return { source: read.source, item: read.source.value[0] };
}

/** What a checker keeps of the consumers it declares, in their order, and gives as its result. */
interface Keeper<R> {
  add(consumer: DeclaredConsumer): void;
  result(): R;
}
type Keep<R> = () => Keeper<R>;
const full: Keep<DeclaredConsumer[]> = () => {
  const all: DeclaredConsumer[] = [];
  return { add: (consumer) => all.push(consumer), result: () => all };
};
const inBrief: Keep<DeclaredBriefs> = () => {
  const briefs = new DeclaredBriefs();
  return { add: ({ key, desired }) => briefs.push(key, specDigestBytes(desired)), result: () => briefs };
};
/**
 * Every consumer in brief, and on a shelf the full spec of each whose digest differs from the one `delivered` names.
 * The keys are copied (`own-string.ts`): cut from the file's text, they would keep all of it alive.
 */
const shelvingChanged =
  (delivered: DeliveredDigests): Keep<{ briefs: DeclaredBriefs; shelf: SpecShelf }> =>
  () => {
    const briefs = new DeclaredBriefs();
    const shelf = new SpecShelf();
    const add = (consumer: DeclaredConsumer) => {
      const index = briefs.length;
      const digest = specDigestBytes(consumer.desired);
      briefs.push(ownString(consumer.key), digest);
      if (delivered.get(consumer.key) !== digestText(digest)) shelf.put(index, consumer);
    };
    return { add, result: () => ({ briefs, shelf }) };
  };

/** Checks the items of one file in order: each one's problems, the ids and logins repeated, the consumers declared. */
class ItemChecker<R> {
  private readonly problems: string[] = [];
  private readonly repeated = { id: [] as string[], login: [] as string[] };
  private readonly first = { id: new Map<string, number>(), login: new Map<string, number>() };
  private readonly declared: Array<Promise<DeclaredConsumer>> = [];
  private readonly kept: Keeper<R>;
  /** The first entry naming each grant secret. */
  private readonly secretFirsts: SecretFirsts = new Map();
  constructor(
    private readonly provider: ProviderConfig,
    readonly roots: SecretRoots,
    keep: Keep<R>,
    private readonly paths = new RealPaths(),
    /** The file its problems name (the file in place, unless a proposed one is read as if it were). */
    private readonly file = provider.contributionsPath,
  ) {
    this.kept = keep();
  }

  /** The file read one item at a time; undefined when an item does not parse alone (the whole document says why). */
  async readItems(text: string, spans: ItemSpans): Promise<R | undefined> {
    const { file } = this;
    this.countWithin(spans.length, () => spans.at(consumersLimit(this.provider).max).line);
    let nodes = 0;
    for (let index = 0; index < spans.length; index++) {
      const alone = itemAlone(file, text, spans.at(index), index);
      if (alone === undefined) return undefined;
      await this.add(alone.source, alone.item, index);
      nodes += alone.source.nodes;
      // a long file does not hold up the process's other work (its worker's jobs, their locks)
      if (index % ITEMS_AT_ONCE === ITEMS_AT_ONCE - 1 || nodes >= NODES_AT_ONCE) {
        nodes = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return this.result();
  }

  /** A file declaring more consumers than its provider's bound is refused whole, by its count (`lineOfFirstBeyond`). */
  private countWithin(count: number, lineOfFirstBeyond: () => number): void {
    const { max, setting } = consumersLimit(this.provider);
    if (count <= max) return;
    const { file } = this;
    throw invalidFile('CONTRIBUTIONS_BEYOND_BOUNDS', 'contributions', file, [
      `${file}:${lineOfFirstBeyond()}: consumers: ${count.toLocaleString('en-US')} consumers, more than ${setting} (${max.toLocaleString('en-US')}); refused whole, before its entries are read`,
    ]);
  }

  /** The file read as one document. */
  async readDocument(text: string): Promise<R> {
    const { file } = this;
    const read = YamlSource.parse(file, text, FILE_BOUNDS);
    if (!read.ok)
      throw invalidFile(read.beyond ? 'CONTRIBUTIONS_BEYOND_BOUNDS' : 'CONTRIBUTIONS_INVALID', 'contributions', file, [
        ...read.problems,
      ]);
    const { source } = read;
    if (source.value === null) {
      throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', file, [
        `${file}:1: (top level): the file is empty; write \`consumers: []\` to declare no consumers`,
      ]);
    }
    await source.check(fileSchema, source.value, this.problems);
    const listed = (source.value as { consumers?: unknown }).consumers;
    const items: unknown[] = Array.isArray(listed) ? listed : [];
    this.countWithin(items.length, () => source.lineOf(['consumers', consumersLimit(this.provider).max]));
    for (const [index, item] of items.entries()) await this.add(source, item, index);
    return this.result();
  }

  /** Checks `consumers[index]`, found in `source`; a valid one is declared (its secret's symlinks looked at). */
  private async add(source: YamlSource, item: unknown, index: number): Promise<void> {
    this.noteRepeats(source, item, index);
    const shape = consumerItemShape(item);
    if (shape !== undefined) {
      this.problems.push(source.problem(['consumers', index], shape));
      return;
    }
    const checked = await source.check(consumerSchema, item, this.problems, ['consumers', index]);
    const rawValues = (item as { values?: unknown }).values ?? {};
    // a bound's issue refuses this entry alone: the spec check says it again, with file, line and the limit
    const values = await source.check(
      this.provider.adapter.valuesSchema,
      rawValues,
      this.problems,
      ['consumers', index, 'values'],
      isBoundIssue,
    );
    if (!checked.ok || (!values.ok && values.onlyApart !== true) || this.problems.length > 0) return;
    const secretPath = resolve(dirname(this.provider.contributionsPath), checked.value.secret);
    // in the directory where it really is: two paths through a directory symlink name one secret (a symlinked secret
    // itself is refused when it is read)
    const realDir = await this.paths.of(dirname(secretPath));
    const real = realDir === undefined ? secretPath : join(realDir, basename(secretPath));
    const shared = this.sharedSecret(source, index, checked.value.id, real);
    this.declared.push(
      this.declare(
        source,
        index,
        { ...checked.value, values: values.ok ? values.value : rawValues, secretPath },
        shared,
      ),
    );
    if (this.declared.length >= ITEMS_AT_ONCE) await this.keepDeclared();
  }

  /**
   * The refusal of an entry naming the grant secret an earlier entry names (the same file, its
   * path resolved, and its real path when it exists): the first keeps it. A password shared between logins is one tenant's password
   * known to another, and one rotation would change both.
   */
  private sharedSecret(source: YamlSource, index: number, id: string, secretPath: string): string[] {
    const first = this.secretFirsts.get(secretPath);
    if (first === undefined) this.secretFirsts.set(secretPath, { index, id });
    if (first === undefined || first.index === index) return [];
    return [
      source.problem(
        ['consumers', index, 'secret'],
        `names the grant secret of consumers[${first.index}] (${first.id}); a grant secret serves one consumer, refused`,
      ),
    ];
  }

  /** `id` and `login` repeating an earlier item's, said as the whole list's duplicates are. */
  private noteRepeats(source: YamlSource, item: unknown, index: number): void {
    for (const field of ['id', 'login'] as const) {
      const value = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;
      if (typeof value !== 'string') continue;
      const earlier = this.first[field].get(value);
      if (earlier === undefined) this.first[field].set(value, index);
      else
        this.repeated[field].push(
          source.problem(['consumers', index, field], `duplicate ${field} "${value}" (also consumers[${earlier}])`),
        );
    }
  }

  private async declare(
    source: YamlSource,
    index: number,
    {
      id,
      login,
      secret,
      values,
      secretPath,
    }: { id: string; login: string; secret: string; values: unknown; secretPath: string },
    shared: string[],
  ): Promise<DeclaredConsumer> {
    const { provider } = this;
    const at = source.at(['consumers', index]);
    const problems = [
      ...shared,
      ...(await consumerProblems(
        source,
        provider,
        index,
        { id, login, secret, secretPath, values },
        this.roots,
        this.paths,
      )),
    ];
    // values over a bound are refused, never applied, and not carried on (they may be megabytes)
    const kept = problems.length > 0 && !provider.adapter.valuesSchema.safeParse(values).success ? {} : values;
    const specHash = sha256Hex(canonicalJson({ login, values: kept, secretPath }));
    return {
      key: consumerKey(provider.name, id),
      id,
      desired: { login, values: kept, secretPath, specHash, source: at, removed: false, problems },
    };
  }

  /** The consumers declared so far, kept (in order). */
  private async keepDeclared(): Promise<void> {
    for (const consumer of await Promise.all(this.declared.splice(0))) this.kept.add(consumer);
  }

  private async result(): Promise<R> {
    await this.keepDeclared();
    const problems = [...this.problems, ...this.repeated.id, ...this.repeated.login];
    if (problems.length > 0) throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', this.file, problems);
    return this.kept.result();
  }
}
