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
    id: z.string().openapi({ format: 'uuid', description: 'The supervision session: one per (call, supervisor, mode) request' }),
    call_id: z.string().openapi({ description: 'The switch call uuid of the consumer leg (call_uuid of the original CDR row)' }),
    mode: z.enum(SUPERVISION_MODES),
    supervisor_ext: z.string().openapi({ description: 'The extension the supervisor leg rang' }),
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
