import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { channelsInUse, dialsLastSecond, tenantLimits } from '../dialer/capacity.repository';

/**
 * The dial lane's ceilings and what is using them now, read in one transaction so the counts and
 * the limits describe the same moment. Supervision sessions do not exist yet (they come with the
 * agents and supervision work), so that lane reports no limit and nothing in use.
 */
export async function capacity(deps: AppDeps, tenantId: string, now = new Date()) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const limits = await tenantLimits(sql);
    const inUse = await channelsInUse(sql, now);
    const dials = await dialsLastSecond(sql, now);
    return {
      limits,
      channels_in_use: inUse,
      dials_last_second: dials,
      supervision: { limit: null, in_use: 0 },
    };
  });
}
