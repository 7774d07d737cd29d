import type { AppDeps } from '../src/deps';
import { runSipTeardown, type SipTeardownInput } from '../src/modules/sip-credentials/sip-teardown.switch';

/** SIP endpoint teardown: the registration flush is a switch command, so it runs only here. */
export function createSipActivities(deps: AppDeps) {
  return {
    flushSipRegistration: (input: SipTeardownInput) => runSipTeardown(deps, input),
  };
}

export type SipActivities = ReturnType<typeof createSipActivities>;
