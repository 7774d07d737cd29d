/**
 * Inbound SMS keywords (SPEC "Provider webhooks", REGULATIONS.md M1, M2, F25). A keyword is the
 * whole message: "STOP", " stop! ", "Opt-out." match; "stop calling my mother" does not (it is
 * streamed as sms.received, where a person reads it: F25's "other clear wording" needs judgement,
 * not a word list).
 */
export type KeywordAction = 'optout' | 'help' | 'optin';

const OPTOUT = [
  // CTIA and carriers (M1), TCPA per-se revocation words (M2, F25).
  'STOP', 'STOPALL', 'STOP ALL', 'UNSUBSCRIBE', 'CANCEL', 'QUIT', 'END', 'REVOKE', 'OPT OUT', 'OPTOUT', 'REMOVE',
  // Spanish.
  'ALTO', 'PARAR', 'PARE', 'DETENER', 'CANCELAR', 'BAJA', 'REVOCAR',
];
const HELP = ['HELP', 'INFO', 'AYUDA'];
// YES (M1) is left out on purpose: in a collection conversation "yes" usually answers a person,
// and re-granting consent on a misread reply is the costly mistake; START always works.
const OPTIN = ['START', 'UNSTOP', 'COMENZAR', 'INICIAR'];

const TABLE = new Map<string, KeywordAction>([
  ...OPTOUT.map((k) => [k, 'optout'] as const),
  ...HELP.map((k) => [k, 'help'] as const),
  ...OPTIN.map((k) => [k, 'optin'] as const),
]);

/** Upper case, accents dropped, every run of non-letters/digits one space, trimmed. */
export function normalizeKeyword(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The action a whole inbound message asks for, or null when it is not a keyword. */
export function classifyKeyword(text: string | null | undefined): KeywordAction | null {
  if (!text) return null;
  return TABLE.get(normalizeKeyword(text)) ?? null;
}

export const KEYWORDS: Readonly<Record<KeywordAction, readonly string[]>> = { optout: OPTOUT, help: HELP, optin: OPTIN };
