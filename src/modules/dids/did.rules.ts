import { invalid, unprocessable } from '../../lib/errors';
import { E164_RE, isE164 } from '../../lib/phone';

/**
 * Domain rules of the DID registry. Pure. The route checks JSON types and unknown keys (400
 * bad_request); everything here is a rule on a well-typed value (400 invalid).
 */

export const DID_ATTESTATIONS = ['A', 'B', 'C', 'unknown'] as const;
export const DID_STATUSES = ['active', 'quarantine', 'retired'] as const;
export const DID_ORIGINS = ['house', 'customer'] as const;
export type DidAttestation = (typeof DID_ATTESTATIONS)[number];
export type DidStatus = (typeof DID_STATUSES)[number];

export const LABELS_MAX = 32;
export const LABEL_MAX_CHARS = 64;
export const NOTES_MAX_CHARS = 2000;

const NPA_RE = /^[2-9]\d{2}$/;
const US_STATE_RE = /^[A-Za-z]{2}$/;
const charLength = (s: string): number => [...s].length;

/** The area code of a +1 (NANP) number, or null for other countries and non-NANP shapes. */
export function npaOf(e164: string): string | null {
  const match = /^\+1([2-9]\d{2})\d{7}$/.exec(e164);
  return match?.[1] ?? null;
}

export interface DidSettings {
  e164: string;
  npa: string | null;
  us_state: string | null;
  attestation: DidAttestation;
  status: DidStatus;
  labels: string[];
  notes: string | null;
}

export interface DidWrite {
  e164?: string;
  npa?: string | null;
  us_state?: string | null;
  attestation?: string;
  status?: string;
  labels?: string[];
  notes?: string | null;
  /** Accepted and ignored: every DID registered through the API has origin customer. */
  origin?: unknown;
}

const fail = (message: string): never => {
  throw invalid(message);
};

function labelsOf(raw: string[]): string[] {
  if (raw.length > LABELS_MAX) fail(`labels may hold at most ${LABELS_MAX} entries`);
  const out: string[] = [];
  for (const value of raw) {
    const label = value.trim();
    if (label === '' || charLength(label) > LABEL_MAX_CHARS) fail(`labels: each label is 1 to ${LABEL_MAX_CHARS} characters`);
    if (out.includes(label)) fail(`labels lists '${label}' twice`);
    out.push(label);
  }
  return out;
}

/**
 * Applies a create (current null, e164 required) or patch body. npa: omitted on create = derived
 * from a +1 number (null otherwise); for a +1 number an explicit npa must be its area code.
 * us_state is stored uppercase. notes: empty or null clears. Throws 400 invalid naming the field.
 */
export function applyDidWrite(current: DidSettings | null, write: DidWrite): { next: DidSettings; changed: (keyof DidSettings)[] } {
  let next: DidSettings;
  if (current === null) {
    const e164 = write.e164 ?? '';
    if (!E164_RE.test(e164)) fail(`e164: '${e164}' is not a valid E.164 number`);
    // The published pattern admits it; only the numbering plan of its country refuses it (semantics, not shape).
    if (!isE164(e164)) throw unprocessable(`e164: '${e164}' is not a possible number of its country`);
    next = { e164, npa: npaOf(e164), us_state: null, attestation: 'unknown', status: 'active', labels: [], notes: null };
  } else {
    next = { ...current };
  }
  if (write.npa !== undefined) {
    if (write.npa !== null && !NPA_RE.test(write.npa)) fail('npa must be three digits, the first 2-9');
    next.npa = write.npa;
  }
  const derived = npaOf(next.e164);
  if (derived !== null && next.npa !== null && next.npa !== derived) {
    // A rule across two fields (the number decides its area code): semantics, not shape.
    throw unprocessable(`npa must be the area code of ${next.e164} (${derived}) or null`);
  }
  if (write.us_state !== undefined) {
    if (write.us_state !== null && !US_STATE_RE.test(write.us_state)) fail('us_state must be a two-letter code');
    next.us_state = write.us_state === null ? null : write.us_state.toUpperCase();
  }
  if (write.attestation !== undefined) {
    if (!(DID_ATTESTATIONS as readonly string[]).includes(write.attestation)) fail(`attestation must be one of ${DID_ATTESTATIONS.join(', ')}`);
    next.attestation = write.attestation as DidAttestation;
  }
  if (write.status !== undefined) {
    if (!(DID_STATUSES as readonly string[]).includes(write.status)) fail(`status must be one of ${DID_STATUSES.join(', ')}`);
    next.status = write.status as DidStatus;
  }
  if (write.labels !== undefined) next.labels = labelsOf(write.labels);
  if (write.notes !== undefined) {
    if (write.notes !== null && charLength(write.notes) > NOTES_MAX_CHARS) fail(`notes must be at most ${NOTES_MAX_CHARS} characters`);
    next.notes = write.notes === null || write.notes.trim() === '' ? null : write.notes;
  }
  const keys = Object.keys(next) as (keyof DidSettings)[];
  const changed = current === null ? keys : keys.filter((k) => JSON.stringify(current[k]) !== JSON.stringify(next[k]));
  return { next, changed };
}
