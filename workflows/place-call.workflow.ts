import { proxyActivities } from '@temporalio/workflow';
import type { DialerActivities } from '../activities/dialer.activities';

const { placeRecordedCall } = proxyActivities<DialerActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '2 seconds', maximumAttempts: 3 },
});

export interface PlaceCallInput {
  tenantId: string;
  callAttemptId: string;
  /** The agent a human-initiated dial names: the call session bridges only that agent. */
  agentId: string | null;
}

/**
 * Places one attempt already recorded with its compliance decision (a human-initiated dial), so
 * the switch is only ever commanded from activities. Id `dial:<tenant>:<call attempt id>`: one
 * placement per attempt; the activity's call_uuid fill makes a retry safe.
 */
export async function placeCallWorkflow(input: PlaceCallInput): Promise<{ placed: number; notPlaced: number }> {
  return placeRecordedCall(input);
}
