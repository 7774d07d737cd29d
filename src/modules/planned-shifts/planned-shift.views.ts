import { z } from '../../lib/openapi';
import { PLANNED_SHIFT_STATUSES, type PlannedShiftStatus } from './planned-shift.rules';

const uuid = z.string().openapi({ format: 'uuid' });
const dateTime = z.string().openapi({ format: 'date-time' });

export const PlannedShiftSchema = z
  .object({
    id: uuid,
    agent_id: uuid,
    starts_at: dateTime,
    ends_at: dateTime,
    note: z.string().openapi({ description: 'Free text for the floor manager, up to 500 characters ("" when none)' }),
    status: z.enum(PLANNED_SHIFT_STATUSES),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('PlannedShift');

export type PlannedShiftView = z.infer<typeof PlannedShiftSchema>;

export interface PlannedShiftRow {
  id: string;
  agent_id: string;
  starts_at: Date;
  ends_at: Date;
  note: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

export function plannedShiftView(r: PlannedShiftRow): PlannedShiftView {
  return {
    id: r.id,
    agent_id: r.agent_id,
    starts_at: r.starts_at.toISOString(),
    ends_at: r.ends_at.toISOString(),
    note: r.note,
    status: r.status as PlannedShiftStatus,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
