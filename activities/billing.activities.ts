import type { AppDeps } from '../src/deps';
import { enforceBillingForAll } from '../src/modules/billing/billing-enforcement.service';

/** The periodic billing pass (workflows/billing-enforcement.workflow.ts). */
export function createBillingActivities(deps: AppDeps) {
  return {
    enforceBillingForAll: () => enforceBillingForAll(deps),
  };
}

export type BillingActivities = ReturnType<typeof createBillingActivities>;
