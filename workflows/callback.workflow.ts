import { ApplicationFailure, defineSignal, getExternalWorkflowHandle, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { CallbackActivities, CallbackTimerInput, CallbackTimerResult, CallbackWakeSignal } from '../src/contracts/callback';
import { campaignRunWorkflowId } from './ids';

const { missCallbackIfPending, dialCallback } = proxyActivities<CallbackActivities>({
  startToCloseTimeout: '30 seconds',
  // Unlimited attempts: a database outage must delay the transition, not lose it. Refusals are
  // non-retryable failures and end the retries at once.
  retry: { maximumInterval: '1 minute' },
});

export const wakeSignal = defineSignal('wake' satisfies CallbackWakeSignal);

/** The defaults of the input's retryMs and blockedRetryMs. */
export const CALLBACK_RETRY_MS = 15_000;
export const CALLBACK_BLOCKED_RETRY_MS = 5 * 60_000;

/**
 * One per callback (id callbackWorkflowId). At scheduled_at a campaign callback naming no agent is
 * left to the campaign's run, which it wakes so the callback is dialed on time rather than on the
 * next tick; any other callback is dialed here (dialCallback), tried again while it cannot be
 * placed yet (its agent is not reachable, no capacity, a refusal) until missAfterMs after
 * scheduled_at. A callback nobody dialed, completed or cancelled by then becomes missed.
 */
export async function callbackTimerWorkflow(input: CallbackTimerInput): Promise<CallbackTimerResult> {
  // Date.now() is the workflow clock here (replay-safe): a callback already due adds no timer.
  const dueAt = Date.parse(input.scheduledAt);
  if (Number.isNaN(dueAt)) throw ApplicationFailure.nonRetryable(`scheduledAt is not an ISO 8601 instant: ${input.scheduledAt}`, 'InvalidScheduledAt');
  const untilDue = dueAt - Date.now();
  if (untilDue > 0) await sleep(untilDue);
  if (patched('callback-dial-directed-20261128')) {
    const missAt = dueAt + input.missAfterMs;
    for (let attempt = 0; ; attempt += 1) {
      const result = await dialCallback({ tenantId: input.tenantId, callbackId: input.callbackId, attempt });
      if (result.outcome === 'dialed' || result.outcome === 'closed') return { status: result.status };
      if (result.outcome === 'run') break;
      const left = missAt - Date.now();
      if (left <= 0) return missCallbackIfPending({ tenantId: input.tenantId, callbackId: input.callbackId });
      await sleep(Math.min(left, result.blocked ? (input.blockedRetryMs ?? CALLBACK_BLOCKED_RETRY_MS) : (input.retryMs ?? CALLBACK_RETRY_MS)));
    }
  }
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
