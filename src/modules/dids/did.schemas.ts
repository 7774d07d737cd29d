import { NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { e164CursorParam, limitParam } from '../../lib/pagination';
import { DID_ATTESTATIONS, DID_ORIGINS, DID_STATUSES, LABEL_MAX_CHARS, LABELS_MAX, NOTES_MAX_CHARS } from './did.rules';
import { VERIFICATION_CODE_DIGITS, VERIFICATION_MAX_ATTEMPTS, VERIFICATION_METHODS, VERIFICATION_STATUSES } from './did-verification.rules';

const dateTime = z.string().openapi({ format: 'date-time' });
const uuid = z.string().openapi({ format: 'uuid' });

export const DidVerificationSchema = z
  .object({
    status: z.enum(VERIFICATION_STATUSES).openapi({
      description: `pending: a code was sent and awaits POST /v1/dids/{id}/verify; verified: control proven (the DID may be active);
failed: ${VERIFICATION_MAX_ATTEMPTS} wrong codes burnt the code; expired: the code's time ran out; undelivered: the platform could not send
the code (ask for a new one, or have the operator provision the number)`,
    }),
    method: z.enum(VERIFICATION_METHODS).openapi({ description: 'sms: a code texted to the number by the platform; legacy: active before ownership checks existed' }),
    expires_at: dateTime.nullable().openapi({ description: 'When the pending code stops working; null otherwise' }),
    attempts_left: z.number().int().nullable().openapi({ description: 'Wrong codes still allowed for the pending code; null otherwise' }),
  })
  .openapi('DidVerification');

export const DidSchema = z
  .object({
    id: uuid,
    tenant_id: uuid,
    e164: z.string().openapi({ description: 'Immutable', example: '+12125550100' }),
    npa: z.string().nullable().openapi({ example: '212' }),
    us_state: z.string().nullable().openapi({ example: 'NY' }),
    attestation: z.enum(DID_ATTESTATIONS).openapi({ description: 'STIR/SHAKEN signing level' }),
    status: z.enum(DID_STATUSES),
    origin: z.enum(DID_ORIGINS).openapi({ description: 'customer for every DID registered through the API' }),
    labels: z.array(z.string()),
    notes: z.string().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
    verification: DidVerificationSchema.nullable().openapi({
      description: 'The proof of control of a customer DID; null for a house DID and for a customer DID that never asked for activation',
    }),
  })
  .openapi('Did');

export const DidEnvelope = z.object({ did: DidSchema });

export const ListDidsQuery = z.object({
  status: z.enum(DID_STATUSES).optional().openapi({ description: 'Only DIDs in this status; another value is 400' }),
  limit: limitParam(100, 1000),
  cursor: e164CursorParam,
});
export const DidList = z.object({ dids: z.array(DidSchema), next_cursor: z.string().nullable() }).openapi('DidList');

const fields = {
  npa: z.string().nullable().openapi({
    pattern: '^[2-9][0-9]{2}$',
    description: 'Three digits, the first 2-9 (400 invalid otherwise). Omitted on create: derived from a +1 number (null otherwise). For a +1 number it must be its area code or null (422 unprocessable otherwise)',
    example: '212',
  }),
  us_state: z.string().nullable().openapi({ pattern: '^[A-Za-z]{2}$', description: 'Two letters, stored uppercase (400 invalid otherwise); null clears', example: 'NY' }),
  attestation: z.string().openapi({ enum: [...DID_ATTESTATIONS], description: 'Default unknown; another value is 400 invalid' }),
  status: z.string().openapi({
    enum: [...DID_STATUSES],
    description: `Default active; another value is 400 invalid. On registration, active asks for activation: the DID is stored in quarantine
and becomes active when the code texted to the number is confirmed. On a patch, active needs proven control (house, or verification
verified; 422 otherwise) and a number active in no other tenant (409)`,
  }),
  labels: z.array(z.string().openapi({ pattern: NON_BLANK_PATTERN, maxLength: LABEL_MAX_CHARS })).openapi({
    maxItems: LABELS_MAX,
    uniqueItems: true,
    description: `At most ${LABELS_MAX} distinct labels of 1 to ${LABEL_MAX_CHARS} characters (trimmed); 400 invalid otherwise`,
    example: ['ny-pool'],
  }),
  notes: z.string().nullable().openapi({ maxLength: NOTES_MAX_CHARS, description: `At most ${NOTES_MAX_CHARS} characters; empty or null clears` }),
  origin: z.unknown().openapi({ type: 'string', enum: [...DID_ORIGINS], description: 'Accepted and ignored: origin is always customer' }),
};

type Fields = typeof fields;
const optionalFields = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
  [K in keyof Fields]: z.ZodOptional<Fields[K]>;
};

const NOTE = 'Other keys, including the rendered id, tenant_id, created_at and updated_at, are 400 bad_request naming the key.';

export const CreateDidBody = z
  .strictObject({
    e164: z.string().openapi({
      pattern: '^\\+[1-9]\\d{6,14}$',
      description: 'E.164 (400 invalid otherwise; a number its country\'s numbering plan cannot have is 422 unprocessable); unique per tenant and active in at most one tenant (409)',
      example: '+12125550100',
    }),
    ...optionalFields,
  })
  .openapi('CreateDid', { description: NOTE });

export const PatchDidBody = z
  .strictObject(optionalFields)
  .openapi('PatchDid', { description: `Absent keys are unchanged. e164 is immutable (400 bad_request). ${NOTE}` });

export const VerifyDidBody = z
  .strictObject({
    code: z.string().openapi({ description: `The ${VERIFICATION_CODE_DIGITS}-digit code texted to the number`, example: '042917' }),
  })
  .openapi('VerifyDid');
