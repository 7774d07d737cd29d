import type { AppDeps } from '../src/deps';
import { endSupervisionLeg, type SupervisionLegEnded } from '../src/modules/supervision/supervision-leg.service';
import { runSupervision, type SupervisionInput } from '../src/modules/supervision/supervision.switch';

/**
 * Supervision of live calls: the supervisor legs are placed only from here. Failures are typed,
 * non-retryable ApplicationFailures (SUPERVISION_FAILURES).
 */
export function createSupervisionActivities(deps: AppDeps) {
  return {
    superviseCall: (input: SupervisionInput) => runSupervision(deps, input),
    endSupervisionLeg: (input: SupervisionLegEnded) => endSupervisionLeg(deps, input),
  };
}

export type SupervisionActivities = ReturnType<typeof createSupervisionActivities>;
