import { z } from '../../lib/openapi';
import { CALL_CONTROL_ACTIONS } from './call-control.switch';

export { CallIdParam } from '../cdr/cdr.schemas';

/** What a live-call control command did. */
export const CallControlResultSchema = z
  .object({
    verb: z.enum(CALL_CONTROL_ACTIONS).openapi({ description: 'The command applied (the verb of the path)' }),
    call_id: z.string().openapi({ description: 'The switch call uuid of the consumer leg (call_uuid of the original CDR row)' }),
    audit_id: z.string().uuid().openapi({ description: 'The evidence row call.<verb>_requested committed before the switch command (an audit log entry id)' }),
    to_number: z
      .string()
      .nullable()
      .openapi({ description: 'The consumer’s number of the call masked to its last four digits (`***1234`); null when the call has none', example: '***1234' }),
    action: z.enum(CALL_CONTROL_ACTIONS).openapi({ description: 'The command applied; equals verb' }),
    applied: z.literal(true).openapi({ description: 'Always true: the switch accepted the command (every failure is an error response)' }),
    agent_leg_uuid: z
      .string()
      .nullable()
      .openapi({ description: 'The agent leg bridged to the call when the command ran: the leg hold/unhold/mute/unmute acted on; for hangup the agent leg at the time, or null' }),
    at: z.string().openapi({ format: 'date-time', description: 'When the switch accepted the command (UTC, RFC 3339)' }),
  })
  .openapi('CallControlResult');

export type CallControlResult = z.infer<typeof CallControlResultSchema>;

export const CallControlEnvelope = z.object({ call: CallControlResultSchema });
