import { invalid } from '../../lib/errors';
import { EVENT_CATALOG, type EventName } from '../../lib/events';
import { mintToken } from '../../lib/tokens';

/**
 * Domain rules of outbound webhook endpoints. Pure. The route checks JSON types and unknown keys
 * (400 bad_request); everything here is a rule on a well-typed value (400 invalid).
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const DISABLED_BY_API = 'disabled_by_api';
/** Longer URLs are refused before any DNS work; no receiver needs more. */
export const URL_MAX_CHARS = 2048;
export const SECRET_HINT_CHARS = 4;

const HOUR_MS = 3_600_000;

/** A signing secret: the same 256 random bits, base64url, as the bearer tokens, behind `whsec_`. */
export function mintWebhookSecret(): string {
  return mintToken(WEBHOOK_SECRET_PREFIX);
}

/** What the API shows of a secret: its last characters, enough to tell two secrets apart. */
export function secretHintOf(secret: string): string {
  return secret.slice(-SECRET_HINT_CHARS);
}

/** Non-empty, duplicate-free, every name in the v1 catalog; the first offending name is named. */
export function eventsOf(raw: readonly string[]): EventName[] {
  if (raw.length === 0) throw invalid(`events must name at least one event of the catalog (${EVENT_CATALOG.join(', ')})`);
  const out: EventName[] = [];
  for (const name of raw) {
    if (!(EVENT_CATALOG as readonly string[]).includes(name)) {
      throw invalid(`events: '${name}' is not in the event catalog (${EVENT_CATALOG.join(', ')})`);
    }
    if ((out as string[]).includes(name)) throw invalid(`events lists '${name}' twice`);
    out.push(name as EventName);
  }
  return out;
}

/** The length rule on url; the egress rules (scheme, port, host, addresses) are checkEgressUrl's. */
export function assertUrlLength(url: string): void {
  if (url.length > URL_MAX_CHARS) throw invalid(`url must be at most ${URL_MAX_CHARS} characters`);
}

export function rotationExpiry(now: Date, windowHours: number): Date {
  return new Date(now.getTime() + windowHours * HOUR_MS);
}

/** The retired secret still signs strictly before its expiry. */
export function previousSecretActive(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && now.getTime() < expiresAt.getTime();
}

export interface EndpointState {
  url: string;
  events: EventName[];
  enabled: boolean;
  disabled_reason: string | null;
}

export interface EndpointWrite {
  url?: string;
  events?: EventName[];
  enabled?: boolean;
}

/**
 * The state after a PATCH (url and events already validated). `enabled: true` clears the reason
 * whatever disabled the endpoint; `enabled: false` records the API as the reason, also over an
 * earlier reason (a receiver's 410), since the latest decision is the one that keeps it off.
 * `disabling` says the endpoint stops receiving, so its pending deliveries must be cancelled.
 */
export function applyEndpointWrite(current: EndpointState, write: EndpointWrite): { next: EndpointState; changed: (keyof EndpointState)[]; disabling: boolean } {
  const next: EndpointState = { ...current };
  if (write.url !== undefined) next.url = write.url;
  if (write.events !== undefined) next.events = write.events;
  if (write.enabled === true) {
    next.enabled = true;
    next.disabled_reason = null;
  } else if (write.enabled === false) {
    next.enabled = false;
    next.disabled_reason = DISABLED_BY_API;
  }
  const keys = Object.keys(next) as (keyof EndpointState)[];
  const changed = keys.filter((k) => JSON.stringify(current[k]) !== JSON.stringify(next[k]));
  return { next, changed, disabling: !next.enabled && changed.includes('disabled_reason') };
}
