import { isValidPhoneNumber } from 'libphonenumber-js/max';
import type { Tier } from './tenant.schemas';

/** Tiers that offer a voice-AI allowance; starter and dialer_core reject voice_ai_enabled. */
export const VOICE_AI_TIERS: ReadonlySet<Tier> = new Set(['growth', 'scale', 'enterprise', 'compliance_pro', 'audit_shield']);
/** Retired tiers: kept by tenants already on them, never newly assigned. */
export const RETIRED_TIERS: ReadonlySet<Tier> = new Set(['compliance_pro', 'audit_shield']);

export const SIP_EXTENSION_RE = /^[A-Za-z0-9._-]{1,64}$/;
// Deliberately plain: one @, no spaces, a dot in the domain. Deliverability is the mail's problem.
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL_RE.test(value);
}

export function isE164(value: string): boolean {
  return /^\+[1-9]\d{6,14}$/.test(value) && isValidPhoneNumber(value);
}

export interface TierChange {
  currentTier: Tier | null;
  nextTier: Tier;
  voiceAiEnabled: boolean;
}

/** Returns why a tier / voice-AI combination is refused, or null when it is allowed. */
export function tierProblem({ currentTier, nextTier, voiceAiEnabled }: TierChange): string | null {
  if (RETIRED_TIERS.has(nextTier) && currentTier !== nextTier) {
    return `tier ${nextTier} is retired and cannot be assigned`;
  }
  if (voiceAiEnabled && !VOICE_AI_TIERS.has(nextTier)) {
    return `voice_ai_enabled is not available on tier ${nextTier}`;
  }
  return null;
}

export function effectiveAiMaxCallSeconds(own: number | null, platformDefault: number): number {
  return own ?? platformDefault;
}
