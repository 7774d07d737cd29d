import type { AppDeps } from '../src/deps';
import type { CallRef } from '../src/modules/dialer/call-session.service';
import {
  beginAiCall,
  bridgeAiCallToHuman,
  endAiConversation,
  hangupAiCall,
  meterAiCall,
  respondAiTurn,
  speakAiTurn,
} from '../src/modules/ai-calls/ai-call.service';

/** The side effects of a live AI call: engine turns and their records, speech, handoff, metering. */
export function createAiCallActivities(deps: AppDeps) {
  return {
    beginAiCall: (ref: CallRef & { answeredAt: string }) => beginAiCall(deps, ref),
    respondAiTurn: (ref: CallRef & { turn: number; utterance: string; at: string; answeredAt: string }) => respondAiTurn(deps, ref),
    speakAiTurn: (ref: CallRef & { conversationId: string; turn: number }) => speakAiTurn(deps, ref),
    endAiConversation: (ref: CallRef & { outcome: string; reason: string; goodbye: boolean; at: string; answeredAt: string | null }) =>
      endAiConversation(deps, ref),
    bridgeAiCallToHuman: (ref: CallRef & { agentId: string | null; extension: string | null }) => bridgeAiCallToHuman(deps, ref),
    hangupAiCall: (ref: CallRef & { cause: string }) => hangupAiCall(deps, ref),
    meterAiCall: (ref: CallRef & { answeredAt: string; endedAt: string }) => meterAiCall(deps, ref),
  };
}

export type AiCallActivities = ReturnType<typeof createAiCallActivities>;
