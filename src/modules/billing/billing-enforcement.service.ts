import type { AppDeps } from '../../deps';
import { evaluateBilling } from './billing.service';

export interface EnforcementPass {
  tenants: number;
  failed: number;
}

/**
 * Evaluates every tenant with billing on, each in its own transactions (evaluateBilling). One
 * tenant's failure does not stop the others; it is raised at the end so Temporal retries the pass.
 */
export async function enforceBillingForAll(deps: AppDeps): Promise<EnforcementPass> {
  const { rows } = await deps.db.pool.query<{ tenant_id: string }>('SELECT tenant_id FROM billing_enabled_tenants()');
  let failed = 0;
  let firstError: Error | null = null;
  for (const { tenant_id: tenantId } of rows) {
    try {
      await evaluateBilling(deps, tenantId);
    } catch (err) {
      failed += 1;
      firstError ??= err instanceof Error ? err : new Error(String(err));
      deps.logger.error({ err, tenant_id: tenantId }, 'billing evaluation failed');
    }
  }
  if (firstError) throw firstError;
  return { tenants: rows.length, failed };
}
