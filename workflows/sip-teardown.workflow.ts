import { proxyActivities } from '@temporalio/workflow';
import type { SipActivities } from '../activities/sip.activities';
import type { SipTeardownInput, SipTeardownOutcome } from '../src/modules/sip-credentials/sip-teardown.switch';

// One attempt: the API is waiting to answer ok or failed, and a failed flush is covered by the
// credential's autoexpiry, not by retries.
const { flushSipRegistration } = proxyActivities<SipActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * Drops an agent's SIP registration on the switch after its credentials were revoked in the
 * database. Id `sip-teardown:<tenant>:<agent>:<request uuid>`.
 */
export async function sipTeardownWorkflow(input: SipTeardownInput): Promise<SipTeardownOutcome> {
  return flushSipRegistration(input);
}
