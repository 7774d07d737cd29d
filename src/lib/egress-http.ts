import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { checkEgressUrl, EgressRefusedError, egressLookup, originOf, systemResolver, type Resolver } from './egress';

/**
 * One outbound HTTP POST under the egress rules (webhook deliveries, SMS provider sends): the
 * egress check on the URL, then a socket handed only addresses that are public at this very
 * moment, so a name re-pointed between the check and the connect gains nothing. Redirects are never
 * followed: following one would send the body to an address nobody checked.
 */

export const CONNECT_TIMEOUT_MS = 5_000;
export const TOTAL_TIMEOUT_MS = 15_000;
export const RESPONSE_READ_LIMIT = 64 * 1024;

export interface EgressPostResult {
  /** The receiver's status code; null when no answer came. */
  status: number | null;
  /** Why there is no (complete) answer: egress_refused, dns_error, connect_timeout, timeout, or the network error. */
  error: string | null;
  /** The first `keepBytes` of the response body (UTF-8, NULs dropped), null when nothing was read. */
  excerpt: string | null;
  /** The address the socket was connected to (the one the egress check passed). */
  connectedAddress: string | null;
  durationMs: number;
}

export interface EgressPostOptions {
  /** EGRESS_ALLOWLIST origins. */
  allowlist: readonly string[];
  resolve?: Resolver;
  /** How much of the response body to keep (at most RESPONSE_READ_LIMIT is read). */
  keepBytes: number;
  /** Overrides for tests of the limits themselves. */
  connectTimeoutMs?: number;
  totalTimeoutMs?: number;
}

export interface EgressBytesResult {
  status: number | null;
  /** As EgressPostResult's, plus `too_large` when the answer passed the limit (nothing of it is kept). */
  error: string | null;
  contentType: string | null;
  /** The whole answer; null when there is no complete one. */
  body: Buffer | null;
  durationMs: number;
}

export interface EgressBytesOptions {
  allowlist: readonly string[];
  resolve?: Resolver;
  /** The largest answer taken whole. */
  limit: number;
  totalTimeoutMs?: number;
}

interface RequestOptions {
  allowlist: readonly string[];
  resolve?: Resolver;
  /** Bytes of the answer kept. */
  keepBytes: number;
  /** Bytes read at most; what `over` says happens past them. */
  readLimit: number;
  /** `stop`: the status already decided, stop reading; `fail`: the answer was wanted whole, so it fails too_large. */
  over: 'stop' | 'fail';
  connectTimeoutMs?: number;
  totalTimeoutMs?: number;
}

interface RequestResult {
  status: number | null;
  error: string | null;
  contentType: string | null;
  kept: Buffer | null;
  connectedAddress: string | null;
  durationMs: number;
}

/** Answers every lookup of one request from one resolution, so the checked and the connected addresses are the same. */
function onceResolver(resolve: Resolver): Resolver {
  const answers = new Map<string, Promise<string[]>>();
  return (host) => {
    let answer = answers.get(host);
    if (!answer) {
      answer = resolve(host);
      answers.set(host, answer);
    }
    return answer;
  };
}

/** The same reading of EGRESS_ALLOWLIST entries as checkEgressUrl's (an entry may be written as any URL of the origin). */
function isAllowlisted(url: URL, allowlist: readonly string[]): boolean {
  const origin = originOf(url);
  return allowlist.some((entry) => {
    try {
      return originOf(new URL(entry)) === origin;
    } catch {
      return entry === origin;
    }
  });
}

function errorText(err: unknown): string {
  if (err instanceof EgressRefusedError) return err.reason === 'unresolvable' ? 'dns_error' : 'egress_refused';
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EGRESS_REFUSED') return 'egress_refused';
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return 'dns_error';
  const text = e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err);
  return text.slice(0, 300);
}

/**
 * POSTs `body` unchanged. Never throws: every failure is a result with `error` set. Origins not in
 * the allowlist pass the same rules as at registration (https, port 443, a public host name), and
 * the socket is only handed addresses that are public at this very moment.
 */
export async function egressPost(rawUrl: string, headers: Record<string, string>, body: string | Buffer, options: EgressPostOptions): Promise<EgressPostResult> {
  const r = await egressRequest(rawUrl, headers, body, {
    ...options,
    keepBytes: Math.min(options.keepBytes, RESPONSE_READ_LIMIT),
    readLimit: RESPONSE_READ_LIMIT,
    over: 'stop',
  });
  const excerpt = r.kept && r.kept.length ? r.kept.toString('utf8').replace(/\0/g, '') : r.status !== null ? '' : null;
  return { status: r.status, error: r.error, excerpt, connectedAddress: r.connectedAddress, durationMs: r.durationMs };
}

/**
 * The same POST for an answer wanted whole and as bytes (a hosted speech provider's audio or
 * transcript), up to `limit`: a larger answer is the error `too_large`. Never throws.
 */
export async function egressPostBytes(rawUrl: string, headers: Record<string, string>, body: string | Buffer, options: EgressBytesOptions): Promise<EgressBytesResult> {
  const r = await egressRequest(rawUrl, headers, body, { ...options, keepBytes: options.limit, readLimit: options.limit, over: 'fail' });
  return { status: r.status, error: r.error, contentType: r.contentType, body: r.error === null ? (r.kept ?? Buffer.alloc(0)) : null, durationMs: r.durationMs };
}

async function egressRequest(rawUrl: string, headers: Record<string, string>, body: string | Buffer, options: RequestOptions): Promise<RequestResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const resolve = onceResolver(options.resolve ?? systemResolver);
  const refused = (error: string): RequestResult => ({ status: null, error, contentType: null, kept: null, connectedAddress: null, durationMs: elapsed() });
  let url: URL;
  let allowlisted: boolean;
  try {
    url = new URL(rawUrl);
    allowlisted = isAllowlisted(url, options.allowlist);
    if (!allowlisted) await checkEgressUrl(rawUrl, { allowlist: options.allowlist, resolve });
  } catch (err) {
    return refused(err instanceof EgressRefusedError ? errorText(err) : 'egress_refused');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refused('egress_refused');

  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const transport = url.protocol === 'https:' ? https : http;

  return new Promise<RequestResult>((settle) => {
    let done = false;
    let connectedAddress: string | null = null;
    let status: number | null = null;
    let contentType: string | null = null;
    const chunks: Buffer[] = [];
    let keptBytes = 0;
    let readBytes = 0;
    let connectTimer: NodeJS.Timeout | undefined;

    const finish = (error: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(totalTimer);
      clearTimeout(connectTimer);
      const kept = chunks.length ? Buffer.concat(chunks) : null;
      settle({ status, error, contentType, kept: error === 'too_large' ? null : kept, connectedAddress, durationMs: elapsed() });
      req.destroy();
    };

    const req = transport.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': String(payload.length) },
        lookup: egressLookup(allowlisted, resolve),
        // A fresh connection per attempt: a pooled socket would carry an address checked for another request.
        agent: false,
      },
      (res) => {
        status = res.statusCode ?? null;
        contentType = res.headers['content-type'] ?? null;
        connectedAddress ??= res.socket?.remoteAddress ?? null;
        res.on('data', (chunk: Buffer) => {
          readBytes += chunk.length;
          if (readBytes > options.readLimit && options.over === 'fail') {
            finish('too_large');
            return;
          }
          if (keptBytes < options.keepBytes) {
            const keep = chunk.subarray(0, options.keepBytes - keptBytes);
            chunks.push(keep);
            keptBytes += keep.length;
          }
          // The rest of an oversized answer is not worth reading: the status already decided.
          if (readBytes >= options.readLimit && options.over === 'stop') finish(null);
        });
        res.on('end', () => finish(null));
        res.on('error', (err) => finish(errorText(err)));
        res.on('aborted', () => finish('response_aborted'));
      },
    );

    const totalTimer = setTimeout(() => finish('timeout'), options.totalTimeoutMs ?? TOTAL_TIMEOUT_MS);
    req.on('socket', (socket: Socket) => {
      const onConnect = () => {
        clearTimeout(connectTimer);
        connectedAddress = socket.remoteAddress ?? connectedAddress;
      };
      if (socket.connecting) {
        connectTimer = setTimeout(() => finish('connect_timeout'), options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS);
        socket.once('connect', onConnect);
      } else {
        onConnect();
      }
    });
    req.on('error', (err) => finish(status !== null ? null : errorText(err)));
    req.end(payload);
  });
}
