import { z } from '../../lib/openapi';
import { DID_STATUSES } from './did.rules';
import { DEFAULT_PERIOD_DAYS, SHORT_CALL_SECONDS } from './did-health.rules';

const dateTime = z.string().openapi({ format: 'date-time' });

export const DidHealthQuery = z.object({
  from: z.iso.datetime({ offset: true }).optional().openapi({ description: `Start (RFC 3339, inclusive); default \`to\` minus ${DEFAULT_PERIOD_DAYS} days` }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'End (RFC 3339, exclusive); default now' }),
});

const reputationEntry = z.null().openapi({ description: 'No reputation feed is connected: always null (a connected feed would fill an object here)' });

export const DidHealthSchema = z
  .object({
    did_id: z.string().openapi({ format: 'uuid' }),
    e164: z.string(),
    status: z.enum(DID_STATUSES),
    period: z.object({ from: dateTime, to: dateTime }).openapi({ description: 'The period as applied, half-open [from, to)' }),
    dials: z.number().int().openapi({ description: 'Original call attempts presenting this number that started in the period (not_placed excluded)' }),
    answered: z.number().int().openapi({ description: 'Of those, calls whose final state (the latest correction, else the original) has answered_at' }),
    answer_rate: z.number().nullable().openapi({ description: 'answered / dials; null when dials is 0' }),
    short_calls: z.number().int().openapi({ description: `Answered calls that ended less than ${SHORT_CALL_SECONDS} s after answer (ended_at − answered_at of the final state); a call still up is not short` }),
    short_call_rate: z.number().nullable().openapi({ description: 'short_calls / answered; null when answered is 0' }),
    reputation: z
      .object({ hiya: reputationEntry, tns: reputationEntry })
      .openapi({ description: 'One entry per caller-reputation service (Hiya-style, TNS-style). No feed is connected in this service, so each entry is an explicit null, never a guess' }),
  })
  .openapi('DidHealth');
