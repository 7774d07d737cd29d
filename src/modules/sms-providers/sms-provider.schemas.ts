import { NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { SMS_ADAPTERS } from '../sms/adapters/adapter';
import { API_KEY_MAX_CHARS, BASE_URL_MAX_CHARS, NAME_MAX_CHARS, SECRET_MAX_CHARS, SMS_PROVIDER_STATUSES, SMS_REGIONS } from './sms-provider.rules';

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

export const SmsProviderSchema = z
  .object({
    id: uuid,
    account_id: uuid,
    tenant_id: uuid.nullable().openapi({ description: 'null for an account-wide provider (scope empresa), inherited by every tenant of the account' }),
    scope: z.enum(['empresa', 'sede']).openapi({ description: 'Derived from tenant_id: empresa when it is null, else sede. Immutable.' }),
    adapter: z.enum(SMS_ADAPTERS).openapi({ description: 'The provider protocol; carrier_a verifies its webhooks with an Ed25519 public-key signature' }),
    region: z.enum(SMS_REGIONS),
    name: z.string(),
    base_url: z.string().nullable().openapi({ description: 'null: the deployment endpoint of the adapter (SMS_PROVIDER_BASE_URL)', example: 'https://sms.example.com/api' }),
    has_secret: z.boolean().openapi({ description: 'Whether a webhook secret is stored; the secret itself is write-only and never shown' }),
    has_api_key: z.boolean().openapi({ description: "Whether the provider account's own API key is stored; the key itself is write-only and never shown" }),
    status: z.enum(SMS_PROVIDER_STATUSES),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('SmsProvider');

export const SmsProviderEnvelope = z.object({ sms_provider: SmsProviderSchema }).openapi('SmsProviderEnvelope');
export const SmsProviderList = z.object({ sms_providers: z.array(SmsProviderSchema) }).openapi('SmsProviderList');

const fields = {
  adapter: z.enum(SMS_ADAPTERS),
  region: z.enum(SMS_REGIONS),
  name: z.string().openapi({ pattern: NON_BLANK_PATTERN, maxLength: NAME_MAX_CHARS, description: `1 to ${NAME_MAX_CHARS} characters after trimming (400 invalid otherwise)`, example: 'Main US route' }),
  base_url: z
    .string()
    .nullable()
    .openapi({
      description: `Blank or null: the deployment endpoint. Otherwise https on port 443, no credentials, a host name (not an IP literal, an internal or a cloud-metadata name) whose every address is public, at most ${BASE_URL_MAX_CHARS} characters; a refusal is 422 unprocessable naming base_url and the rule. Origins in EGRESS_ALLOWLIST skip the https, port and address rules. Checked again at every send on the address connected to (422 sms_provider_base_url_rejected there).`,
      example: 'https://sms.example.com/api',
    }),
  webhook_secret: z
    .string()
    .nullable()
    .openapi({
      pattern: NON_BLANK_PATTERN,
      maxLength: SECRET_MAX_CHARS,
      description: `Write-only, encrypted at rest, not blank, at most ${SECRET_MAX_CHARS} characters; null removes it. For http and mock: the HMAC key of the provider's webhooks. For carrier_a: the provider's Ed25519 public key, as the 32 raw bytes in base64 (as the provider's portal shows it), as SPKI DER in base64, or as a PEM PUBLIC KEY block; anything else is 422 unprocessable (the adapter decides the form).`,
    }),
  api_key: z
    .string()
    .nullable()
    .openapi({
      pattern: '^[!-~]+$',
      maxLength: API_KEY_MAX_CHARS,
      description: `Write-only, encrypted at rest: the provider account's own API key, sent as \`Authorization: Bearer <api_key>\` by the http and carrier_a adapters; never returned (has_api_key says whether one is stored), never in the audit log. 1 to ${API_KEY_MAX_CHARS} printable ASCII characters without spaces (400 invalid otherwise); null removes it. Without one, a provider with its own base_url sends no Authorization header: the deployment's key goes only to the deployment's endpoint (blank base_url, same adapter as the deployment).`,
    }),
  status: z.enum(SMS_PROVIDER_STATUSES).openapi({ description: 'active or disabled (retired only through the retire route, and final)' }),
};

const NOTE = 'Other keys (tenant_id and account_id included: both come from the credential) are 400 bad_request naming the key.';

export const CreateSmsProviderBody = z
  .strictObject({
    adapter: fields.adapter,
    region: fields.region,
    name: fields.name,
    base_url: fields.base_url.optional(),
    webhook_secret: fields.webhook_secret.optional(),
    api_key: fields.api_key.optional(),
    status: fields.status.optional().openapi({ enum: SMS_PROVIDER_STATUSES.filter((s) => s !== 'retired'), description: 'active (default) or disabled; retired is 400 invalid' }),
    scope: z.enum(['sede', 'empresa']).optional().openapi({
      description: 'sede (default): this tenant only. empresa: account-wide, inherited by every tenant of the account; needs a ddu_ session of an account_admin user (403 forbidden otherwise, dd_ keys included). Immutable.',
    }),
  })
  .openapi('CreateSmsProvider', { description: NOTE });

export const PatchSmsProviderBody = z
  .strictObject({
    adapter: fields.adapter.optional(),
    region: fields.region.optional(),
    name: fields.name.optional(),
    base_url: fields.base_url.optional(),
    webhook_secret: fields.webhook_secret.optional(),
    api_key: fields.api_key.optional(),
    status: fields.status.optional(),
    scope: z.unknown().optional().openapi({ not: {}, description: 'Immutable: present with any value is 400 bad_request' }),
  })
  .openapi('PatchSmsProvider', { description: `Absent keys are unchanged. ${NOTE}` });

export type CreateSmsProviderInput = z.infer<typeof CreateSmsProviderBody>;
export type PatchSmsProviderInput = z.infer<typeof PatchSmsProviderBody>;
