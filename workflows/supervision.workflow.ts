import { proxyActivities } from '@temporalio/workflow';
import type { SupervisionActivities } from '../activities/supervision.activities';
import type { SupervisionInput, SupervisionOutcome } from '../src/modules/supervision/supervision.switch';

// One attempt: a retry would ring the supervisor twice and write the evidence twice; the API
// answers the failure and the caller decides. The timeout covers the supervisor leg's answer wait.
const { superviseCall } = proxyActivities<SupervisionActivities>({
  startToCloseTimeout: '60 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * One supervision request (listen, whisper, barge, takeover) that the API runs synchronously.
 * Id `supervision:<tenant>:<call uuid>:<supervisor agent id>:<request uuid>`.
 */
export async function supervisionWorkflow(input: SupervisionInput): Promise<SupervisionOutcome> {
  return superviseCall(input);
}
