import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { endSessionOfLeg } from './supervision.repository';

export interface SupervisionLegEnded {
  tenantId: string;
  sessionId: string;
  legUuid: string;
}

/** The supervisor hung up their leg, in the tenant's transaction: its session ends (safe to repeat). */
export async function endSupervisionLeg(deps: AppDeps, input: SupervisionLegEnded): Promise<{ ended: boolean }> {
  const row = await withTenantSql(deps.db, input.tenantId, (sql) => endSessionOfLeg(sql, input.tenantId, input.sessionId, input.legUuid));
  return { ended: row !== null };
}
