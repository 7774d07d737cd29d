import { bearerOf, type SmsAdapter, type SmsSendResult } from './adapter';
import { endpointOf, postProviderJson, type ProviderAnswer } from './http.adapter';

/**
 * carrier_a: its provider's v2 REST API. POST `<base>/v2/messages` with `Authorization: Bearer
 * <api key>` (the credential resolution chose; none: no header) and `{from, to, text}`; an
 * accepted message answers `{data: {id}}`, a refusal `{errors: [{code, title, detail}]}`. The base
 * is the provider's base_url, else the public API.
 */

export const CARRIER_A_DEFAULT_BASE_URL = 'https://api.telnyx.com';

const asRecord = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const nonEmpty = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null);

function carrierASendResult(answer: ProviderAnswer): SmsSendResult {
  const body = asRecord(answer.json);
  if (answer.status >= 200 && answer.status < 300) {
    const id = nonEmpty(asRecord(body.data).id);
    if (id) return { accepted: true, providerMessageId: id };
    return { accepted: false, errorCode: 'invalid_provider_answer', detail: `the provider answered ${answer.status} without data.id` };
  }
  const first = asRecord(Array.isArray(body.errors) ? (body.errors as unknown[])[0] : undefined);
  const code = nonEmpty(first.code) ?? `http_${answer.status}`;
  const detail = nonEmpty(first.detail) ?? nonEmpty(first.title) ?? `the provider answered ${answer.status}`;
  return { accepted: false, errorCode: code.slice(0, 100), detail: detail.slice(0, 500) };
}

export const carrierAAdapter: SmsAdapter = {
  name: 'carrier_a',
  async send(provider, request, context) {
    const headers: Record<string, string> = {};
    const bearer = bearerOf(provider, context);
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const body: Record<string, string> = { to: request.to, text: request.body };
    if (request.from !== null) body.from = request.from;
    const answer = await postProviderJson(endpointOf(provider.baseUrl ?? CARRIER_A_DEFAULT_BASE_URL, 'v2/messages'), headers, body, context);
    return carrierASendResult(answer);
  },
};
