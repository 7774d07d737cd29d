import { proxyActivities } from '@temporalio/workflow';
import type { CallControlActivities } from '../activities/call-control.activities';
import type { CallControlInput, CallControlOutcome } from '../src/modules/call-control/call-control.switch';

// One attempt: a retried hold or hangup could act twice and write its evidence twice; the API
// answers the failure and the caller decides.
const { controlCall } = proxyActivities<CallControlActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * One live-call control command (hold, unhold, mute, unmute, hangup) that the API runs
 * synchronously. Id `call-control:<tenant>:<call uuid>:<action>:<request uuid>`.
 */
export async function callControlWorkflow(input: CallControlInput): Promise<CallControlOutcome> {
  return controlCall(input);
}
