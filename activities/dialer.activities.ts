import type { CampaignRunActivities } from '../src/contracts/campaign-run';
import type { CallRef } from '../src/contracts/call-session';
import type { AppDeps } from '../src/deps';
import {
  connectAgent,
  finalizeCall,
  hangupCall,
  loadCallContext,
  markAnswered,
  optOutByDigit,
  recordKeypress,
  speakMenu,
  speakMessage,
} from '../src/modules/dialer/call-session.service';
import { dialTick, placeRecordedCall } from '../src/modules/dialer/dial-tick.service';

/**
 * The campaign run's tick and the call session's steps. Switch faults (EslUnavailableError, a
 * timeout) are transient and left to the retry policy; every step is safe to repeat.
 */
export function createDialerActivities(deps: AppDeps) {
  const run: CampaignRunActivities = { dialTick: (input) => dialTick(deps, input) };
  return {
    ...run,
    placeRecordedCall: (input: Parameters<typeof placeRecordedCall>[1]) => placeRecordedCall(deps, input),
    loadCallContext: (ref: Parameters<typeof loadCallContext>[1]) => loadCallContext(deps, ref),
    markAnswered: (ref: Parameters<typeof markAnswered>[1], answeredAt: string) => markAnswered(deps, ref, answeredAt),
    connectAgent: (ref: Parameters<typeof connectAgent>[1]) => connectAgent(deps, ref),
    // The names are the recorded histories' (played prompts then); the switch speaks the texts now.
    playMessage: (ref: CallRef & { campaignId: string }) => speakMessage(deps, ref),
    playMenu: (ref: CallRef & { campaignId: string; menuPath: string }) => speakMenu(deps, ref),
    hangupCall: (ref: Parameters<typeof hangupCall>[1]) => hangupCall(deps, ref),
    recordKeypress: (ref: Parameters<typeof recordKeypress>[1]) => recordKeypress(deps, ref),
    optOutByDigit: (ref: Parameters<typeof optOutByDigit>[1]) => optOutByDigit(deps, ref),
    finalizeCall: (ref: Parameters<typeof finalizeCall>[1]) => finalizeCall(deps, ref),
  };
}

export type DialerActivities = ReturnType<typeof createDialerActivities>;
