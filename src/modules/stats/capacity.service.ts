import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { channelsInUse, dialsLastSecond, handleSample, tenantLimits } from '../dialer/capacity.repository';
import { plannedStaffing, staffingHorizons } from '../dialer/pacing';
import { plannedPerInterval, presentAgents, shiftSeats } from '../planned-shifts/planned-shift.repository';
import { liveSessionCount } from '../supervision/supervision.repository';

export interface CapacityWindow {
  intervalMinutes: number;
  intervals: number;
}

const DEFAULT_WINDOW: CapacityWindow = { intervalMinutes: 30, intervals: 16 };

/**
 * Both lanes' ceilings and what is using them now, read in one transaction so the counts and the
 * limits describe the same moment. Each lane counts only its own rows (call_attempts,
 * supervision_sessions), which is what keeps one from exhausting the other. The agents part sets
 * the planned shifts against the agents present, and shows the plan's edges exactly as the dial
 * tick reads them (the same horizons and the same pure rule).
 */
export async function capacity(deps: AppDeps, tenantId: string, now = new Date(), window: CapacityWindow = DEFAULT_WINDOW) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const limits = await tenantLimits(sql);
    const inUse = await channelsInUse(sql, now);
    const dials = await dialsLastSecond(sql, now);
    const supervising = await liveSessionCount(sql, tenantId);

    const horizons = staffingHorizons(await handleSample(sql, now));
    const shifts = await shiftSeats(sql, now, new Date(now.getTime() + horizons.leadMs + horizons.handleMs));
    const edges = plannedStaffing(now.getTime(), horizons, shifts);
    const floor = await presentAgents(sql, now);
    const intervalMs = window.intervalMinutes * 60_000;
    const first = new Date(Math.floor(now.getTime() / intervalMs) * intervalMs);
    const planned = await plannedPerInterval(sql, first, window.intervalMinutes, window.intervals);
    return {
      limits,
      channels_in_use: inUse,
      dials_last_second: dials,
      supervision: { limit: deps.config.MAX_SUPERVISION_CHANNELS, in_use: supervising },
      agents: {
        interval_minutes: window.intervalMinutes,
        now: {
          planned: floor.plannedNow,
          present: floor.present,
          planned_present: floor.plannedPresent,
          dialable: floor.dialable,
          leaving: edges.leaving,
          arriving: edges.arriving,
          lead_time_seconds: Math.round(horizons.leadMs / 1000),
          handle_time_seconds: Math.round(horizons.handleMs / 1000),
        },
        intervals: planned.map((count, i) => ({
          starts_at: new Date(first.getTime() + i * intervalMs).toISOString(),
          ends_at: new Date(first.getTime() + (i + 1) * intervalMs).toISOString(),
          planned: count,
          present: i === 0 ? floor.present : null,
        })),
      },
    };
  });
}
