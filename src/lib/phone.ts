import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export const E164_RE = /^\+[1-9]\d{6,14}$/;

/** `***` plus the last four digits: how a phone number appears outside its owner's full view. */
export function maskPhone(phone: string | null | undefined): string | null {
  if (!phone) return null;
  return `***${phone.slice(-4)}`;
}

/** A string already in E.164 form that libphonenumber considers a possible number. */
export function isE164(value: string): boolean {
  if (!E164_RE.test(value)) return false;
  return parsePhoneNumberFromString(value)?.isPossible() ?? false;
}

/**
 * Normalizes an imported number: E.164 kept; a bare 10-digit or 1+10-digit NANP number (area code
 * and exchange starting 2-9) becomes +1NNNNNNNNNN. Anything else is null.
 */
export function normalizeToE164(raw: string): string | null {
  const value = raw.trim();
  if (value.startsWith('+')) return isE164(value) ? value : null;
  const digits = /^1?([2-9]\d{2}[2-9]\d{6})$/.exec(value);
  return digits ? `+1${digits[1]}` : null;
}

export function isNanp(e164: string): boolean {
  return /^\+1[2-9]\d{2}[2-9]\d{6}$/.test(e164);
}
