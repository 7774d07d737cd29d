import { z } from '../../lib/openapi';
import { CALLBACK_STATUSES } from './callback.rules';

const uuid = z.string().openapi({ format: 'uuid' });
const dateTime = z.string().openapi({ format: 'date-time' });

export const CallbackSchema = z
  .object({
    id: uuid,
    tenant_id: uuid,
    debt_id: uuid,
    contact_phone: z.string().openapi({ description: 'E.164, a contact of the debt' }),
    campaign_id: uuid.nullable(),
    agent_id: uuid.nullable(),
    scheduled_at: dateTime,
    note: z.string().nullable(),
    priority: z.number().int().openapi({ description: 'Higher is dialed first among due callbacks' }),
    status: z.enum(CALLBACK_STATUSES),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('Callback');

export type CallbackView = z.infer<typeof CallbackSchema>;

export interface CallbackRow {
  id: string;
  tenant_id: string;
  debt_id: string;
  contact_phone: string;
  campaign_id: string | null;
  agent_id: string | null;
  scheduled_at: Date;
  note: string | null;
  priority: number;
  status: string;
  created_at: Date;
  updated_at: Date;
}

export function callbackView(r: CallbackRow): CallbackView {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    debt_id: r.debt_id,
    contact_phone: r.contact_phone,
    campaign_id: r.campaign_id,
    agent_id: r.agent_id,
    scheduled_at: r.scheduled_at.toISOString(),
    note: r.note,
    priority: r.priority,
    status: r.status as CallbackView['status'],
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
