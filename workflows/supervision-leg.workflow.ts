import { proxyActivities } from '@temporalio/workflow';
import type { SupervisionActivities } from '../activities/supervision.activities';
import type { SupervisionLegEnded } from '../src/modules/supervision/supervision-leg.service';

// A database outage only delays freeing the slot: retried until it answers.
const { endSupervisionLeg } = proxyActivities<SupervisionActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/**
 * A supervisor put their phone down: the session their leg served ends and frees its supervision
 * slot at once, instead of holding it until the call ends. Id `supervision-leg:<tenant>:<session>`.
 */
export async function supervisionLegEndedWorkflow(input: SupervisionLegEnded): Promise<{ ended: boolean }> {
  return endSupervisionLeg(input);
}
