/**
 * The `s3-identities` adapter: IAM users on an S3 server that lets holdfast choose a key's
 * secret (SeaweedFS's `CreateAccessKey` with `AccessKeyId` and `SecretAccessKey`). One user per
 * consumer, one access key (id derived from provider and login), one inline policy. Buckets
 * are never created or deleted. Checks go through the S3 gateway, as the consumer would.
 */
import type { Adapter, AdminConnection, CallOptions, Grant, HoldsAnswer, Ownership } from '../adapter.js';
import { BackendCalls, hostOf } from '../backend-calls.js';
import type { Incarnation, IncarnationChange } from '../incarnation.js';
import { IncarnationWatch, incarnationPace } from '../incarnation-watch.js';
import { readS3Run } from './s3-run.js';
import { HoldfastError } from '../../errors/holdfast-error.js';
import {
  accessKeyIdOf,
  MARK_TAG,
  overlapKeyIdOf,
  POLICY_NAME,
  policyDocument,
  type PolicyDocument,
} from './identity.js';
import { policyDifference } from './policy-meaning.js';
import { claimProblem, type IamUser } from './ownership.js';
import { secretProblem } from './policy.js';
import { blocks, elements, first, S3ErrorReply, S3Requests, type Credentials } from './s3-requests.js';
import type { S3IdentitiesValues } from './values.js';

export const DEFAULT_MAX_CONCURRENT_CALLS = 4;

/** Error codes with which the server refuses the admin's own signature: could not ask, not an answer. */
const ADMIN_REFUSED = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidClientTokenId']);

/** How many users' tags a listing reads at once. */
const LIST_BATCH = 16;

/** What a request signed as the consumer proved. */
type Probe = 'held' | 'missing' | 'password-differs';

interface AccessKey {
  id: string;
  status: string;
}

/**
 * Server replies, by their `<Code>`, that are an answer rather than a failure: what each stands
 * for (null: no such entity), or the refusal it is (thrown as a HoldfastError, kept as it is).
 */
type Replies = ReadonlyMap<string, () => string | null>;
const NO_REPLIES: Replies = new Map();
const ABSENT: Replies = new Map([['NoSuchEntity', () => null]]);

const isReply = (error: unknown, code?: string): error is S3ErrorReply =>
  error instanceof S3ErrorReply && (code === undefined || error.code === code);

/** fetch's "fetch failed" with the reason underneath (ECONNREFUSED…), never a body. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  const why = cause === undefined ? '' : `: ${cause.code ?? cause.message ?? ''}`;
  return `${error.message}${why}`;
}

export class S3IdentitiesAdapter implements Adapter<S3IdentitiesValues> {
  private readonly calls: BackendCalls;
  private readonly requests: S3Requests;
  private readonly admin: Credentials;
  /** IAM requests sent, by action (`CreateAccessKey`, `PutUserPolicy`…). */
  private readonly sent = new Map<string, number>();
  /** The gateway's answering (s3-run.ts), read every second once asked. */
  private readonly watch: IncarnationWatch;

  constructor(
    admin: AdminConnection,
    private readonly ownership: Ownership,
  ) {
    this.admin = { accessKeyId: admin.username ?? '', secretAccessKey: admin.password ?? '' };
    this.requests = new S3Requests(admin.url);
    this.calls = new BackendCalls({
      adapter: 's3-identities',
      where: hostOf(admin.url, 's3'),
      adminSecrets: admin.password === undefined ? [] : [admin.password],
      maxConcurrent: admin.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS,
      answered: (error) => isReply(error) && !ADMIN_REFUSED.has(error.code),
      describe,
    });
    const node = hostOf(admin.url, 's3');
    this.watch = new IncarnationWatch({
      ...incarnationPace(admin),
      nodes: () => [node],
      read: (_node, signal) => readS3Run(admin.url, signal),
    });
  }

  /** The gateway's incarnation: SeaweedFS names none, so a new one is its answering again after not answering. */
  incarnations(): ReadonlyMap<string, Incarnation> {
    return this.watch.incarnations();
  }

  onIncarnation(listener: (change: IncarnationChange) => void): () => void {
    return this.watch.onIncarnation(listener);
  }

  /** How many `CreateAccessKey` requests this adapter has sent: routine checks send none. */
  get createAccessKeyCalls(): number {
    return this.iamCalls('CreateAccessKey');
  }

  /** How many IAM requests of `action` this adapter has sent (answered or not). */
  iamCalls(action: string): number {
    return this.sent.get(action) ?? 0;
  }

  /**
   * Reads the user's mark first: one that exists without this provider's is refused
   * (`BACKEND_REFUSED`, nothing sent) unless adopted. A key that already takes the secret is
   * kept; one that does not is deleted and made again (a rotation). During a rotation's overlap
   * (`keepPasswords`), the usual key keeps the old secret and the new one goes on the overlap key.
   */
  async create(grant: Grant<S3IdentitiesValues>, { signal }: CallOptions): Promise<void> {
    const refusal = secretProblem(grant.password);
    if (refusal !== undefined)
      throw new HoldfastError('BACKEND_REFUSED', `s3-identities: grant secret: ${refusal}; nothing was sent`);
    const { login } = grant;
    const existing = await this.user(login, signal);
    const keys = existing === null ? [] : await this.accessKeys(login, signal);
    const problem = claimProblem(
      login,
      existing,
      this.ownership,
      existing !== null && (await this.isBare(login, existing, keys, signal)),
    );
    if (problem !== undefined)
      throw new HoldfastError('BACKEND_REFUSED', `s3-identities: ${problem}; nothing was sent`);
    if (existing === null) await this.createUser(login, signal);
    if (existing?.owner !== this.ownership.provider) await this.mark(login, signal);
    const { usual, overlap } = this.keyIds(login);
    if (keys.some((k) => k.id === this.admin.accessKeyId)) {
      throw new HoldfastError(
        'BACKEND_REFUSED',
        `s3-identities: the IAM user "${login}" holds the admin's own access key; it is never a consumer's`,
      );
    }
    const active = keys.some((k) => k.id === usual && k.status === 'Active');
    const usualTakes = active && (await this.probeKey(usual, grant, signal)) === 'held';
    // an overlap: the old secret stays on the usual key for the consumers that still have it
    const into = grant.keepPasswords === true && active && !usualTakes ? overlap : usual;
    for (const key of keys.filter((k) => k.id !== usual && k.id !== into)) await this.deleteKey(login, key.id, signal);
    if (into === overlap) await this.ensureKey(login, overlap, keys, grant, signal);
    else if (!usualTakes) await this.remakeKey(login, usual, keys, grant.password, signal);
    // a user made just now has no inline policy to list or keep
    await this.applyPolicy(login, grant.values, signal, existing === null ? [] : undefined);
  }

  /** Deletes the user's keys, policies and the user, only when it carries this provider's mark; absent is fine. */
  async remove(login: string, { signal }: CallOptions): Promise<void> {
    const existing = await this.user(login, signal);
    if (existing?.owner !== this.ownership.provider) return;
    for (const key of await this.accessKeys(login, signal)) {
      await this.iamOrAbsent(signal, 'DeleteAccessKey', { UserName: login, AccessKeyId: key.id });
    }
    for (const name of await this.policyNames(login, signal)) {
      await this.iamOrAbsent(signal, 'DeleteUserPolicy', { UserName: login, PolicyName: name });
    }
    await this.iamOrAbsent(signal, 'DeleteUser', { UserName: login });
  }

  /**
   * `ListUserTags`, `ListAccessKeys`, `ListUserPolicies` and `GetUserPolicy` as the admin, and one request as the
   * consumer.
   */
  async holds(grant: Grant<S3IdentitiesValues>, { signal }: CallOptions): Promise<HoldsAnswer> {
    const { login } = grant;
    const user = await this.user(login, signal);
    if (user === null) return { held: false, reason: 'missing', detail: 'the server has no such IAM user' };
    if (user.owner !== this.ownership.provider) {
      const whose = user.owner === undefined ? 'no mark' : `the mark of provider "${user.owner}"`;
      return {
        held: false,
        reason: 'rules-differ',
        detail: `mark: the IAM user carries ${whose}, not ${MARK_TAG}=${this.ownership.provider}`,
      };
    }
    const { usual, overlap } = this.keyIds(login);
    const [keys, policy, probe] = await Promise.all([
      this.accessKeys(login, signal),
      this.policiesDiffer(login, grant.values, signal),
      this.probe(grant, signal),
    ]);
    const ours = keys.find((k) => k.id === usual);
    if (ours === undefined)
      return { held: false, reason: 'missing', detail: `the IAM user has no access key ${usual}` };
    if (ours.status !== 'Active')
      return { held: false, reason: 'disabled', detail: `the access key ${usual} is ${ours.status}` };
    const others = keys.filter((k) => k.id !== usual && !(grant.keepPasswords === true && k.id === overlap));
    if (others.length > 0)
      return {
        held: false,
        reason: 'password-differs',
        detail: `the IAM user has ${others.length} access key(s) beside ${usual}`,
      };
    if (probe === 'missing')
      return {
        held: false,
        reason: 'missing',
        detail: `the S3 gateway does not know the access key ${usual} (InvalidAccessKeyId)`,
      };
    if (probe === 'password-differs')
      return {
        held: false,
        reason: 'password-differs',
        detail: `the S3 gateway refuses the grant's secret for ${usual} (SignatureDoesNotMatch)`,
      };
    return policy === undefined ? { held: true } : { held: false, reason: 'rules-differ', detail: policy };
  }

  /** One `ListBuckets` signed as the consumer, through the S3 gateway. */
  async authenticates(grant: Grant<S3IdentitiesValues>, { signal }: CallOptions): Promise<boolean> {
    return (await this.probe(grant, signal)) === 'held';
  }

  async ping({ signal }: CallOptions): Promise<void> {
    await this.iam(signal, 'ListUsers', { MaxItems: '1' });
  }

  /** `ListUsers`, then `ListUserTags` for each under `prefix` not in `claimed`: only this provider's marked users. */
  async list(prefix: string, { signal }: CallOptions, claimed: ReadonlySet<string> = new Set()): Promise<string[]> {
    const names: string[] = [];
    let marker: string | undefined;
    do {
      const xml = await this.iam(signal, 'ListUsers', marker === undefined ? {} : { Marker: marker });
      for (const member of blocks(xml, 'member')) for (const name of elements(member, 'UserName')) names.push(name);
      marker = first(xml, 'IsTruncated') === 'true' ? first(xml, 'Marker') : undefined;
    } while (marker !== undefined);
    const candidates = names.filter((n) => n.startsWith(prefix) && !claimed.has(n));
    const ours: string[] = [];
    for (let i = 0; i < candidates.length; i += LIST_BATCH) {
      const batch = candidates.slice(i, i + LIST_BATCH);
      const read = await Promise.all(batch.map((login) => this.user(login, signal)));
      batch.forEach((login, j) => {
        if (read[j]?.owner === this.ownership.provider) ours.push(login);
      });
    }
    return ours;
  }

  close(): Promise<void> {
    this.watch.close();
    return Promise.resolve();
  }

  private async iam(
    signal: AbortSignal,
    action: string,
    params: Record<string, string>,
    secrets: readonly string[] = [],
    replies: Replies = NO_REPLIES,
  ): Promise<string> {
    const xml = await this.send(signal, action, params, secrets, replies);
    return xml ?? '';
  }

  /** As {@link iam}, but null when the server answers `NoSuchEntity`. */
  private iamOrAbsent(signal: AbortSignal, action: string, params: Record<string, string>): Promise<string | null> {
    return this.send(signal, action, params, [], ABSENT);
  }

  private send(
    signal: AbortSignal,
    action: string,
    params: Record<string, string>,
    secrets: readonly string[],
    replies: Replies,
  ): Promise<string | null> {
    const what = `${action}${params['UserName'] === undefined ? '' : ` "${params['UserName']}"`}`;
    return this.calls.run(signal, what, secrets, async () => {
      this.sent.set(action, this.iamCalls(action) + 1);
      try {
        return await this.requests.iam(this.admin, action, params, signal);
      } catch (error) {
        const reply = isReply(error) ? replies.get(error.code) : undefined;
        if (reply) return reply();
        throw error;
      }
    });
  }

  /** The user and its mark; null when there is no such user. */
  private async user(login: string, signal: AbortSignal): Promise<IamUser | null> {
    const xml = await this.iamOrAbsent(signal, 'ListUserTags', { UserName: login });
    if (xml === null) return null;
    const tags = blocks(xml, 'member');
    const tag = tags.find((m) => first(m, 'Key') === MARK_TAG);
    return { owner: tag === undefined ? undefined : first(tag, 'Value'), tags: tags.length };
  }

  /** No tag, no access key, no inline policy (see {@link claimProblem}). */
  private async isBare(
    login: string,
    user: IamUser,
    keys: readonly AccessKey[],
    signal: AbortSignal,
  ): Promise<boolean> {
    return user.tags === 0 && keys.length === 0 && (await this.policyNames(login, signal)).length === 0;
  }

  private async mark(login: string, signal: AbortSignal): Promise<void> {
    await this.iam(signal, 'TagUser', {
      UserName: login,
      'Tags.member.1.Key': MARK_TAG,
      'Tags.member.1.Value': this.ownership.provider,
    });
  }

  private async accessKeys(login: string, signal: AbortSignal): Promise<AccessKey[]> {
    const xml = await this.iam(signal, 'ListAccessKeys', { UserName: login });
    return blocks(xml, 'member').map((m) => ({ id: first(m, 'AccessKeyId') ?? '', status: first(m, 'Status') ?? '' }));
  }

  private async deleteKey(login: string, keyId: string, signal: AbortSignal): Promise<void> {
    await this.iam(signal, 'DeleteAccessKey', { UserName: login, AccessKeyId: keyId });
  }

  /** The response echoes the secret: it is dropped unread, and an error carries its code and message only, scrubbed. */
  private async createKey(
    login: string,
    keyId: string,
    secret: string,
    signal: AbortSignal,
    secrets: readonly string[],
  ): Promise<void> {
    const taken: Replies = new Map([
      [
        'EntityAlreadyExists',
        () => {
          throw new HoldfastError(
            'BACKEND_REFUSED',
            `s3-identities: the access key id ${keyId} for "${login}" is in use by another IAM user; it is left as it is`,
          );
        },
      ],
    ]);
    await this.iam(
      signal,
      'CreateAccessKey',
      { UserName: login, AccessKeyId: keyId, SecretAccessKey: secret },
      secrets,
      taken,
    );
  }

  private async policyNames(login: string, signal: AbortSignal): Promise<string[]> {
    const xml = await this.iam(signal, 'ListUserPolicies', { UserName: login });
    return blocks(xml, 'PolicyNames').flatMap((b) => elements(b, 'member'));
  }

  /**
   * `CreateUser`; a user that appeared since {@link create} found none (someone else made it between holdfast's read
   * and this write) is refused, and nothing more is sent: whose it is is read again at the next apply.
   */
  private async createUser(login: string, signal: AbortSignal): Promise<void> {
    const appeared: Replies = new Map([
      [
        'EntityAlreadyExists',
        () => {
          throw new HoldfastError(
            'BACKEND_REFUSED',
            `s3-identities: the IAM user "${login}" was made by someone else between holdfast's read and its CreateUser; it is left as it is`,
          );
        },
      ],
    ]);
    await this.iam(signal, 'CreateUser', { UserName: login }, [], appeared);
  }

  /**
   * Exactly holdfast's one policy for `values` (none when they name no bucket); any other inline policy is deleted.
   * One that already means what `values` ask is kept: every `PutUserPolicy` makes SeaweedFS rewrite every identity it
   * holds (docs/scaling.md), so an apply writes only what differs. `names`: the user's policies, when known (none
   * for a user made by this apply).
   */
  private async applyPolicy(
    login: string,
    values: S3IdentitiesValues,
    signal: AbortSignal,
    names?: readonly string[],
  ): Promise<void> {
    const document = policyDocument(values);
    const held = names ?? (await this.policyNames(login, signal));
    for (const name of held) {
      if (name !== POLICY_NAME || document === null)
        await this.iam(signal, 'DeleteUserPolicy', { UserName: login, PolicyName: name });
    }
    if (document === null) return;
    if (held.includes(POLICY_NAME) && (await this.policyDiffers(login, document, signal)) === undefined) return;
    await this.iam(signal, 'PutUserPolicy', {
      UserName: login,
      PolicyName: POLICY_NAME,
      PolicyDocument: JSON.stringify(document),
    });
  }

  /** What differs between the user's policy named {@link POLICY_NAME} and `document`, by meaning, or undefined. */
  private async policyDiffers(
    login: string,
    document: PolicyDocument,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const xml = await this.iam(signal, 'GetUserPolicy', { UserName: login, PolicyName: POLICY_NAME });
    return policyDifference(first(xml, 'PolicyDocument') ?? '', document);
  }

  /** What differs between the user's inline policies and the one `values` ask for, by meaning (policy-meaning.ts), or undefined. */
  private async policiesDiffer(
    login: string,
    values: S3IdentitiesValues,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const document = policyDocument(values);
    const names = await this.policyNames(login, signal);
    const expected = document === null ? [] : [POLICY_NAME];
    const others = names.filter((n) => !expected.includes(n));
    if (others.length > 0) return `policies: the IAM user also has ${others.map((n) => `"${n}"`).join(', ')}`;
    if (document === null) return undefined;
    if (!names.includes(POLICY_NAME)) return `policies: the IAM user lacks "${POLICY_NAME}"`;
    const difference = await this.policyDiffers(login, document, signal);
    return difference === undefined ? undefined : `policy "${POLICY_NAME}": ${difference}`;
  }

  /** The usual key's id and the overlap's (see {@link overlapKeyIdOf}). */
  private keyIds(login: string): { usual: string; overlap: string } {
    return {
      usual: accessKeyIdOf(this.ownership.provider, login),
      overlap: overlapKeyIdOf(this.ownership.provider, login),
    };
  }

  /** Makes `keyId` take the grant's secret: kept when it does, else deleted (if there) and created. */
  private async ensureKey(
    login: string,
    keyId: string,
    keys: readonly AccessKey[],
    grant: Grant<S3IdentitiesValues>,
    signal: AbortSignal,
  ): Promise<void> {
    const key = keys.find((k) => k.id === keyId);
    if (key?.status === 'Active' && (await this.probeKey(keyId, grant, signal)) === 'held') return;
    await this.remakeKey(login, keyId, keys, grant.password, signal);
  }

  /** Deletes `keyId` when the user has it, and creates it with `secret`. */
  private async remakeKey(
    login: string,
    keyId: string,
    keys: readonly AccessKey[],
    secret: string,
    signal: AbortSignal,
  ): Promise<void> {
    if (keys.some((k) => k.id === keyId)) await this.deleteKey(login, keyId, signal);
    await this.createKey(login, keyId, secret, signal, [secret]);
  }

  /** What the grant's secret proves on the usual key, or, during an overlap (`keepPasswords`), on either key. */
  private async probe(grant: Grant<S3IdentitiesValues>, signal: AbortSignal): Promise<Probe> {
    const { usual, overlap } = this.keyIds(grant.login);
    const onUsual = await this.probeKey(usual, grant, signal);
    if (onUsual === 'held' || grant.keepPasswords !== true) return onUsual;
    return (await this.probeKey(overlap, grant, signal)) === 'held' ? 'held' : onUsual;
  }

  /** `ListBuckets` signed with `keyId` and the grant's secret; connection failures and other errors throw. */
  private probeKey(keyId: string, grant: Grant<S3IdentitiesValues>, signal: AbortSignal): Promise<Probe> {
    const consumer = { accessKeyId: keyId, secretAccessKey: grant.password };
    return this.calls.run(signal, `ListBuckets as "${grant.login}"`, [grant.password], async () => {
      try {
        await this.requests.listBuckets(consumer, signal);
        return 'held';
      } catch (error) {
        if (isReply(error, 'InvalidAccessKeyId')) return 'missing';
        if (isReply(error, 'SignatureDoesNotMatch')) return 'password-differs';
        throw error;
      }
    });
  }
}
