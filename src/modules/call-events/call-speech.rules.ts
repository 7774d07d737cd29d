/**
 * The words the product says on a call when no campaign or AI chose them, as pure functions: the
 * tests and the switch say the same text.
 */

/** A phone number read digit by digit (a TTS engine reads a digit run as one large number); NANP grouped 3-3-4. */
export function spokenPhone(e164: string): string {
  const digits = e164.replace(/\D/g, '');
  const national = digits.length === 11 && digits.startsWith('1') ? digits.slice(1) : digits;
  const spell = (s: string) => s.split('').join(' ');
  if (national.length === 10 && national !== digits) {
    return `${spell(national.slice(0, 3))}, ${spell(national.slice(3, 6))}, ${spell(national.slice(6))}`;
  }
  return spell(digits);
}

/**
 * The identification message of an abandoned call (47 CFR 64.1200(a)(7)(i)(A)): who the call was
 * placed for and a number to reach them and ask not to be called again. A tenant without a seller
 * name or number hears what it configured (the dial loop allows no over-dial without both).
 */
export function sellerMessage(sellerName: string | null, sellerPhone: string | null): string {
  const who = sellerName?.trim() ? `This call was placed on behalf of ${sellerName.trim()}.` : 'We are sorry we missed you.';
  const reach = sellerPhone?.trim()
    ? ` To reach us, or to ask not to be called again, call ${spokenPhone(sellerPhone)}.`
    : '';
  return `${who}${reach} Goodbye.`;
}

/** The notice where no recording policy row names one (recording_policies.notice_text's default). */
export const DEFAULT_RECORDING_NOTICE = 'This call may be recorded for quality and compliance purposes.';
