import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { BillingActivities } from '../activities/billing.activities';

/** Per task queue, like the webhook dispatcher and the retention sweep. */
export function billingEnforcementWorkflowId(taskQueue: string): string {
  return `billing-enforcement:${taskQueue}`;
}

/** Continue-as-new after this many passes (or sooner when Temporal suggests it): bounded history. */
export const PASSES_PER_RUN = 500;

const { enforceBillingForAll } = proxyActivities<BillingActivities>({
  // One pass evaluates every tenant with billing on; a database outage only delays enforcement.
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/** Evaluate now (an operator, a worker restart): ends the current wait. */
export const billingEnforcementPassSignal = defineSignal('pass');

export interface BillingEnforcementInput {
  intervalMs: number;
  passesPerRun?: number;
}

/**
 * The periodic billing pass: spend crossing a threshold or the cap, prepaid funds running out and a
 * period rolling over are all noticed here, so enforcement (alerts recorded once, campaigns moved to
 * and from suspended_balance) never depends on a request arriving.
 */
export async function billingEnforcementWorkflow(input: BillingEnforcementInput): Promise<void> {
  let woken = false;
  setHandler(billingEnforcementPassSignal, () => {
    woken = true;
  });
  for (let passes = 1; ; passes += 1) {
    await enforceBillingForAll();
    await condition(() => woken, input.intervalMs);
    woken = false;
    if (passes >= (input.passesPerRun ?? PASSES_PER_RUN) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof billingEnforcementWorkflow>(input);
    }
  }
}
