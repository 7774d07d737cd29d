import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Bearer prefixes: tenant API key, dashboard session, widget token, password-reset link. */
/** Bearer credentials, tickets, and `whsec_` webhook signing secrets. */
export type TokenPrefix = 'dd_' | 'ddu_' | 'ddw_' | 'ddr_' | 'ddtt_' | 'ddta_' | 'whsec_';

/** 256 bits of randomness, URL-safe, behind a prefix that says what the token is. */
export function mintToken(prefix: TokenPrefix): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time comparison of two secrets of possibly different lengths. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

const TOKEN_BODY = /^[A-Za-z0-9_-]{43}$/;

/** Which kind of bearer a presented string is, or null when it cannot be one of ours. */
export function classifyBearer(token: string): 'dd_' | 'ddu_' | 'ddw_' | null {
  for (const prefix of ['ddu_', 'ddw_', 'dd_'] as const) {
    if (token.startsWith(prefix) && TOKEN_BODY.test(token.slice(prefix.length))) return prefix;
  }
  return null;
}
