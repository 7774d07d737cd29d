/**
 * The outcome plan of CONTRACT.md section 2: the last two digits of an originated consumer
 * destination decide what the far end does.
 *
 * | digits | kind      | far end                                                       |
 * |--------|-----------|---------------------------------------------------------------|
 * | 00-59  | human     | answers after ringMs, AMD HUMAN, talks talkMs, hangs up NORMAL_CLEARING (SIP 200) |
 * | 60-69  | machine   | answers after ringMs, AMD MACHINE, greeting of talkMs, hangs up NORMAL_CLEARING  |
 * | 70-79  | busy      | USER_BUSY, SIP 486, after ringMs                              |
 * | 80-89  | no_answer | NO_ANSWER, SIP 480, after ringMs                              |
 * | 90-99  | rejected  | CALL_REJECTED, SIP 403, after ringMs                          |
 */
export type OutcomeKind = 'human' | 'machine' | 'busy' | 'no_answer' | 'rejected';

export type AmdVerdict = 'HUMAN' | 'MACHINE';

export interface AnsweredOutcome {
  kind: 'human' | 'machine';
  answered: true;
  amd: AmdVerdict;
  amdCause: string;
}

export interface FailedOutcome {
  kind: 'busy' | 'no_answer' | 'rejected';
  answered: false;
  hangupCause: 'USER_BUSY' | 'NO_ANSWER' | 'CALL_REJECTED';
  sipStatus: 486 | 480 | 403;
}

export type Outcome = AnsweredOutcome | FailedOutcome;

/** The outcome for a destination, or null when it has fewer than two digits. */
export function outcomeFor(destination: string): Outcome | null {
  const digits = destination.replace(/\D/g, '');
  if (digits.length < 2) return null;
  const last2 = Number(digits.slice(-2));
  if (last2 < 60) return { kind: 'human', answered: true, amd: 'HUMAN', amdCause: 'HUMAN' };
  if (last2 < 70) return { kind: 'machine', answered: true, amd: 'MACHINE', amdCause: 'LONGGREETING' };
  if (last2 < 80) return { kind: 'busy', answered: false, hangupCause: 'USER_BUSY', sipStatus: 486 };
  if (last2 < 90) return { kind: 'no_answer', answered: false, hangupCause: 'NO_ANSWER', sipStatus: 480 };
  return { kind: 'rejected', answered: false, hangupCause: 'CALL_REJECTED', sipStatus: 403 };
}

/** Q.850 codes of the hangup causes FreeSWITCH names (switch_channel.c CAUSE_CHART, common subset). */
export const HANGUP_CAUSES: Readonly<Record<string, number>> = {
  UNSPECIFIED: 0,
  UNALLOCATED_NUMBER: 1,
  NO_ROUTE_TRANSIT_NET: 2,
  NO_ROUTE_DESTINATION: 3,
  NORMAL_CLEARING: 16,
  USER_BUSY: 17,
  NO_USER_RESPONSE: 18,
  NO_ANSWER: 19,
  SUBSCRIBER_ABSENT: 20,
  CALL_REJECTED: 21,
  NUMBER_CHANGED: 22,
  DESTINATION_OUT_OF_ORDER: 27,
  INVALID_NUMBER_FORMAT: 28,
  FACILITY_REJECTED: 29,
  NORMAL_UNSPECIFIED: 31,
  NORMAL_CIRCUIT_CONGESTION: 34,
  NETWORK_OUT_OF_ORDER: 38,
  NORMAL_TEMPORARY_FAILURE: 41,
  SWITCH_CONGESTION: 42,
  REQUESTED_CHAN_UNAVAIL: 44,
  BEARERCAPABILITY_NOTAVAIL: 58,
  CHAN_NOT_IMPLEMENTED: 66,
  INCOMPATIBLE_DESTINATION: 88,
  RECOVERY_ON_TIMER_EXPIRE: 102,
  INTERWORKING: 127,
  ORIGINATOR_CANCEL: 487,
  CRASH: 500,
  SYSTEM_SHUTDOWN: 501,
  LOSE_RACE: 502,
  MANAGER_REQUEST: 503,
  BLIND_TRANSFER: 600,
  ATTENDED_TRANSFER: 601,
  ALLOTTED_TIMEOUT: 602,
  USER_CHALLENGE: 603,
  MEDIA_TIMEOUT: 604,
  PICKED_OFF: 605,
  USER_NOT_REGISTERED: 606,
  PROGRESS_TIMEOUT: 607,
};
