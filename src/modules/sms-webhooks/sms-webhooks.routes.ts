import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { bodySizeLimit } from '../../lib/http-middleware';
import { createRouter, errorResponses, jsonContent, z } from '../../lib/openapi';
import { handleProviderWebhook, type WebhookEndpoint } from './sms-webhooks.service';

/** SPEC "Limits": provider webhook body 1 MB (decimal, as the SPEC writes MiB where it means it). */
export const PROVIDER_WEBHOOK_MAX_BYTES = 1_000_000;

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const ProviderParam = z.object({
  provider_id: z
    .string()
    .regex(UUID_RE)
    .openapi({ param: { name: 'provider_id', in: 'path' }, format: 'uuid', example: '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10' }),
});

const WebhookAck = z
  .object({
    status: z.enum(['ok', 'duplicate', 'ignored']).openapi({
      description: 'ok: recorded; duplicate: a replay, nothing added; ignored: verified but not attributable or not understood',
    }),
  })
  .openapi('SmsWebhookAck');

const AUTH = `Public: no bearer. The provider authenticates each request by a signature over the raw body, verified before the body
is parsed. http and mock providers: \`x-dd-signature\` = lowercase hex HMAC-SHA256 of the raw body keyed with the provider's
webhook secret. carrier_a: \`telnyx-signature-ed25519\` (base64) = Ed25519 over \`<telnyx-timestamp>|<raw body>\`, verified with
the provider's public key; a \`telnyx-timestamp\` (unix seconds) more than 5 minutes from now is refused.`;

const ORDER = `Checks in order: 413 \`payload_too_large\` over ${PROVIDER_WEBHOOK_MAX_BYTES} bytes; 404 \`not_found\` for a malformed provider
id; 401 \`unauthorized\` when no signature header is present (before any database access); 404 \`not_found\` for an unknown,
disabled or retired provider; 401 when the provider has no webhook secret or the signature is bad, stale or missing for its
scheme. A verified body that is not understood, or that cannot be attributed, is 200 \`ignored\` (retrying cannot help).
500 \`internal\`: the ledger write failed and nothing was recorded; retrying is safe.`;

function route(endpoint: WebhookEndpoint, summary: string, description: string) {
  return createRoute({
    method: 'post',
    path: `/webhooks/sms/{provider_id}/${endpoint}`,
    tags: ['SMS provider webhooks'],
    middleware: [bodySizeLimit(PROVIDER_WEBHOOK_MAX_BYTES)] as const,
    summary,
    description: `${description}\n\n${AUTH}\n\n${ORDER}`,
    request: { params: ProviderParam },
    responses: { 200: jsonContent(WebhookAck, 'Acknowledged'), ...errorResponses(401, 404, 413, 500) },
  });
}

export function smsWebhookRoutes(deps: AppDeps) {
  const app = createRouter();
  for (const endpoint of ['dlr', 'inbound'] as const) {
    const description =
      endpoint === 'dlr'
        ? `A delivery receipt: http/mock \`{"message_id", "status": "delivered"|"undelivered"|"failed", "error_code"?, "timestamp"?}\`;
carrier_a \`message.finalized\` envelope. Appends the transition (status, error_code, occurred_at from the body) to the outbound
message the provider message id names; a replayed receipt is \`duplicate\`, an unknown message id \`ignored\`.`
        : `A consumer's text: http/mock \`{"message_id", "from", "to", "text", "timestamp"?}\`; carrier_a \`message.received\`
envelope. Recorded as a \`received\` ledger row (a replayed provider message id is \`duplicate\`). A whole-message keyword
(case-insensitive, punctuation-tolerant, English and Spanish) acts: STOP, STOPALL, UNSUBSCRIBE, CANCEL, QUIT, END, REVOKE, OPT OUT,
REMOVE, ALTO, PARAR, CANCELAR, BAJA... list the number internally (source optout_keyword), revoke its SMS consents and announce
\`sms.optout\`; START, UNSTOP, COMENZAR, INICIAR lift only that keyword listing and re-grant consents a keyword revoked; HELP,
INFO, AYUDA are recorded. STOP-family, START-family and HELP keywords get one reply (a confirmation or the help text), through
the provider the keyword came in by, in Spanish for a Spanish keyword and in English otherwise. Any other text is announced as \`sms.received\` (masked on the live floor). An inbound message to an
account-wide provider belongs to the account's tenant that last texted the number through that provider, and is \`ignored\`
when there is none.`;
    app.openapi(route(endpoint, endpoint === 'dlr' ? 'SMS delivery receipt from a provider' : 'Inbound SMS from a provider', description), async (c) => {
      const status = await handleProviderWebhook(deps, {
        providerId: c.req.valid('param').provider_id,
        endpoint,
        header: (name) => c.req.header(name),
        readBody: async () => new Uint8Array(await c.req.arrayBuffer()),
        log: c.get('logger'),
      });
      return c.json({ status }, 200);
    });
  }
  return app;
}
