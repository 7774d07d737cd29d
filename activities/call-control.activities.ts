import type { AppDeps } from '../src/deps';
import { runCallControl, type CallControlInput } from '../src/modules/call-control/call-control.switch';

/**
 * Live-call control (hold, unhold, mute, unmute, hangup): the switch is commanded only from
 * activities. Failures are typed, non-retryable ApplicationFailures (CALL_CONTROL_FAILURES).
 */
export function createCallControlActivities(deps: AppDeps) {
  return {
    controlCall: (input: CallControlInput) => runCallControl(deps, input),
  };
}

export type CallControlActivities = ReturnType<typeof createCallControlActivities>;
