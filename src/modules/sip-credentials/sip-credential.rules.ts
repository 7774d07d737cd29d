import { randomBytes } from 'node:crypto';

/** Why a SIP credential stopped being live (agent_sip_credentials.revoked_reason). */
export const SIP_REVOKED_SUPERSEDED = 'superseded';
export const SIP_REVOKED_CHECKED_OUT = 'checked_out';

/**
 * A SIP username unique across every tenant (the switch's directory is one namespace, and the
 * unique index agent_sip_credentials_username_key enforces it): 96 random bits, so a collision is
 * not a case worth retrying. Letters and digits only, valid in any SIP URI user part.
 */
export function newSipUsername(): string {
  return `dd${randomBytes(12).toString('hex')}`;
}

/** 192 random bits; base64url keeps it inside the SIP digest's unquoted-safe characters. */
export function newSipPassword(): string {
  return randomBytes(24).toString('base64url');
}
