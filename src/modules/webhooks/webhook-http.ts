import { CONNECT_TIMEOUT_MS, egressPost, RESPONSE_READ_LIMIT, TOTAL_TIMEOUT_MS, type EgressPostOptions, type EgressPostResult } from '../../lib/egress-http';

/**
 * One HTTP attempt of an outbound webhook (SPEC "Limits", outbound delivery): 5 s to connect,
 * 15 s in all, redirects never followed (a 3xx is an answer like any other non-2xx: following one
 * would let a receiver point the signed body at an address nobody checked), the response read up
 * to 64 KiB and its first 1 KiB kept. The client itself is src/lib/egress-http.ts.
 */

export { CONNECT_TIMEOUT_MS, RESPONSE_READ_LIMIT, TOTAL_TIMEOUT_MS };
export const EXCERPT_BYTES = 1024;

export type PostResult = EgressPostResult;
export type PostOptions = Omit<EgressPostOptions, 'keepBytes'>;

/** Never throws: every failure is a result with `error` set (see egressPost). */
export function postWebhook(rawUrl: string, headers: Record<string, string>, body: string | Buffer, options: PostOptions): Promise<PostResult> {
  return egressPost(rawUrl, headers, body, { ...options, keepBytes: EXCERPT_BYTES });
}
