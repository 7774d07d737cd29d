import { egressPost, RESPONSE_READ_LIMIT } from '../../../lib/egress-http';
import { bearerOf, type ResolvedProvider, type SmsAdapter, type SmsSendContext, type SmsSendResult } from './adapter';

/**
 * The generic `http` provider protocol: POST `<base_url>/messages` with JSON `{to, from, text,
 * reference}` (reference: the ledger row id, also sent as Idempotency-Key so a retried send is one
 * message), the credential resolution chose as a bearer (none: no Authorization header). 2xx with
 * `{id}` or `{message_id}` is accepted; any other answer is a refusal, except 5xx, which like a
 * network fault leaves the outcome unknown and throws.
 */

/**
 * The provider's endpoint fails the egress check at send time (a name re-pointed at a private
 * address since it was stored, or an endpoint that is not https 443). The send path maps it to
 * 422 sms_provider_base_url_rejected, and branches on the name.
 */
export class SmsProviderBaseUrlRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmsProviderBaseUrlRejected';
  }
}

/** No answer, or one that leaves the message's fate unknown (5xx): the caller must not assume either way. */
export class SmsProviderUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmsProviderUnavailable';
  }
}

/** `<base>/<path>` whether or not the stored base ends in a slash. */
export function endpointOf(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export interface ProviderAnswer {
  status: number;
  /** The answer parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** POSTs JSON under the egress rules; only an answer with a status below 500 comes back. */
export async function postProviderJson(url: string, headers: Record<string, string>, body: unknown, context: SmsSendContext): Promise<ProviderAnswer> {
  const res = await egressPost(url, { 'content-type': 'application/json', accept: 'application/json', ...headers }, JSON.stringify(body), {
    allowlist: context.allowlist,
    resolve: context.resolver,
    keepBytes: RESPONSE_READ_LIMIT,
  });
  if (res.error === 'egress_refused') throw new SmsProviderBaseUrlRejected('the provider endpoint fails the egress check (https 443 to public addresses only)');
  if (res.status === null) throw new SmsProviderUnavailable(`no answer from the provider (${res.error ?? 'unknown'})`);
  if (res.status >= 500) throw new SmsProviderUnavailable(`the provider answered ${res.status}`);
  let json: unknown;
  try {
    json = res.excerpt ? JSON.parse(res.excerpt) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

const asRecord = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const nonEmpty = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null);

function httpSendResult(answer: ProviderAnswer): SmsSendResult {
  const body = asRecord(answer.json);
  if (answer.status >= 200 && answer.status < 300) {
    const id = nonEmpty(body.id) ?? nonEmpty(body.message_id);
    if (id) return { accepted: true, providerMessageId: id };
    return { accepted: false, errorCode: 'invalid_provider_answer', detail: `the provider answered ${answer.status} without an id or message_id` };
  }
  const code = nonEmpty(body.error_code) ?? nonEmpty(body.code) ?? nonEmpty(body.error) ?? `http_${answer.status}`;
  const detail = nonEmpty(body.message) ?? nonEmpty(body.detail) ?? `the provider answered ${answer.status}`;
  return { accepted: false, errorCode: code.slice(0, 100), detail: detail.slice(0, 500) };
}

export const httpAdapter: SmsAdapter = {
  name: 'http',
  async send(provider: ResolvedProvider, request, context) {
    if (!provider.baseUrl) {
      // The http protocol has no public default endpoint: without one the message cannot go anywhere checked.
      throw new SmsProviderBaseUrlRejected('the http provider has no base_url and the deployment sets no SMS_PROVIDER_BASE_URL');
    }
    const headers: Record<string, string> = { 'idempotency-key': request.messageId };
    const bearer = bearerOf(provider, context);
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const answer = await postProviderJson(
      endpointOf(provider.baseUrl, 'messages'),
      headers,
      { to: request.to, from: request.from, text: request.body, reference: request.messageId },
      context,
    );
    return httpSendResult(answer);
  },
};
