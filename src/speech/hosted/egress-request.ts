import http from 'node:http';
import https from 'node:https';
import { checkEgressUrl, EgressRefusedError, egressLookup, originOf, systemResolver, type Resolver } from '../../lib/egress';

/**
 * One POST to a hosted speech provider under the egress rules of src/lib/egress-http.ts (the check
 * on the URL, then a socket handed only addresses public at that moment, no redirects), with the
 * whole answer kept as bytes: synthesized audio is binary and larger than egressPost's 64 KiB
 * excerpt.
 */

export const SPEECH_RESPONSE_LIMIT = 16 * 1024 * 1024;

export interface SpeechHttpOptions {
  /** EGRESS_ALLOWLIST origins. */
  allowlist: readonly string[];
  resolve?: Resolver;
  timeoutMs?: number;
}

export interface SpeechHttpResult {
  status: number;
  contentType: string;
  body: Buffer;
}

export class SpeechProviderError extends Error {
  constructor(
    readonly reason: 'egress_refused' | 'network' | 'timeout' | 'too_large' | 'http_status' | 'bad_response',
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'SpeechProviderError';
  }
}

function allowlisted(url: URL, allowlist: readonly string[]): boolean {
  const origin = originOf(url);
  return allowlist.some((entry) => {
    try {
      return originOf(new URL(entry)) === origin;
    } catch {
      return entry === origin;
    }
  });
}

export async function speechPost(rawUrl: string, headers: Record<string, string>, body: Buffer | string, opts: SpeechHttpOptions): Promise<SpeechHttpResult> {
  const resolve = opts.resolve ?? systemResolver;
  let url: URL;
  let exempt: boolean;
  try {
    url = new URL(rawUrl);
    exempt = allowlisted(url, opts.allowlist);
    if (!exempt) await checkEgressUrl(rawUrl, { allowlist: opts.allowlist, resolve });
  } catch (err) {
    throw new SpeechProviderError('egress_refused', err instanceof EgressRefusedError ? `egress refused: ${err.reason}` : 'egress refused: invalid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new SpeechProviderError('egress_refused', 'egress refused: not http(s)');
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SpeechHttpResult>((settle, fail) => {
    let done = false;
    const finish = (err: SpeechProviderError | null, result?: SpeechHttpResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      if (err) fail(err);
      else settle(result!);
    };
    const req = transport.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': String(payload.length) },
        lookup: egressLookup(exempt, resolve),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > SPEECH_RESPONSE_LIMIT) return finish(new SpeechProviderError('too_large', 'speech provider answer too large'));
          chunks.push(chunk);
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const result = { status, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) };
          if (status < 200 || status > 299) finish(new SpeechProviderError('http_status', `speech provider answered ${status}`, status));
          else finish(null, result);
        });
        res.on('error', (err) => finish(new SpeechProviderError('network', err.message)));
      },
    );
    const timer = setTimeout(() => finish(new SpeechProviderError('timeout', 'speech provider timed out')), opts.timeoutMs ?? 15_000);
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish(new SpeechProviderError(err.code === 'EGRESS_REFUSED' ? 'egress_refused' : 'network', err.code === 'EGRESS_REFUSED' ? 'egress refused: non_public_address' : `${err.code ?? ''} ${err.message}`.trim())),
    );
    req.end(payload);
  });
}
