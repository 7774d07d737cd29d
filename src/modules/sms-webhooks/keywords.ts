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

const SPANISH = new Set(['ALTO', 'PARAR', 'PARE', 'DETENER', 'CANCELAR', 'BAJA', 'REVOCAR', 'AYUDA', 'COMENZAR', 'INICIAR']);

/** The language to answer a keyword in: Spanish for a Spanish keyword, English otherwise. */
export function keywordLanguage(text: string | null | undefined): 'en' | 'es' {
  return text && SPANISH.has(normalizeKeyword(text)) ? 'es' : 'en';
}

/**
 * CTIA (REGULATIONS M1): STOP and HELP are confirmed by one reply; F25 allows one confirmation text.
 * A Spanish keyword is answered in Spanish, naming Spanish keywords; the Spanish texts avoid letters
 * outside GSM-7 (an accent would make each one a two-segment UCS-2 message).
 */
export const KEYWORD_REPLIES: Record<KeywordAction, Record<'en' | 'es', { kind: string; body: string }>> = {
  optout: {
    en: { kind: 'stop_confirmation', body: 'You are unsubscribed and will receive no more texts from us. Reply START to resubscribe.' },
    es: { kind: 'stop_confirmation', body: 'Usted se dio de baja: ya no le enviaremos mensajes de texto. Responda COMENZAR para volver a suscribirse.' },
  },
  help: {
    en: { kind: 'help_reply', body: 'Account messages. Reply STOP to unsubscribe. Msg&data rates may apply.' },
    es: { kind: 'help_reply', body: 'Mensajes sobre su cuenta. Responda ALTO para darse de baja. Pueden aplicarse tarifas de mensajes y datos.' },
  },
  optin: {
    en: { kind: 'start_confirmation', body: 'You are resubscribed to account texts. Reply STOP to unsubscribe, HELP for help.' },
    es: { kind: 'start_confirmation', body: 'Reactivamos sus mensajes de texto sobre la cuenta. Responda ALTO para darse de baja o AYUDA para obtener ayuda.' },
  },
};

/** The one reply a keyword gets, in the keyword's language. */
export function keywordReply(action: KeywordAction, text: string | null | undefined): { kind: string; body: string } {
  return KEYWORD_REPLIES[action][keywordLanguage(text)];
}

export const KEYWORDS: Readonly<Record<KeywordAction, readonly string[]>> = { optout: OPTOUT, help: HELP, optin: OPTIN };
