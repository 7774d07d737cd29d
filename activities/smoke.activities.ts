import type { AppDeps } from '../src/deps';
import { appendAudit } from '../src/lib/audit';
import { withTenant } from '../src/lib/tenancy';

export function createSmokeActivities(deps: Pick<AppDeps, 'db'>) {
  return {
    async recordSmokeCheck(tenantId: string): Promise<string> {
      const entry = await withTenant(deps.db, tenantId, (tx) =>
        appendAudit(tx, tenantId, { actorType: 'workflow', action: 'system.smoke_check', subjectType: 'tenant', subjectId: tenantId }),
      );
      return entry.seq.toString();
    },
  };
}

export type SmokeActivities = ReturnType<typeof createSmokeActivities>;
