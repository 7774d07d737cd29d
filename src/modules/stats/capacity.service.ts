import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { channelsInUse, dialsLastSecond, tenantLimits } from '../dialer/capacity.repository';
import { liveSessionCount } from '../supervision/supervision.repository';

/**
 * Both lanes' ceilings and what is using them now, read in one transaction so the counts and the
 * limits describe the same moment. Each lane counts only its own rows (call_attempts,
 * supervision_sessions), which is what keeps one from exhausting the other.
 */
export async function capacity(deps: AppDeps, tenantId: string, now = new Date()) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const limits = await tenantLimits(sql);
    const inUse = await channelsInUse(sql, now);
    const dials = await dialsLastSecond(sql, now);
    const supervising = await liveSessionCount(sql, tenantId);
    return {
      limits,
      channels_in_use: inUse,
      dials_last_second: dials,
      supervision: { limit: deps.config.MAX_SUPERVISION_CHANNELS, in_use: supervising },
    };
  });
}
