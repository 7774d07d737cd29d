import { EVENT_CATALOG } from '../../lib/events';
import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { DISABLED_BY_API, URL_MAX_CHARS, WEBHOOK_SECRET_PREFIX } from './webhook.rules';

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

export const WebhookSchema = z
  .object({
    id: uuid,
    url: z.string().openapi({ description: 'As stored: the WHATWG-normalized form of the registered URL', example: 'https://hooks.example.com/dialer' }),
    events: z.array(z.enum(EVENT_CATALOG)).openapi({ description: 'The subscribed events, in the order they were given' }),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().openapi({
      description: `Why a disabled endpoint receives nothing: \`${DISABLED_BY_API}\` (DELETE or PATCH enabled false) or the delivery side's reason (the receiver answered 410 Gone); null while enabled`,
      example: null,
    }),
    secret_hint: z.string().openapi({ description: 'The last 4 characters of the current signing secret (the secret itself is only shown when minted)', example: 'x9Qa' }),
    previous_secret_expires_at: dateTime.nullable().openapi({
      description: 'Until when the secret retired by the last rotation still signs deliveries (X-DD-Signature-Previous); null before any rotation',
    }),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('Webhook');

export const WebhookEnvelope = z.object({ webhook: WebhookSchema });

const secret = z.string().openapi({
  description: `The signing secret (\`${WEBHOOK_SECRET_PREFIX}\` then 43 base64url characters, 256 random bits). Shown only in this response: store it now. Deliveries carry \`X-DD-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with this whole string>\`.`,
  example: `${WEBHOOK_SECRET_PREFIX}3q2-EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEx9Qa`,
});

export const WebhookWithSecret = z.object({ webhook: WebhookSchema, secret }).openapi('WebhookWithSecret');

export const ListWebhooksQuery = z.object({ limit: limitParam(100, 1000), cursor: cursorParam });
export const WebhookList = z.object({ webhooks: z.array(WebhookSchema), next_cursor: z.string().nullable() }).openapi('WebhookList');

const fields = {
  url: z.string().openapi({
    // The written form the rules below leave: https, a host name whose last label starts with a letter (no IP literal), port 443 or none.
    pattern: '^[Hh][Tt][Tt][Pp][Ss]://(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?(?::443)?(?:[/?#][^\\s\\u0000]*)?$',
    maxLength: URL_MAX_CHARS,
    description: `https on port 443 (none or :443), no credentials, a host name (not an IP literal, not an internal or cloud-metadata name) whose every A/AAAA address is public: loopback, private, CGNAT, link-local, unique-local, multicast, documentation and metadata addresses, and a name that does not resolve, are 400 invalid naming url. At most ${URL_MAX_CHARS} characters. Origins in the deployment's EGRESS_ALLOWLIST skip the https, port and address rules. Checked again on every delivery, on the address actually connected to.`,
    example: 'https://hooks.example.com/dialer',
  }),
  events: z.array(z.string().openapi({ enum: [...EVENT_CATALOG] })).openapi({
    minItems: 1,
    uniqueItems: true,
    description: `A non-empty, duplicate-free subset of the v1 event catalog (${EVENT_CATALOG.join(', ')}); an empty list, an unknown or a repeated name is 400 invalid`,
    example: ['call.ended', 'promise.recorded'],
  }),
};

const NOTE = 'Other keys (tenant_id and secret included: the tenant comes from the credential and the secret is always minted by the service) are 400 bad_request naming the key.';

export const CreateWebhookBody = z.strictObject(fields).openapi('CreateWebhook', { description: NOTE });

export const PatchWebhookBody = z
  .strictObject({
    url: fields.url.optional(),
    events: fields.events.optional(),
    enabled: z.boolean().optional().openapi({
      description: `true re-enables the endpoint and clears disabled_reason; false disables it with disabled_reason \`${DISABLED_BY_API}\` and cancels its pending deliveries`,
    }),
  })
  .openapi('PatchWebhook', { description: `Absent keys are unchanged. ${NOTE}` });

export type CreateWebhookInput = z.infer<typeof CreateWebhookBody>;
export type PatchWebhookInput = z.infer<typeof PatchWebhookBody>;
