import { NON_BLANK_PATTERN, z } from '../../lib/openapi';
import { DID_ATTESTATIONS, LABEL_MAX_CHARS, LABELS_MAX } from '../dids/did.rules';
import { DidSchema } from '../dids/did.schemas';

export const ADMIN_DIDS_MAX = 1000;

export const AdminProvisionDidsBody = z
  .strictObject({
    e164s: z.array(z.string().openapi({ pattern: '^\\+[1-9]\\d{6,14}$' })).openapi({
      minItems: 1,
      description: `1 to ${ADMIN_DIDS_MAX} E.164 numbers (422 otherwise); a number listed twice counts once`,
      example: ['+12125550100', '+12125550101'],
    }),
    attestation: z.string().optional().openapi({ enum: [...DID_ATTESTATIONS], description: 'Applied to the new DIDs; default unknown' }),
    us_state: z.string().nullable().optional().openapi({ pattern: '^[A-Za-z]{2}$', description: 'Two letters, stored uppercase; applied to the new DIDs', example: 'NY' }),
    labels: z
      .array(z.string().openapi({ pattern: NON_BLANK_PATTERN, maxLength: LABEL_MAX_CHARS }))
      .optional()
      .openapi({ maxItems: LABELS_MAX, uniqueItems: true, description: `At most ${LABELS_MAX} distinct labels of 1 to ${LABEL_MAX_CHARS} characters; applied to the new DIDs`, example: ['house-pool'] }),
  })
  .openapi('AdminProvisionDids', { description: 'Other keys (origin, status and tenant_id included) are 400 bad_request naming the key.' });

export const AdminProvisionDidsResult = z
  .object({
    dids: z.array(DidSchema).openapi({ description: 'Every requested number as the tenant now holds it (new and existing), ordered by e164' }),
    created: z.number().int().openapi({ description: 'Numbers added by this call (origin house, status active)' }),
    existing: z.number().int().openapi({ description: 'Numbers the tenant already held (any origin, any status): reported unchanged, never duplicated' }),
  })
  .openapi('AdminProvisionDidsResult');

export type AdminProvisionDidsInput = z.infer<typeof AdminProvisionDidsBody>;
