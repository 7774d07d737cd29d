import { invalid, unprocessable } from '../../lib/errors';
import { E164_RE, isE164 } from '../../lib/phone';

/**
 * Shape rules of inbound routes. Pure: 400 invalid on a well-typed value. The rules that read the
 * tenant's data (DID held, agent, IVR campaign, voice AI) live in the service as 422.
 */

export const DEST_TYPES = ['agent', 'queue', 'ivr'] as const;
export const ROUTE_STATUSES = ['active', 'disabled'] as const;
export type DestType = (typeof DEST_TYPES)[number];
export type RouteStatus = (typeof ROUTE_STATUSES)[number];

export const DEST_REF_MAX_CHARS = 200;
export const NOTES_MAX_CHARS = 2000;

export interface RouteSettings {
  dest_type: DestType;
  dest_ref: string | null;
  recording: boolean;
  ai_enabled: boolean;
  status: RouteStatus;
  notes: string | null;
}

export interface RouteWrite {
  dest_type?: DestType;
  dest_ref?: string | null;
  recording?: boolean;
  ai_enabled?: boolean;
  status?: RouteStatus;
  notes?: string | null;
}

export function e164Of(raw: string): string {
  if (!E164_RE.test(raw)) throw invalid(`e164: '${raw}' is not a valid E.164 number`);
  // The published pattern admits it; only the numbering plan of its country refuses it (semantics, not shape).
  if (!isE164(raw)) throw unprocessable(`e164: '${raw}' is not a possible number of its country`);
  return raw;
}

/** A new route's settings before its body is applied (dest_type is required by the create body). */
export const newRoute = (destType: DestType): RouteSettings => ({ dest_type: destType, dest_ref: null, recording: false, ai_enabled: false, status: 'active', notes: null });

/** Applies a body to the current settings; blank dest_ref and notes are stored null. */
export function applyRouteWrite(current: RouteSettings, write: RouteWrite): { next: RouteSettings; changed: (keyof RouteSettings)[] } {
  const next: RouteSettings = { ...current };
  if (write.dest_type !== undefined) next.dest_type = write.dest_type;
  if (write.dest_ref !== undefined) {
    const ref = write.dest_ref === null ? '' : write.dest_ref.trim();
    if ([...ref].length > DEST_REF_MAX_CHARS) throw invalid(`dest_ref must be at most ${DEST_REF_MAX_CHARS} characters`);
    next.dest_ref = ref === '' ? null : ref;
  }
  if (write.recording !== undefined) next.recording = write.recording;
  if (write.ai_enabled !== undefined) next.ai_enabled = write.ai_enabled;
  if (write.status !== undefined) next.status = write.status;
  if (write.notes !== undefined) {
    if (write.notes !== null && [...write.notes].length > NOTES_MAX_CHARS) throw invalid(`notes must be at most ${NOTES_MAX_CHARS} characters`);
    next.notes = write.notes === null || write.notes.trim() === '' ? null : write.notes;
  }
  const keys = Object.keys(next) as (keyof RouteSettings)[];
  const changed = keys.filter((k) => current[k] !== next[k]);
  return { next, changed };
}
