import { E164_RE } from '../../lib/phone';
import { z } from '../../lib/openapi';
import { limitParam } from '../../lib/pagination';
import { CALLBACK_STATUSES, DUE_FALSE, DUE_TRUE } from './callback.rules';
import { CallbackSchema } from './callback.views';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const MAX_CALLBACK_NOTE = 2000;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export const ListCallbacksQuery = z
  .object({
    due: z
      .enum([...DUE_TRUE, ...DUE_FALSE])
      .optional()
      .transform((v) => v !== undefined && (DUE_TRUE as readonly string[]).includes(v))
      .openapi({
        type: 'string',
        enum: [...DUE_TRUE, ...DUE_FALSE],
        description:
          'now, true or 1: only the due queue, pending callbacks with scheduled_at at or before now, ordered by priority (highest first), then scheduled_at, then id. false or 0: the same as omitting it. Anything else is 400',
      }),
    status: z.enum(CALLBACK_STATUSES).optional().openapi({ description: 'Default pending. With due, only pending is accepted (anything else is 422 unprocessable)' }),
    campaign_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid' }),
    debt_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid' }),
    limit: limitParam(100, 1000),
  });

export type ListCallbacksFilters = z.infer<typeof ListCallbacksQuery>;

export const CallbackList = z.object({ callbacks: z.array(CallbackSchema) }).openapi('CallbackList');

export const CreateCallbackBody = z
  .strictObject({
    debt_id: z.string().openapi({ format: 'uuid', description: 'A debt of this tenant; unknown, foreign or malformed is 404' }),
    contact_phone: z
      .string()
      .regex(E164_RE, 'must be an E.164 number')
      .openapi({ description: 'E.164; must be a contact of the debt (422 otherwise)', example: '+12125550123' }),
    scheduled_at: z.iso.datetime({ offset: true }).openapi({
      format: 'date-time',
      description: 'RFC 3339 with a Z or numeric offset (anything else is 400); at least 10 minutes ahead (422 otherwise)',
    }),
    campaign_id: z
      .string()
      .regex(UUID_RE, 'must be a uuid')
      .nullable()
      .optional()
      .openapi({
        format: 'uuid',
        description: "Default the debt's campaign; null for none (the callback's timer then dials it itself, from one of the tenant's active DIDs). Must be a campaign of this tenant (400 invalid)",
      }),
    agent_id: z
      .string()
      .regex(UUID_RE, 'must be a uuid')
      .nullable()
      .optional()
      .openapi({
        format: 'uuid',
        description: "The agent who should take it: the callback's call bridges this agent's seat only, dialed once the seat is reachable; must be an agent of this tenant (400 invalid)",
      }),
    note: z.string().max(MAX_CALLBACK_NOTE).nullable().optional(),
    priority: z.number().int().min(INT32_MIN).max(INT32_MAX).optional().openapi({ description: 'Default 0; higher is dialed first' }),
  })
  .openapi('CallbackCreate');

export type CreateCallbackInput = z.infer<typeof CreateCallbackBody>;

export const CallbackEnvelope = z.object({ callback: CallbackSchema });
