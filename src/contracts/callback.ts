/**
 * The callback timer's interface, shared by the API that starts it, the worker that registers its
 * activities and the workflow itself (which imports only the types).
 *
 * One timer per callback (id `callback:<tenant>:<callback id>`). At scheduled_at a callback of a
 * campaign that names no agent is the campaign run's to dial (the timer wakes the run); any other
 * callback (naming its agent, or of no campaign) is dialed by the timer itself through
 * dialCallback, which bridges the named agent only, retried while it cannot be placed yet until
 * the miss window ends. CALLBACK_MISS_AFTER_MS after scheduled_at a callback still pending is missed.
 */

/** The campaign run workflow declares the same name: it dials due callbacks before fresh leads. */
export const CALLBACK_WAKE_SIGNAL = 'wake';
export type CallbackWakeSignal = typeof CALLBACK_WAKE_SIGNAL;

export interface CallbackTimerInput {
  tenantId: string;
  callbackId: string;
  campaignId: string | null;
  /** ISO 8601 instant. */
  scheduledAt: string;
  missAfterMs: number;
  /** A callback the timer dials and cannot place yet (its agent is not reachable, no capacity...) is tried again after this long; default 15 s. */
  retryMs?: number;
  /** ... after this long when the compliance engine refused it (each try is a recorded decision); default 5 minutes. */
  blockedRetryMs?: number;
}

export interface CallbackTimerResult {
  status: string;
}

export interface MissCallbackInput {
  tenantId: string;
  callbackId: string;
}

export interface DialCallbackInput {
  tenantId: string;
  callbackId: string;
  /** The timer's try number (0, 1, ...): the call attempt id derives from it, so a retried activity places its call once. */
  attempt: number;
}

export type DialCallbackResult =
  /** A campaign callback naming no agent: the campaign run dials it. */
  | { outcome: 'run' }
  /** No longer pending (completed, cancelled or missed meanwhile): nothing was dialed. */
  | { outcome: 'closed'; status: string }
  /** Recorded and handed to the switch (placed false: the switch did not take it; the CDR says why). The callback is done. */
  | { outcome: 'dialed'; status: 'done'; callAttemptId: string; placed: boolean }
  /** Not dialable now; `reason` says why, `blocked` when the compliance engine refused it. */
  | { outcome: 'wait'; reason: string; blocked: boolean };

export interface CallbackActivities {
  /** pending to missed (audited, actor workflow); any other status is the final one and stays. */
  missCallbackIfPending(input: MissCallbackInput): Promise<{ status: string }>;
  dialCallback(input: DialCallbackInput): Promise<DialCallbackResult>;
}
