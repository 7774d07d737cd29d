import { egressPostBytes } from '../../lib/egress-http';
import type { Resolver } from '../../lib/egress';

/**
 * One POST to a hosted speech provider under the egress rules (src/lib/egress-http.ts: the check on
 * the URL, then a socket handed only addresses public at that moment, no redirects), with the whole
 * answer kept as bytes: synthesized audio is binary and larger than a webhook's excerpt.
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

const REFUSALS: Record<string, string> = { egress_refused: 'egress refused', dns_error: 'egress refused: unresolvable' };

export async function speechPost(rawUrl: string, headers: Record<string, string>, body: Buffer | string, opts: SpeechHttpOptions): Promise<SpeechHttpResult> {
  const r = await egressPostBytes(rawUrl, headers, body, {
    allowlist: opts.allowlist,
    resolve: opts.resolve,
    limit: SPEECH_RESPONSE_LIMIT,
    totalTimeoutMs: opts.timeoutMs ?? 15_000,
  });
  if (r.error !== null) {
    if (REFUSALS[r.error]) throw new SpeechProviderError('egress_refused', REFUSALS[r.error]!);
    if (r.error === 'too_large') throw new SpeechProviderError('too_large', 'speech provider answer too large');
    if (r.error === 'timeout' || r.error === 'connect_timeout') throw new SpeechProviderError('timeout', 'speech provider timed out');
    throw new SpeechProviderError('network', r.error);
  }
  const status = r.status ?? 0;
  if (status < 200 || status > 299) throw new SpeechProviderError('http_status', `speech provider answered ${status}`, status);
  return { status, contentType: r.contentType ?? '', body: r.body ?? Buffer.alloc(0) };
}
