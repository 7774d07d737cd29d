import { z } from '../../lib/openapi';
import { DEST_REF_MAX_CHARS, DEST_TYPES, NOTES_MAX_CHARS, ROUTE_STATUSES } from './inbound-route.rules';

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

export const InboundRouteSchema = z
  .object({
    id: uuid,
    tenant_id: uuid,
    e164: z.string().openapi({ description: 'Immutable', example: '+12125550100' }),
    dest_type: z.enum(DEST_TYPES),
    dest_ref: z.string().nullable(),
    recording: z.boolean(),
    ai_enabled: z.boolean(),
    status: z.enum(ROUTE_STATUSES),
    notes: z.string().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('InboundRoute');

export const InboundRouteEnvelope = z.object({ inbound_route: InboundRouteSchema }).openapi('InboundRouteEnvelope');
export const InboundRouteList = z.object({ inbound_routes: z.array(InboundRouteSchema) }).openapi('InboundRouteList');
export const InboundRouteProvisioned = z
  .object({
    inbound_route: InboundRouteSchema,
    status: z.enum(['provisioned', 'sbc_disabled']).openapi({
      description: 'provisioned: the SIP edge accepted. sbc_disabled: no edge is configured in this environment (SBC_API_URL unset); the intent is recorded only',
    }),
  })
  .openapi('InboundRouteProvisioned');

const fields = {
  dest_type: z.enum(DEST_TYPES).openapi({ description: 'agent, queue or ivr (another value is 400 bad_request)' }),
  dest_ref: z.string().nullable().openapi({
    description: `At most ${DEST_REF_MAX_CHARS} characters; blank or null is none. agent: the sip_extension of an active agent of the tenant (required). ivr: the id of a campaign of the tenant with an ivr_menu, or null for the default menu. queue: a free queue label. 422 unprocessable when the destination does not resolve`,
    example: '1001',
  }),
  recording: z.boolean().openapi({ description: 'Default false' }),
  ai_enabled: z.boolean().openapi({ description: 'Default false; true needs the tenant voice_ai_enabled (422 unprocessable otherwise)' }),
  notes: z.string().nullable().openapi({ description: `At most ${NOTES_MAX_CHARS} characters; empty or null clears` }),
};

const NOTE = 'Other keys (tenant_id and the rendered id, status, created_at, updated_at on create) are 400 bad_request naming the key.';

export const CreateInboundRouteBody = z
  .strictObject({
    e164: z.string().openapi({
      pattern: '^\\+[1-9]\\d{6,14}$',
      description: 'E.164 (400 invalid otherwise); a possible number of its country and an active DID of the tenant (422 otherwise); one active route per number platform-wide (409)',
      example: '+12125550100',
    }),
    dest_type: fields.dest_type,
    dest_ref: fields.dest_ref.optional(),
    recording: fields.recording.optional(),
    ai_enabled: fields.ai_enabled.optional(),
    notes: fields.notes.optional(),
  })
  .openapi('CreateInboundRoute', { description: NOTE });

export const PatchInboundRouteBody = z
  .strictObject({
    dest_type: fields.dest_type.optional(),
    dest_ref: fields.dest_ref.optional(),
    recording: fields.recording.optional(),
    ai_enabled: fields.ai_enabled.optional(),
    notes: fields.notes.optional(),
    status: z.enum(ROUTE_STATUSES).optional().openapi({ description: 'active or disabled; back to active re-checks the number (DID held, 409 when another route took it)' }),
  })
  .openapi('PatchInboundRoute', { description: `Absent keys are unchanged. e164 is immutable (400 bad_request). ${NOTE}` });

export type CreateInboundRouteInput = z.infer<typeof CreateInboundRouteBody>;
export type PatchInboundRouteInput = z.infer<typeof PatchInboundRouteBody>;
