import { ApplicationFailure, defineSignal, getExternalWorkflowHandle, proxyActivities, sleep } from '@temporalio/workflow';
import type { CallbackActivities } from '../activities/callback.activities';
import { campaignRunWorkflowId } from './ids';

const { missCallbackIfPending } = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '30 seconds',
  // Unlimited attempts: a database outage must delay the transition, not lose it. Refusals are
  // non-retryable failures and end the retries at once.
  retry: { maximumInterval: '1 minute' },
});

/** The campaign run workflow declares the same name: it dials due callbacks before fresh leads. */
export const wakeSignal = defineSignal('wake');

export interface CallbackTimerInput {
  tenantId: string;
  callbackId: string;
  campaignId: string | null;
  /** ISO 8601 instant. */
  scheduledAt: string;
  missAfterMs: number;
}

export interface CallbackTimerResult {
  status: string;
}

/**
 * One per callback (id callbackWorkflowId). At scheduled_at it wakes the campaign's run so the
 * callback is dialed on time rather than on the next tick; missAfterMs later, a callback nobody
 * dialed, completed or cancelled becomes missed.
 */
export async function callbackTimerWorkflow(input: CallbackTimerInput): Promise<CallbackTimerResult> {
  // Date.now() is the workflow clock here (replay-safe): a callback already due adds no timer.
  const dueAt = Date.parse(input.scheduledAt);
  if (Number.isNaN(dueAt)) throw ApplicationFailure.nonRetryable(`scheduledAt is not an ISO 8601 instant: ${input.scheduledAt}`, 'InvalidScheduledAt');
  const untilDue = dueAt - Date.now();
  if (untilDue > 0) await sleep(untilDue);
  if (input.campaignId !== null) {
    try {
      await getExternalWorkflowHandle(campaignRunWorkflowId(input.tenantId, input.campaignId)).signal(wakeSignal);
    } catch {
      // No run is open for the campaign: the next start picks the callback up from the due queue.
    }
  }
  if (input.missAfterMs > 0) await sleep(input.missAfterMs);
  return missCallbackIfPending({ tenantId: input.tenantId, callbackId: input.callbackId });
}
