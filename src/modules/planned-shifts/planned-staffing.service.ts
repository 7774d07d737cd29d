import type { SqlTx } from '../../lib/tenancy';
import { handleSample } from '../dialer/capacity.repository';
import {
  leavingAgentIds,
  MAX_HANDLE_MS,
  MAX_LEAD_MS,
  nextPlannedGainAt as nextPlannedGain,
  plannedStaffing,
  staffingHorizons,
  type PlannedStaffing,
} from '../dialer/pacing';
import { shiftSeats } from './planned-shift.repository';

/**
 * What the planned shifts change about the seats a line dialed at `now` may find (pacing.ts,
 * plannedStaffing). The shifts are read over the longest horizons first: a tenant with no shift
 * near now pays one index probe per tick and never the handle-time sample.
 */
export async function plannedStaffingForTick(sql: SqlTx, now: Date): Promise<PlannedStaffing> {
  const shifts = await shiftSeats(sql, now, new Date(now.getTime() + MAX_LEAD_MS + MAX_HANDLE_MS));
  if (shifts.length === 0) return { leaving: 0, arriving: 0 };
  return plannedStaffing(now.getTime(), staffingHorizons(await handleSample(sql, now)), shifts);
}

/**
 * When the plan alone next gives the campaign runs more lines (pacing.ts, nextPlannedGainAt):
 * a moment an idle run waiting for seats should wake at. Null without a scheduled shift ahead
 * within the longest horizons.
 */
export async function nextPlannedGainAt(sql: SqlTx, now: Date): Promise<Date | null> {
  const shifts = await shiftSeats(sql, now, new Date(now.getTime() + MAX_LEAD_MS + MAX_HANDLE_MS));
  if (shifts.length === 0) return null;
  const at = nextPlannedGain(now.getTime(), staffingHorizons(await handleSample(sql, now)), shifts);
  return at === null ? null : new Date(at);
}

/**
 * The agents whose stretch of work on shift ends before a call taken at `now` would be done with
 * them, by the horizons the tick paces with (pacing.ts, leavingAgentIds): an answered call goes
 * to any other seat first. Empty, after one index probe, for a tenant with no shift near now.
 */
export async function leavingAgentsAt(sql: SqlTx, now: Date): Promise<string[]> {
  const shifts = await shiftSeats(sql, now, new Date(now.getTime() + MAX_LEAD_MS + MAX_HANDLE_MS));
  if (shifts.length === 0) return [];
  return leavingAgentIds(now.getTime(), staffingHorizons(await handleSample(sql, now)), shifts);
}
