/**
 * The live AI call's interface (`ai-call:<tenant>:<call uuid>`), shared by the workflow (which
 * imports only the types), its activities, the call session that starts and signals it, the kill
 * switch and takeover routes, and the audio gateway that signals what the consumer said. Its id is
 * workflows/ids.ts aiCallWorkflowId.
 */

export interface AiCallRef {
  tenantId: string;
  callAttemptId: string;
  callUuid: string;
}

export interface AiCallInput extends AiCallRef {
  answeredAt: string;
}

export interface AiCallResult {
  outcome: string | null;
  /** The agent the consumer was handed to (the call's final row names it and releases it). */
  agentId: string | null;
}

/**
 * One consumer utterance. `text` is sealed (ai-speech.seal.ts): signals stay in the workflow
 * history. The switch's own recognizer (`dd::speech`) reports words only; the product's audio
 * gateway adds its recognizer's confidence (0..1) and the utterance's offsets in the call's audio
 * stream (milliseconds from the fork's first frame).
 */
export interface AiSpeech {
  seq: string;
  text: string;
  at: string;
  confidence?: number;
  startMs?: number;
  endMs?: number;
}

export const AI_SPEECH_SIGNAL = 'aiSpeech';
export type AiSpeechSignalName = typeof AI_SPEECH_SIGNAL;
/** A prompt the AI queued finished playing. */
export const AI_SPOKEN_SIGNAL = 'aiSpoken';
export type AiSpokenSignalName = typeof AI_SPOKEN_SIGNAL;
/** The consumer leg is gone: stop at once, say nothing more. */
export const AI_HANGUP_SIGNAL = 'aiHangup';
export type AiHangupSignalName = typeof AI_HANGUP_SIGNAL;
/** The tenant's kill switch: hand off if a person is free, else say goodbye and hang up. */
export const AI_STOP_SIGNAL = 'aiStop';
export type AiStopSignalName = typeof AI_STOP_SIGNAL;
export interface AiStop {
  reason: 'paused';
}
/** A person takes the call over (POST /v1/ai/conversations/{id}/takeover, already audited). */
export const AI_TAKEOVER_SIGNAL = 'aiTakeover';
export type AiTakeoverSignalName = typeof AI_TAKEOVER_SIGNAL;
export interface AiTakeover {
  agentId: string | null;
  extension: string | null;
}
export const AI_CALL_STATE_QUERY = 'aiCallState';
export type AiCallStateQueryName = typeof AI_CALL_STATE_QUERY;
export interface AiCallState {
  phase: string;
  turns: number;
  outcome: string | null;
}

/** What the workflow needs of one engine turn: never the words or the engine state. */
export interface AiTurnResult {
  conversationId: string;
  turn: number;
  /** Whether the turn has something to say (speakAiTurn says its stored sentences). */
  speaks: boolean;
  outcome: string | null;
  handoff: boolean;
  ended: boolean;
}

export type AiBeginResult =
  | ({
      status: 'started';
      maxSeconds: number;
      /**
       * Seconds of the tenant's ai_monthly_budget_usd left at the answer (at AI_MINUTE_RATE_USD), after which
       * the AI says goodbye and hangs up; null or absent: no budget (histories before it have none).
       */
      budgetSeconds?: number | null;
    } & AiTurnResult)
  | { status: 'refused'; reason: string; maxSeconds: number };

/**
 * The consumer's audio path for the call: `fork` (uuid_audio_fork connected to the audio gateway),
 * `switch` (no gateway configured: the switch's own recognizer reports `dd::speech`), or `failed`
 * (the module is not loaded, the switch refused the fork or it could not connect): the AI must not
 * talk to a consumer it cannot hear.
 */
export type AiAudioForkResult = { status: 'fork' | 'switch' } | { status: 'failed'; reason: string };

export interface AiTurnInput extends AiCallRef {
  turn: number;
  utterance: string;
  at: string;
  answeredAt: string;
  confidence?: number;
  startMs?: number;
  endMs?: number;
}

export interface AiEndInput extends AiCallRef {
  outcome: string;
  reason: string;
  goodbye: boolean;
  at: string;
  answeredAt: string | null;
  /** Say the agent's artificial-voice disclosure before the goodbye (nothing was said before it). */
  identify?: boolean;
}

/** The activities the workflow calls (activities/ai-call.activities.ts implements them). */
export interface AiCallActivities {
  beginAiCall(ref: AiCallRef & { answeredAt: string }): Promise<AiBeginResult>;
  startAudioFork(ref: AiCallRef): Promise<AiAudioForkResult>;
  respondAiTurn(ref: AiTurnInput): Promise<AiTurnResult | null>;
  speakAiTurn(ref: AiCallRef & { conversationId: string; turn: number }): Promise<void>;
  endAiConversation(ref: AiEndInput): Promise<{ spoke: boolean; conversationId: string | null }>;
  bridgeAiCallToHuman(ref: AiCallRef & { agentId: string | null; extension: string | null }): Promise<{ agentId: string | null; extension: string } | null>;
  hangupAiCall(ref: AiCallRef & { cause: string }): Promise<void>;
  meterAiCall(ref: AiCallRef & { answeredAt: string; endedAt: string }): Promise<{ metered: boolean }>;
}
