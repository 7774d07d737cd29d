import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { conflict, notFound, unprocessable } from '../../lib/errors';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql } from '../../lib/tenancy';
import { wakeSeatedCampaignRuns } from '../dialer/campaign-wake';
import { cancelShift, findOverlappingShift, insertShift, listShiftRows, lockAgentForPlanning, lockShift } from './planned-shift.repository';
import { checkShiftWindow } from './planned-shift.rules';
import type { CreatePlannedShiftInput, ListPlannedShiftsQueryInput } from './planned-shift.schemas';
import { plannedShiftView } from './planned-shift.views';

type Actor = { type: ActorType; id: string | null };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Plans a shift. The agent's row lock serializes plans of one agent, so the overlap check cannot
 * miss a shift being planned concurrently. The note stays out of the audit payload (free text,
 * kept forever there); only whether there is one.
 */
export async function createPlannedShift(deps: AppDeps, tenantId: string, actor: Actor, input: CreatePlannedShiftInput) {
  if (!UUID_RE.test(input.agent_id)) throw notFound('no agent of the tenant has this id');
  const startsAt = new Date(input.starts_at);
  const endsAt = new Date(input.ends_at);
  checkShiftWindow(startsAt, endsAt, new Date());
  const shift = await withTenantSql(deps.db, tenantId, async (sql) => {
    const agent = await lockAgentForPlanning(sql, input.agent_id);
    if (!agent) throw notFound('no agent of the tenant has this id');
    if (agent.status !== 'active') throw unprocessable('the agent is inactive');
    const overlapping = await findOverlappingShift(sql, agent.id, startsAt, endsAt);
    if (overlapping) throw conflict(`the agent already has a scheduled shift in this window (${overlapping})`);
    const row = await insertShift(sql, tenantId, { agentId: agent.id, startsAt, endsAt, note: input.note ?? '' });
    await appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: 'planned_shift.created',
        subjectType: 'agent',
        subjectId: agent.id,
        payload: { planned_shift_id: row.id, starts_at: row.starts_at.toISOString(), ends_at: row.ends_at.toISOString(), note_present: row.note !== '' },
      },
    ]);
    return plannedShiftView(row);
  });
  // Pacing reads the plan (an arrival it may dial ahead for): a run idle for want of seats looks again.
  await wakeSeatedCampaignRuns(deps, tenantId);
  return shift;
}

export async function listPlannedShifts(deps: AppDeps, tenantId: string, query: ListPlannedShiftsQueryInput) {
  const from = query.from === undefined ? undefined : new Date(query.from);
  const to = query.to === undefined ? undefined : new Date(query.to);
  if (from && to && from.getTime() >= to.getTime()) throw unprocessable("'from' must be before 'to'");
  const after = query.cursor ? decodeTimestampIdCursor(query.cursor) : null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) =>
    listShiftRows(sql, { agentId: query.agent_id, status: query.status, from, to }, after, query.limit + 1),
  );
  const { page, nextCursor } = paginate(rows, query.limit, (r) => [r.starts_at.toISOString(), r.id]);
  return { planned_shifts: page.map(plannedShiftView), next_cursor: nextCursor };
}

/** scheduled → cancelled; a cancelled shift stays cancelled (409). */
export async function cancelPlannedShift(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  const shift = await withTenantSql(deps.db, tenantId, async (sql) => {
    const current = await lockShift(sql, id);
    if (!current) throw notFound();
    if (current.status !== 'scheduled') throw conflict(`the shift is ${current.status}; only a scheduled shift can be cancelled`);
    const row = await cancelShift(sql, id);
    await appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: 'planned_shift.cancelled',
        subjectType: 'agent',
        subjectId: row.agent_id,
        payload: { planned_shift_id: row.id, from: 'scheduled', to: 'cancelled' },
      },
    ]);
    return plannedShiftView(row);
  });
  // A seat the plan held back (its shift ending) may count again: a run idle for want of seats looks again.
  await wakeSeatedCampaignRuns(deps, tenantId);
  return shift;
}
