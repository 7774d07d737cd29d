import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { MAX_SHIFT_NOTE, PLANNED_SHIFT_STATUSES } from './planned-shift.rules';
import { PlannedShiftSchema } from './planned-shift.views';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const instant = (description: string) => z.iso.datetime({ offset: true }).openapi({ format: 'date-time', description });

export const CreatePlannedShiftBody = z
  .strictObject({
    agent_id: z.string().openapi({ format: 'uuid', description: 'An agent of this tenant; unknown, foreign or malformed is 404' }),
    starts_at: instant('RFC 3339 with a Z or numeric offset (anything else is 400); at most 366 days ahead (422)'),
    ends_at: instant('RFC 3339 (anything else is 400); after starts_at, at most 16 hours after it and not in the past (422)'),
    note: z.string().max(MAX_SHIFT_NOTE).optional().openapi({ description: `Up to ${MAX_SHIFT_NOTE} characters (longer is 400); default ""` }),
  })
  .openapi('PlannedShiftCreate');

export type CreatePlannedShiftInput = z.infer<typeof CreatePlannedShiftBody>;

export const ListPlannedShiftsQuery = z.object({
  agent_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({
    format: 'uuid',
    description: 'Only shifts of this agent (an unknown or foreign one gives an empty page; a malformed one is 400)',
  }),
  from: z.iso.datetime({ offset: true }).optional().openapi({ format: 'date-time', description: 'Only shifts ending after this instant (RFC 3339)' }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ format: 'date-time', description: 'Only shifts starting before this instant (RFC 3339)' }),
  status: z.enum(PLANNED_SHIFT_STATUSES).optional().openapi({ description: 'scheduled or cancelled (any other value is 400)' }),
  limit: limitParam(100, 1000),
  cursor: cursorParam,
});

export type ListPlannedShiftsQueryInput = z.infer<typeof ListPlannedShiftsQuery>;

export const PlannedShiftList = z
  .object({ planned_shifts: z.array(PlannedShiftSchema), next_cursor: z.string().nullable() })
  .openapi('PlannedShiftList');

export const PlannedShiftEnvelope = z.object({ planned_shift: PlannedShiftSchema });
