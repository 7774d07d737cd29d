import { IANA_TIME_ZONES, NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { E164_RE } from '../../lib/phone';
import { SMS_BODY_MAX } from '../campaigns/campaign.rules';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const SMS_STATUSES = ['queued', 'sent', 'delivered', 'undelivered', 'failed', 'received'] as const;
export const SMS_DIRECTIONS = ['outbound', 'inbound'] as const;
/** client_ref is an idempotency key the client chooses: long enough for any uuid or composite key. */
export const CLIENT_REF_MAX = 200;

function isIanaZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const uuid = (description: string) => z.string().regex(UUID_RE, 'must be a uuid').openapi({ format: 'uuid', description });

export const SendSmsBody = z
  .strictObject({
    to: z.string().regex(E164_RE, 'must be an E.164 number').openapi({ description: 'Destination, E.164', example: '+13035550123' }),
    body: z
      .string()
      .refine((s) => s.trim() !== '', 'must not be empty')
      // Code points, as the campaign sms_body limit counts them: ten concatenated GSM-7 segments, a sane upper bound.
      .refine((s) => [...s].length <= SMS_BODY_MAX, `must be at most ${SMS_BODY_MAX} characters`)
      .openapi({ pattern: NON_BLANK_PATTERN, maxLength: SMS_BODY_MAX, description: `The text, 1 to ${SMS_BODY_MAX} characters (Unicode code points), not blank; sent as-is (merge variables are not expanded here)` }),
    from: z.string().regex(E164_RE, 'must be an E.164 number').nullable().optional().openapi({
      description: "Sender number, E.164: one of the tenant's active DIDs (422 unprocessable otherwise, after the client_ref replay check); omitted or null: the provider's default sender",
    }),
    client_ref: z
      .string()
      .min(1)
      .max(CLIENT_REF_MAX)
      .optional()
      .openapi({ description: `Idempotency key (1 to ${CLIENT_REF_MAX} characters), unique per tenant; default a fresh uuid. A replay answers the existing message with duplicate: true` }),
    debt_id: uuid('The debt the text is about: consent is per (debt, number, channel), so a send without one is refused by the engine (tcpa_no_consent)')
      .nullable()
      .optional(),
    campaign_id: uuid('A campaign of this tenant (422 unprocessable otherwise)').nullable().optional(),
    consumer_ref: z.string().min(1).max(200).nullable().optional().openapi({ description: 'Free reference of the consumer, kept on the ledger row' }),
    timezone: z
      .string()
      .refine(isIanaZone, 'must be an IANA time zone')
      .nullable()
      .optional()
      .openapi({ enum: [...IANA_TIME_ZONES], description: 'Destination IANA zone for quiet hours; omitted: the contact zone, else the number prefix zones (unresolvable is blocked)', example: 'America/Denver' }),
  })
  .openapi('SmsSend');
export type SendSmsInput = z.infer<typeof SendSmsBody>;

export const SmsMessageSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    direction: z.enum(SMS_DIRECTIONS),
    status: z.enum(SMS_STATUSES),
    from_e164: z.string().nullable(),
    to_e164: z.string(),
    body_preview: z.string().nullable().openapi({ description: 'The first 40 characters of the body' }),
    segments: z.number().int().nullable(),
    client_ref: z.string().nullable(),
    provider_id: z.string().nullable().openapi({ format: 'uuid', description: 'null: the deployment provider' }),
    provider_message_id: z.string().nullable(),
    campaign_id: z.string().nullable().openapi({ format: 'uuid' }),
    debt_id: z.string().nullable().openapi({ format: 'uuid' }),
    occurred_at: z.string().openapi({ format: 'date-time' }),
    corrects_id: z.string().nullable().openapi({ format: 'uuid', description: 'null on an original; the original on a transition' }),
    recorded_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('SmsMessage');

export const SmsMessageViewSchema = SmsMessageSchema.extend({
  body: z.string().nullable(),
  encoding: z.enum(['gsm7', 'ucs2']).nullable(),
  consumer_ref: z.string().nullable(),
  cost_usd: z.number().nullable().openapi({ description: 'What the message was charged (its sent transition); null until accepted' }),
  error_code: z.string().nullable().openapi({ description: 'The latest failure code (provider refusal, provider_unreachable, base_url_rejected)' }),
  compliance_snapshot: z.record(z.string(), z.unknown()).nullable(),
  timestamps: z.record(z.string(), z.string()).openapi({ description: 'When the message reached each status (occurred_at of the row)' }),
  transitions: z.array(SmsMessageSchema).openapi({ description: 'The transition rows (corrects_id = id), oldest first' }),
}).openapi('SmsMessageView');

export const SendSmsResult = z
  .object({ sms_message: SmsMessageViewSchema.nullable(), duplicate: z.boolean() })
  .openapi('SmsSendResult');

export const SmsMessageEnvelope = z.object({ sms_message: SmsMessageViewSchema }).openapi('SmsMessageEnvelope');

export const ListSmsQuery = z.object({
  direction: z.enum(SMS_DIRECTIONS).optional(),
  status: z.enum(SMS_STATUSES).optional(),
  campaign_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid' }),
  debt_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid' }),
  limit: limitParam(100, 1000),
  cursor: cursorParam,
});
export type ListSmsFilters = z.infer<typeof ListSmsQuery>;

export const SmsMessagePage = z
  .object({ sms_messages: z.array(SmsMessageSchema), next_cursor: z.string().nullable() })
  .openapi('SmsMessagePage');
