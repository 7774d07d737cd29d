import { unprocessable } from '../../lib/errors';

/**
 * Domain rules of widget embed origins. Pure. The route checks JSON types and unknown keys (400
 * bad_request); everything here is a rule on a well-typed value (422 unprocessable).
 */

export const LABEL_MAX_CHARS = 200;
/** A host name is at most 253 characters; anything much longer is not an origin. */
export const ORIGIN_MAX_CHARS = 300;
/** Plain http is accepted only for these hosts, so a developer can embed the widget locally. */
export const DEV_HOSTS: readonly string[] = ['localhost', '127.0.0.1'];
export const ORIGIN_RULE = `scheme://host[:port] only (no path other than /, no query, fragment or credentials); https, or http for ${DEV_HOSTS.join(' or ')}; stored lowercase without the default port`;

// The widget_origins CHECK constraint's alphabet: an IPv6 literal or an odd host never reaches it.
const HOST_RE = /^[a-z0-9.-]+$/;
// WHATWG URL repairs sloppy input ("https:\\a.com", "https:a.com"); an origin must be written as one.
const WRITTEN_AS_ORIGIN_RE = /^https?:\/\/[^/?#\\\s]+\/?$/i;

/** The canonical `scheme://host[:port]` of an origin, or null when the value is not one. */
export function normalizeOrigin(raw: string): string | null {
  const value = raw.trim();
  if (value.length === 0 || value.length > ORIGIN_MAX_CHARS || !WRITTEN_AS_ORIGIN_RE.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return null;
  if (!HOST_RE.test(url.hostname)) return null;
  if (url.protocol === 'http:' && !DEV_HOSTS.includes(url.hostname)) return null;
  // url.port is already empty for the scheme's default port.
  return `${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ''}`;
}

/** normalizeOrigin for a request body: 422 naming the rule when the value is not an origin. */
export function checkOrigin(raw: string): string {
  const origin = normalizeOrigin(raw);
  if (origin === null) throw unprocessable(`origin must be ${ORIGIN_RULE}`);
  return origin;
}

/** Trimmed; over LABEL_MAX_CHARS characters is 422. */
export function checkLabel(raw: string | undefined): string {
  const label = (raw ?? '').trim();
  if ([...label].length > LABEL_MAX_CHARS) throw unprocessable(`label must be at most ${LABEL_MAX_CHARS} characters`);
  return label;
}
