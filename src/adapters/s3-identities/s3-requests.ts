/**
 * Signed requests to an S3 server: IAM actions as the admin (`POST /`, service `iam`,
 * form-encoded) and one S3 call as a consumer. Signing is `@smithy/signature-v4`'s; HTTP is
 * Node's fetch with the call's AbortSignal. A response body is read for the fields named
 * here and then dropped: it is never kept, logged or put in an error (`CreateAccessKey`'s
 * echoes the secret). An error carries the server's `<Code>` and `<Message>` only.
 */
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The server answered with an error: its status, `<Code>` and `<Message>` (never the body). */
export class S3ErrorReply extends Error {
  override readonly name = 'S3ErrorReply';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${code} (HTTP ${status}): ${message}`);
  }
}

const REGION = 'us-east-1';

const ENTITIES: Record<string, string> = { quot: '"', apos: "'", lt: '<', gt: '>', amp: '&' };

/** Decodes XML character references and the five named entities. */
export function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref.startsWith('#x') || ref.startsWith('#X')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(parseInt(ref.slice(1), 10));
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** The text of every `<tag>…</tag>` in `xml`, decoded. */
export function elements(xml: string, tag: string): string[] {
  const found: string[] = [];
  const pattern = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g');
  for (const match of xml.matchAll(pattern)) found.push(unescapeXml(match[1] ?? ''));
  return found;
}

/** The raw inner XML of every `<tag>…</tag>` (for nested members). */
export function blocks(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1] ?? '');
}

/** The first element's text, or undefined. */
export const first = (xml: string, tag: string): string | undefined => elements(xml, tag)[0];

export class S3Requests {
  private readonly base: URL;

  constructor(url: string) {
    this.base = new URL(url);
  }

  /**
   * Sends IAM `action` with `params` as `admin`; resolves with the body's XML (read, not kept), rejects with {@link
   * S3ErrorReply}.
   */
  iam(admin: Credentials, action: string, params: Record<string, string>, signal: AbortSignal): Promise<string> {
    const body = new URLSearchParams({ Action: action, ...params, Version: '2010-05-08' }).toString();
    return this.send('iam', admin, 'POST', '/', body, signal);
  }

  /** `ListBuckets` (`GET /`) signed as `consumer`. */
  listBuckets(consumer: Credentials, signal: AbortSignal): Promise<string> {
    return this.send('s3', consumer, 'GET', '/', undefined, signal);
  }

  private async send(
    service: string,
    credentials: Credentials,
    method: string,
    path: string,
    body: string | undefined,
    signal: AbortSignal,
  ): Promise<string> {
    const signer = new SignatureV4({
      service,
      region: REGION,
      credentials,
      sha256: Hash.bind(null, 'sha256'),
      uriEscapePath: true,
    });
    const headers: Record<string, string> = { host: this.base.host };
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded; charset=utf-8';
    const port = this.base.port === '' ? undefined : Number(this.base.port);
    const signed = await signer.sign({
      method,
      protocol: this.base.protocol,
      hostname: this.base.hostname,
      port,
      path,
      query: {},
      headers,
      body,
    });
    const response = await fetch(new URL(path, this.base), {
      method,
      headers: signed.headers,
      body: body ?? null,
      signal,
      redirect: 'manual',
    });
    const text = await response.text();
    if (response.ok) return text;
    throw new S3ErrorReply(
      response.status,
      first(text, 'Code') ?? `HTTP${response.status}`,
      first(text, 'Message') ?? 'no message',
    );
  }
}
