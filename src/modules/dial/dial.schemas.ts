import { z } from '../../lib/openapi';
import { E164_RE } from '../../lib/phone';
import { CallAttemptSchema } from '../cdr/call-attempt.views';
import { GateSchema } from '../compliance/compliance.schemas';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const DialBody = z
  .strictObject({
    debt_id: z.string().openapi({ format: 'uuid', description: 'A debt of this campaign. Unknown, foreign or malformed is 404; a debt of another campaign is 422' }),
    phone: z
      .string()
      .regex(E164_RE, 'must be an E.164 number')
      .nullable()
      .optional()
      .openapi({ description: "E.164 (400 otherwise); must be one of the debt's contacts (422 otherwise). Omitted or null: the debt's primary contact", example: '+13035550123' }),
    agent_id: z
      .string()
      .regex(UUID_RE, 'must be a uuid')
      .nullable()
      .optional()
      .openapi({
        format: 'uuid',
        description:
          'The agent who takes the call (only that agent is bridged): an active agent of this tenant with a sip_extension (422 otherwise), available now (409 otherwise). Omitted or null: the first available agent when the consumer answers',
      }),
  })
  .openapi('CampaignDial');

export type DialInput = z.infer<typeof DialBody>;

const DialingSchema = z
  .object({
    status: z.literal('dialing'),
    call_id: z.string().openapi({ description: 'The switch call uuid (GET /v1/calls/{call_id})' }),
    call_attempt: CallAttemptSchema,
  })
  .openapi('CampaignDialDialing');

const BlockedSchema = z
  .object({
    status: z.literal('blocked'),
    reason: GateSchema,
    decision_id: z.string().openapi({ format: 'uuid', description: 'The recorded decision (its audit-chain entry); the refusal is evidence' }),
  })
  .openapi('CampaignDialBlocked');

export const DialResultSchema = z.discriminatedUnion('status', [DialingSchema, BlockedSchema]).openapi('CampaignDialResult');

export type DialResult = z.infer<typeof DialResultSchema>;
