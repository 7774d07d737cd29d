/** Callback rules (SPEC "Callback" states, "Limits": callback lead time). Pure. */

export const CALLBACK_STATUSES = ['pending', 'done', 'cancelled', 'missed'] as const;
export type CallbackStatus = (typeof CALLBACK_STATUSES)[number];

/** POST /v1/callbacks/{id}/<verb> and the status each verb sets; all of them from pending only. */
export const CALLBACK_VERBS = { complete: 'done', cancel: 'cancelled', miss: 'missed' } as const satisfies Record<string, CallbackStatus>;
export type CallbackVerb = keyof typeof CALLBACK_VERBS;

/** A callback must be scheduled at least this far ahead. */
export const MIN_LEAD_MS = 10 * 60_000;

/** Values of `due` that ask for the due queue, and those that are the same as omitting it. */
export const DUE_TRUE = ['now', 'true', '1'] as const;
export const DUE_FALSE = ['false', '0'] as const;

/** Why scheduled_at is refused (422), or null. */
export function leadTimeError(scheduledAt: Date, now: Date): string | null {
  if (scheduledAt.getTime() < now.getTime() + MIN_LEAD_MS) {
    return `scheduled_at must be at least ${MIN_LEAD_MS / 60_000} minutes ahead (not before ${new Date(now.getTime() + MIN_LEAD_MS).toISOString()})`;
  }
  return null;
}

/** The status a verb moves a callback to, or null when the callback is not pending (409). */
export function callbackTransition(from: string, verb: CallbackVerb): CallbackStatus | null {
  return from === 'pending' ? CALLBACK_VERBS[verb] : null;
}

export interface NumberHolds {
  /** The number is one of the tenant's DIDs in status quarantine. */
  didQuarantine: boolean;
  /** The number has an active entry on the tenant's do-not-call list. */
  doNotCall: boolean;
}

/** Why the number is in quarantine for callbacks (422), or null. */
export function quarantineError(holds: NumberHolds): string | null {
  if (holds.didQuarantine) return 'contact_phone is in quarantine: it is a number of the tenant\'s DID registry in status quarantine';
  if (holds.doNotCall) return 'contact_phone is in quarantine: it is on the tenant\'s do-not-call list';
  return null;
}
