/** The inbound call session's interface (workflow, activities, the worker's event relay). */

/** One session per inbound call of a tenant: the business key is the switch's call uuid. */
export function inboundCallWorkflowId(tenantId: string, callUuid: string): string {
  return `inbound-call:${tenantId}:${callUuid}`;
}

/** The signal's name: the workflow defines the signal with it, checked against this type. */
export type InboundEventSignalName = 'inboundEvent';

/** What the switch reported about the inbound leg, relayed from its ESL events. */
export type InboundSignal =
  | { kind: 'dtmf'; seq: string; digit: string; at: string }
  | { kind: 'hangup'; seq: string; at: string; cause: string; sipCode: number | null; answeredAt: string | null };

export type InboundDestType = 'agent' | 'ivr' | 'queue';

/** The route the called number resolved to (auth_inbound_route), and the call as the switch parked it. */
export interface InboundCallInput {
  tenantId: string;
  routeId: string;
  destType: InboundDestType;
  destRef: string | null;
  recording: boolean;
  queueStreamEnabled: boolean;
  callUuid: string;
  /** The caller's number as the switch reported it. */
  caller: string;
  /** The tenant's DID the caller dialed (E.164). */
  did: string;
  /** When the switch parked the call. */
  arrivedAt: string;
  /** With no event for this long after the last step the session ends with what it knows. */
  idleMs: number;
}

export type InboundOutcome = 'answered' | 'no_agent' | 'queue_disabled' | 'gone';

export interface InboundCallResult {
  callAttemptId: string;
  outcome: InboundOutcome;
  agentId: string | null;
  disposition: string;
}

export interface InboundCallRef {
  tenantId: string;
  callAttemptId: string;
  callUuid: string;
}

export interface OpenedInboundCall extends InboundCallRef {
  debtId: string | null;
}

export interface InboundRecordingStart {
  startedAt: string;
  twoPartyConsentState: string | null;
  consentNoticePlayed: boolean;
}

export interface InboundActivities {
  /** The call's CDR row (direction inbound, the debt matched by the caller's number); idempotent per call uuid. */
  openInboundCall(input: InboundCallInput): Promise<OpenedInboundCall>;
  /** Answers the parked leg; false when the caller is gone. */
  answerInboundCall(ref: InboundCallRef): Promise<boolean>;
  /** Starts the recording with the consent notice first where all-party consent applies (the recording service's policy). */
  startInboundRecording(ref: InboundCallRef): Promise<InboundRecordingStart | null>;
  /**
   * Rings the seat the route names (its sip_extension) or, with none, any reachable seat, and
   * bridges it to the caller; records the conversation when the caller matched a debt.
   */
  connectInboundAgent(ref: InboundCallRef & { extension: string | null; transferFrom?: 'menu' }): Promise<{ status: 'connected'; agentId: string } | { status: 'no_agent' | 'gone' }>;
  /** Says the route's menu prompt (the campaign menu engine's shape). */
  speakInboundMenu(ref: InboundCallRef & { text: string }): Promise<void>;
  /** The campaign menu an ivr route names (dest_ref), or null. */
  loadInboundMenu(ref: InboundCallRef & { campaignId: string | null }): Promise<Record<string, unknown> | null>;
  /** The caller pressed a menu's opt-out key: the number is listed and its voice consent revoked (as on a dialer call). */
  optOutInboundCaller(ref: InboundCallRef & { digit: string; at: string }): Promise<void>;
  /** Ends the leg (unanswered with the given cause, or after its treatment). */
  hangupInboundCall(ref: InboundCallRef & { cause: string }): Promise<void>;
  /** The call's final row at hangup; frees the seat it held. */
  finishInboundCall(
    ref: InboundCallRef & { endedAt: string; answeredAt: string | null; disposition: string; hangupCause: string; sipCode: number | null; agentId: string | null },
  ): Promise<void>;
}
