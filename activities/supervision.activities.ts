import type { AppDeps } from '../src/deps';
import { runSupervision, type SupervisionInput } from '../src/modules/supervision/supervision.switch';

/**
 * Supervision of live calls: the supervisor legs are placed only from here. Failures are typed,
 * non-retryable ApplicationFailures (SUPERVISION_FAILURES).
 */
export function createSupervisionActivities(deps: AppDeps) {
  return {
    superviseCall: (input: SupervisionInput) => runSupervision(deps, input),
  };
}

export type SupervisionActivities = ReturnType<typeof createSupervisionActivities>;
