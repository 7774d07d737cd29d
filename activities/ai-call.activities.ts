import type { AppDeps } from '../src/deps';
import type { AiCallActivities } from '../src/contracts/ai-call';
import {
  beginAiCall,
  bridgeAiCallToHuman,
  endAiConversation,
  hangupAiCall,
  meterAiCall,
  respondAiTurn,
  speakAiTurn,
} from '../src/modules/ai-calls/ai-call.service';
import { startAudioFork } from '../src/modules/ai-calls/audio-fork';

/** The side effects of a live AI call: the audio fork, engine turns and their records, speech, handoff, metering. */
export function createAiCallActivities(deps: AppDeps): AiCallActivities {
  return {
    beginAiCall: (ref) => beginAiCall(deps, ref),
    startAudioFork: (ref) => startAudioFork(deps, ref),
    respondAiTurn: (ref) => respondAiTurn(deps, ref),
    speakAiTurn: (ref) => speakAiTurn(deps, ref),
    endAiConversation: (ref) => endAiConversation(deps, ref),
    bridgeAiCallToHuman: (ref) => bridgeAiCallToHuman(deps, ref),
    hangupAiCall: (ref) => hangupAiCall(deps, ref),
    meterAiCall: (ref) => meterAiCall(deps, ref),
  };
}
