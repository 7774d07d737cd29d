import type { AppDeps } from '../src/deps';
import type { InboundActivities } from '../src/contracts/inbound-call';
import { optOutByDigit } from '../src/modules/dialer/call-session.service';
import {
  answerInboundCall,
  connectInboundAgent,
  finishInboundCall,
  hangupInboundCall,
  loadInboundMenu,
  openInboundCall,
  speakInboundMenu,
  startInboundRecording,
} from '../src/modules/inbound-calls/inbound-call.service';

/** The inbound call session's steps (switch commands and the call's rows); every step is safe to repeat. */
export function createInboundActivities(deps: AppDeps): InboundActivities {
  return {
    openInboundCall: (input) => openInboundCall(deps, input),
    answerInboundCall: (ref) => answerInboundCall(deps, ref),
    startInboundRecording: (ref) => startInboundRecording(deps, ref),
    connectInboundAgent: (ref) => connectInboundAgent(deps, ref),
    loadInboundMenu: (ref) => loadInboundMenu(deps, ref),
    speakInboundMenu: (ref) => speakInboundMenu(deps, ref),
    optOutInboundCaller: (ref) => optOutByDigit(deps, ref),
    hangupInboundCall: (ref) => hangupInboundCall(deps, ref),
    finishInboundCall: (ref) => finishInboundCall(deps, ref),
  };
}
