import { IANA_TIME_ZONES, NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { E164_RE } from '../../lib/phone';
import { cursorParam, limitParam } from '../../lib/pagination';
import {
  ABANDONMENT_THRESHOLD,
  CALLER_IDS_MAX,
  CAMPAIGN_STATES,
  CAMPAIGN_TYPES,
  CONSULT_EXPOSE,
  CONSULT_FACTORS,
  CONSULT_MAX_ATTEMPTS,
  DIAL_RATIO,
  DOB_FORMATS,
  IVR_ACTIONS,
  IVR_MAX_DEPTH,
  IVR_MAX_NODES,
  MERGE_VARIABLES,
  NAME_MAX,
  SMS_BODY_MAX,
  TIME_OF_DAY_RE,
  TTS_PROMPT_MAX,
} from './campaign.rules';

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

const IVR_DESCRIPTION = `IVR menu tree; \`{}\` = none. Flat: \`{"1": {"action": "transfer_agent"}, "9": {"action": "optout"}}\` (keys are
single DTMF keys 0-9, *, #; the prompt is tts_prompt). Nested: \`{"prompt": "Press 1 ...", "entries": {"1": {"action": "transfer_agent"},
"2": {"submenu": {"prompt": "...", "entries": {...}}}}}\`. An entry is exactly \`{"action": ${IVR_ACTIONS.join(' | ')}}\` or exactly
\`{"submenu": <nested menu>}\`; a submenu always has prompt and entries; prompts are non-blank, at most 2000 characters; every
menu maps at least one key. Depth at most ${IVR_MAX_DEPTH} (the top menu is depth 1); at most ${IVR_MAX_NODES} nodes, counting every menu (top and
submenus) and every action. Any violation is 400 invalid and nothing is stored.`;

const CONSULT_DESCRIPTION = `Consult (account self-service) configuration, a closed schema; \`{}\` = disabled. When not empty, \`factor\` is
required (${CONSULT_FACTORS.join(', ')}); optional \`max_attempts\` integer 1..10; optional \`expose\`, distinct values of
${CONSULT_EXPOSE.join(', ')}; optional \`factor_opts\` {\`length\` positive integer, \`dob_format\` ${DOB_FORMATS.join(' | ')}}. Any other key
(at either level), null for a key, or a bad value is 400 invalid.`;

const SMS_BODY_DESCRIPTION = `Required for sms_blast (400 invalid without it, also when a patch makes the type sms_blast or clears the
body). When set (on any campaign type), at most ${SMS_BODY_MAX} characters and it must carry the STOP opt-out notice, case-insensitive: the keyword STOP
or ALTO (optionally quoted) either right after an instruction verb (reply, text, txt, send, respond, answer, responde, responda,
contesta, conteste, envía, envíe, escribe, escriba, manda, mande; optionally "with"/"con" or a colon) as in "Reply STOP" or
"Responde ALTO", or followed by to/para and an opt-out purpose (opt out, unsubscribe, end, cancel, quit, stop, cancelar, salir,
no recibir, dejar de recibir, darse de baja) as in "STOP to opt out" or "ALTO para cancelar". A bare "stop" in running text is
not a notice. Merge variables are exactly ${MERGE_VARIABLES.map((v) => `\`{{${v}}}\``).join(', ')} (no inner spaces); any other
\`{{...}}\` or an unbalanced \`{{\`/\`}}\` is 400 invalid.`;

// ---------------------------------------------------------------------------------------------
// Read shape

const ConsultConfigSchema = z
  .object({
    factor: z.enum(CONSULT_FACTORS).optional(),
    max_attempts: z.number().int().min(1).max(10).optional(),
    expose: z.array(z.enum(CONSULT_EXPOSE)).optional(),
    factor_opts: z
      .object({ length: z.number().int().min(1).optional(), dob_format: z.enum(DOB_FORMATS).optional() })
      .optional(),
  })
  .openapi('ConsultConfig', { description: CONSULT_DESCRIPTION });

const decimalString = (description: string, example: string) => z.string().nullable().openapi({ description, example });

export const CampaignSchema = z
  .object({
    id: uuid,
    tenant_id: uuid,
    name: z.string(),
    state: z.enum(CAMPAIGN_STATES),
    campaign_type: z.enum(CAMPAIGN_TYPES),
    channel: z.enum(['voice', 'sms']).openapi({ description: 'Derived from campaign_type: sms for sms_blast, voice otherwise' }),
    sms_body: z.string().nullable(),
    abandonment_threshold: decimalString('Decimal string, a fraction 0..1', '0.03'),
    min_dial_ratio: decimalString('Decimal string, lines per agent', '1.2'),
    max_dial_ratio: decimalString('Decimal string, lines per agent', '3'),
    calling_window_start: z.string().nullable().openapi({ description: 'HH:MM:SS', example: '09:00:00' }),
    calling_window_end: z.string().nullable().openapi({ description: 'HH:MM:SS', example: '20:00:00' }),
    default_timezone: z.string().nullable().openapi({ example: 'America/New_York' }),
    calling_window_destination_local: z.boolean(),
    record_calls: z.boolean(),
    ai_voice: z.boolean(),
    amd_enabled: z.boolean().nullable().openapi({ description: 'null = inherit the type profile' }),
    optout_digit: z.string().nullable(),
    tts_prompt: z.string().nullable(),
    ivr_menu: z.record(z.string(), z.unknown()).openapi({ description: IVR_DESCRIPTION }),
    deferred_bridge: z.boolean(),
    consult_config: ConsultConfigSchema,
    carrier: z.string().nullable().openapi({ format: 'uuid', description: "The carrier (trunk) the campaign's calls go out through; null = the deployment default gateway" }),
    caller_ids: z.array(z.string()).openapi({ description: 'Legacy E.164 round-robin pool, used when caller_id_pool is empty' }),
    caller_id_pool: z.array(uuid).openapi({ description: "DID registry ids of the tenant's own registry" }),
    ai_agent_id: uuid.nullable().openapi({ description: 'The AI agent that speaks on an ai_voice campaign; null = none' }),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('Campaign');

export const CampaignEnvelope = z.object({ campaign: CampaignSchema });
export const ListCampaignsQuery = z.object({ limit: limitParam(100, 1000), cursor: cursorParam });
export const CampaignList = z
  .object({ campaigns: z.array(CampaignSchema), next_cursor: z.string().nullable() })
  .openapi('CampaignList');

// ---------------------------------------------------------------------------------------------
// Write shape. JSON types are checked here (400 bad_request); domain rules by campaign.rules.ts
// (400 invalid).

const writeFields = {
  name: z.string().openapi({ pattern: NON_BLANK_PATTERN, maxLength: NAME_MAX, description: `Unique per tenant, case-insensitive (409); trimmed; 1 to ${NAME_MAX} characters` }),
  campaign_type: z.string().openapi({
    enum: [...CAMPAIGN_TYPES],
    description: 'Default predictive. A value outside the vocabulary is 400 invalid',
  }),
  sms_body: z.string().nullable().openapi({ pattern: NON_BLANK_PATTERN, maxLength: SMS_BODY_MAX, description: SMS_BODY_DESCRIPTION }),
  abandonment_threshold: z.number().nullable().openapi({
    minimum: ABANDONMENT_THRESHOLD.min,
    maximum: ABANDONMENT_THRESHOLD.max,
    description: `A fraction from ${ABANDONMENT_THRESHOLD.min} to ${ABANDONMENT_THRESHOLD.max} (0.03 = 3 %), at most ${ABANDONMENT_THRESHOLD.scale} decimal places (never rounded); rendered as a decimal string`,
    example: 0.03,
  }),
  min_dial_ratio: z.number().nullable().openapi({
    minimum: DIAL_RATIO.min,
    maximum: DIAL_RATIO.max,
    description: `From ${DIAL_RATIO.min} to ${DIAL_RATIO.max}, at most ${DIAL_RATIO.scale} decimal places; not above max_dial_ratio; rendered as a decimal string`,
    example: 1.2,
  }),
  max_dial_ratio: z.number().nullable().openapi({
    minimum: DIAL_RATIO.min,
    maximum: DIAL_RATIO.max,
    description: `From ${DIAL_RATIO.min} to ${DIAL_RATIO.max}, at most ${DIAL_RATIO.scale} decimal places; not below min_dial_ratio; rendered as a decimal string`,
    example: 3,
  }),
  calling_window_start: z.string().nullable().openapi({
    pattern: TIME_OF_DAY_RE.source,
    description: 'HH:MM:SS (00:00:00 to 23:59:59). Start and end are set together (both or neither) and start is before end; otherwise 400 invalid',
    example: '09:00:00',
  }),
  calling_window_end: z.string().nullable().openapi({ pattern: TIME_OF_DAY_RE.source, description: 'HH:MM:SS, after calling_window_start', example: '20:00:00' }),
  default_timezone: z.string().nullable().openapi({ enum: [...IANA_TIME_ZONES, null], description: 'IANA zone (400 invalid otherwise)', example: 'America/New_York' }),
  calling_window_destination_local: z.boolean(),
  record_calls: z.boolean(),
  ai_voice: z.boolean(),
  amd_enabled: z.boolean().nullable(),
  optout_digit: z.unknown().openapi({
    type: ['string', 'null'],
    pattern: '^[0-9*#]?$',
    description: 'Exactly one DTMF key (0-9, *, #). Empty string or null clears. Anything else, whatever its JSON type, is 400 invalid',
    example: '9',
  }),
  tts_prompt: z.string().nullable().openapi({
    maxLength: TTS_PROMPT_MAX,
    description: `At most ${TTS_PROMPT_MAX} characters (400 invalid); empty, whitespace-only or null clears`,
  }),
  ivr_menu: z.record(z.string(), z.unknown()).openapi({ description: `${IVR_DESCRIPTION} Not an object: 400 bad_request.` }),
  deferred_bridge: z.boolean(),
  consult_config: z
    .record(z.string(), z.unknown())
    .openapi({
      // The closed schema the rules check, published: {} or an object with factor.
      properties: {
        factor: { type: 'string', enum: [...CONSULT_FACTORS] },
        max_attempts: { type: 'integer', minimum: CONSULT_MAX_ATTEMPTS.min, maximum: CONSULT_MAX_ATTEMPTS.max },
        expose: { type: 'array', items: { type: 'string', enum: [...CONSULT_EXPOSE] }, uniqueItems: true },
        factor_opts: {
          type: 'object',
          properties: { length: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, dob_format: { type: 'string', enum: [...DOB_FORMATS] } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
      anyOf: [{ maxProperties: 0 }, { required: ['factor'] }],
      description: `${CONSULT_DESCRIPTION} Not an object: 400 bad_request.`,
      example: { factor: 'dob', max_attempts: 3, expose: ['balance'] },
    }),
  carrier: z.string().nullable().openapi({
    format: 'uuid',
    description:
      "The trunk the campaign's calls go out through: the id of one of the tenant's active carriers (its own, or an account-wide one it inherits), " +
      'reached on the switch as gateway `carrier-<id>`; null = the deployment default gateway. Anything else, another tenant\'s carrier and a disabled or ' +
      "retired one are 400 `invalid` naming carrier. A run's `gateway` option overrides it. The trunk is read again at every dial: once the carrier is " +
      'disabled or retired, each call recorded for it is closed `not_placed` with hangup_cause TRUNK_DISABLED or TRUNK_RETIRED and nothing rings',
  }),
  caller_ids: z.array(z.string().openapi({ pattern: E164_RE.source })).openapi({
    maxItems: CALLER_IDS_MAX,
    uniqueItems: true,
    description: `Distinct E.164 numbers, at most ${CALLER_IDS_MAX} (400 invalid otherwise); a number that is an active DID of another tenant is 400 invalid. An sms_blast campaign with an empty caller_id_pool texts from these, so each must be an active DID of the tenant (400 invalid otherwise)`,
    example: ['+12125550100'],
  }),
  caller_id_pool: z.array(z.string().openapi({ format: 'uuid' })).openapi({
    maxItems: CALLER_IDS_MAX,
    uniqueItems: true,
    description: `Distinct ids of DIDs in the tenant's registry, any status, at most ${CALLER_IDS_MAX}; an unknown, foreign or malformed id is 400 invalid. An sms_blast campaign texts from the pool's active DIDs (at least one must be active when the pool is written, 400 invalid otherwise), or from caller_ids when the pool is empty; with neither it is 400 invalid`,
  }),
  ai_agent_id: z.string().nullable().openapi({
    format: 'uuid',
    description: `The AI agent of an ai_voice campaign (any type may hold one; only ai_voice uses it). It must be an agent of the tenant that is not
retired: a malformed, unknown, foreign or retired id is 400 invalid. null clears. Starting or resuming an ai_voice campaign needs one
(409 otherwise); whether it is live is read on every dial tick`,
  }),
};

type WriteFields = typeof writeFields;
const optionalFields = Object.fromEntries(Object.entries(writeFields).map(([k, v]) => [k, v.optional()])) as {
  [K in keyof WriteFields]: z.ZodOptional<WriteFields[K]>;
};

const WRITE_NOTE =
  'Unknown keys, including the read-only id, tenant_id, state, channel, created_at and updated_at, are 400 bad_request naming the key; a wrong JSON type is 400 bad_request; a domain-rule violation is 400 invalid naming the field.';

export const CreateCampaignBody = z
  .strictObject({ ...optionalFields, name: writeFields.name })
  .openapi('CreateCampaign', { description: `Only name is required; omitted fields take their defaults. ${WRITE_NOTE}` });

export const PatchCampaignBody = z.strictObject(optionalFields).openapi('PatchCampaign', {
  description: `Absent keys are unchanged; null clears a nullable field; the rules between fields are checked on the result. ${WRITE_NOTE}`,
});
