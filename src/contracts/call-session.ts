/** The outbound call session's interface (workflow, activities, the worker's event relay). */

/** One session per consumer call of a tenant: the business key is the switch's call uuid. */
export function callSessionWorkflowId(tenantId: string, callUuid: string): string {
  return `call:${tenantId}:${callUuid}`;
}

/** The signal's name: the workflow defines the signal with it, checked against this type. */
export type CallEventSignalName = 'callEvent';

/** What the switch reported about the call, relayed from its ESL events. */
export type CallSignal =
  | { kind: 'answered'; seq: string; at: string }
  | { kind: 'amd'; seq: string; verdict: string }
  | { kind: 'dtmf'; seq: string; digit: string; at: string }
  | { kind: 'playback_done'; seq: string }
  | { kind: 'speech'; seq: string; text: string; at: string }
  | { kind: 'hangup'; seq: string; at: string; cause: string; sipCode: number | null; answeredAt: string | null };

export interface CallSessionInput {
  tenantId: string;
  callAttemptId: string;
  callUuid: string;
  agentDomain: string | null;
  /** The agent a human-initiated dial named: only that agent takes the call. */
  agentId: string | null;
  /** With no event for this long the session ends; the run's reaper closes the call. */
  idleMs: number;
}

export interface CallRef {
  tenantId: string;
  callAttemptId: string;
  callUuid: string;
}

/**
 * What an answered call gets: a live agent (predictive, progressive, preview, manual), a played
 * message then hang-up (tts_blast), a prompt with a key menu (tts_ivr, ivr_cascade, survey), the
 * campaign's AI agent (ai_voice), or nothing from this loop (sms_blast sends through its own path).
 */
export type CallTreatment = 'agent' | 'message' | 'menu' | 'ai' | 'none';

/** The campaign settings a session reads once, at the answer. */
export interface CallContext {
  campaignId: string | null;
  campaignType: string;
  treatment: CallTreatment;
  amd: boolean;
  deferredBridge: boolean;
  optoutDigit: string | null;
  ivrMenu: Record<string, unknown>;
  ttsPrompt: string | null;
}

/** An agent put on an answered call (connectAgent). */
export interface ConnectRequest extends CallRef {
  /** When the abandonment window opened: the answer, or a menu caller's request for an agent. */
  windowStartMs: number;
  agentDomain: string | null;
  agentId: string | null;
  /** 'menu': the consumer asked for an agent with a menu key; the bridge is a transfer on the timeline. */
  transferFrom?: 'menu';
}

/**
 * `abandoned`: no agent within the window, the seller message spoken. `gone`: the consumer hung up
 * before either; whether that call was abandoned is decided from the hang-up's time.
 */
export type ConnectResult = { status: 'connected'; agentId: string; agentLegUuid: string } | { status: 'abandoned' } | { status: 'gone' };
