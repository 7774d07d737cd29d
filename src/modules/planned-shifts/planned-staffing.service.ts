import type { SqlTx } from '../../lib/tenancy';
import { handleSample } from '../dialer/capacity.repository';
import {
  MAX_HANDLE_MS,
  MAX_LEAD_MS,
  nextPlannedGainAt as nextPlannedGain,
  plannedStaffing,
  staffingHorizons,
  type PlannedStaffing,
  type StaffingHorizons,
} from '../dialer/pacing';
import { shiftSeats } from './planned-shift.repository';

export interface StaffingReading extends PlannedStaffing {
  /** null when no scheduled shift is near enough to matter (the handle time was not read). */
  horizons: StaffingHorizons | null;
}

/**
 * What the planned shifts change about the seats a line dialed at `now` may find (pacing.ts,
 * plannedStaffing). The shifts are read over the longest horizons first: a tenant with no shift
 * near now pays one index probe per tick and never the handle-time sample.
 */
export async function readPlannedStaffing(sql: SqlTx, now: Date): Promise<StaffingReading> {
  const shifts = await shiftSeats(sql, now, new Date(now.getTime() + MAX_LEAD_MS + MAX_HANDLE_MS));
  if (shifts.length === 0) return { leaving: 0, arriving: 0, horizons: null };
  const horizons = staffingHorizons(await handleSample(sql, now));
  return { ...plannedStaffing(now.getTime(), horizons, shifts), horizons };
}

/** The dial tick's reading: the seat adjustments alone. */
export async function plannedStaffingForTick(sql: SqlTx, now: Date): Promise<PlannedStaffing> {
  const { leaving, arriving } = await readPlannedStaffing(sql, now);
  return { leaving, arriving };
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
