import { z } from '../../lib/openapi';
import { SUPERVISION_MODES } from './supervision.rules';

export { CallIdParam } from '../cdr/cdr.schemas';

export const SupervisionBody = z
  .strictObject({
    supervisor_ext: z.string().openapi({
      description:
        'The SIP extension the supervisor answers on: an active roster extension of this tenant whose agent has role supervisor or admin. A `ddw_` widget token may only name its own agent’s extension.',
      example: '2001',
    }),
  })
  .openapi('SupervisionRequest', { description: 'supervisor_ext is required; other keys are 400 bad_request naming the key.' });

const dateTime = z.string().openapi({ format: 'date-time' });

export const SupervisionResultSchema = z
  .object({
    action: z.enum(SUPERVISION_MODES).openapi({ description: 'The supervision mode applied (the verb of the path); equals mode' }),
    call_id: z.string().openapi({ description: 'The switch call uuid of the consumer leg (call_uuid of the original CDR row)' }),
    supervisor_ext: z.string().openapi({ description: 'The extension the supervisor leg rang' }),
    session_id: z
      .string()
      .uuid()
      .nullable()
      .openapi({ description: 'The eavesdrop session (listen, whisper, barge) the supervisor leg holds; null for takeover, which leaves a bridged call rather than a session' }),
    audit_id: z.string().uuid().openapi({ description: 'The evidence row supervision.<action>_requested committed before the switch command (an audit log entry id)' }),
    to_number: z
      .string()
      .nullable()
      .openapi({ description: 'The consumer’s number of the call masked to its last four digits (`***1234`); null when the call has none', example: '***1234' }),
    id: z.string().openapi({ format: 'uuid', description: 'The supervision record: one per (call, supervisor, mode) request, takeover included (session_id is this id except for takeover)' }),
    mode: z.enum(SUPERVISION_MODES),
    supervisor_agent_id: z.string().openapi({ format: 'uuid', description: 'The agent (role supervisor or admin) that extension belongs to' }),
    leg_uuid: z.string().openapi({ description: 'The supervisor leg on the switch' }),
    status: z.literal('active').openapi({ description: 'Always active: the leg answered and the switch accepted the command (every failure is an error response)' }),
    started_at: dateTime.openapi({ description: 'When the switch accepted the command (UTC, RFC 3339)' }),
    replaced: z
      .object({
        mode: z.enum(SUPERVISION_MODES).openapi({ description: 'The mode this supervisor had on the call' }),
        leg_uuid: z.string().nullable().openapi({ description: 'Its leg, hung up before the new command was sent' }),
      })
      .nullable()
      .openapi({ description: 'The supervisor’s previous session on this call that this one replaced (one active mode per supervisor per call); null when there was none' }),
  })
  .openapi('SupervisionResult');

export type SupervisionResult = z.infer<typeof SupervisionResultSchema>;

export const SupervisionEnvelope = z.object({ supervision: SupervisionResultSchema });
