/**
 * The artificial-voice disclosure content check (47 CFR 64.1200(b); FCC 24-17: AI-generated voices
 * are "artificial"). Pure and dependency-free: the disclosure routes, the compliance engine (an
 * artificial-voice call without an acceptable disclosure is refused) and AI agents all use it.
 *
 * The rule, per sentence and per language (English, Spanish; a text may mix both):
 *
 * 1. An ANCHOR says the sentence is about the call itself: a self-reference ("this is", "you are",
 *    "I am", "calling", "esta es", "soy", "está hablando con", "le llamamos"), an anchor that names
 *    the call, message or voice ("this call", "this message", "esta llamada", "este mensaje"), or
 *    a bare determiner ("this", "esta", "este") directly in front of the identification.
 * 2. After the anchor, within 8 words (0 for a bare determiner), comes the IDENTIFICATION: a term
 *    for automation next to a term for the call, voice, message or assistant (at most 2 words
 *    apart, either order: "automated call", "call is automated", "llamada automatizada", "voz
 *    artificial"), or a term that is both ("robocall", "robot", "bot", "AI", "artificial
 *    intelligence", "inteligencia artificial", "IA", "recorded message", "mensaje grabado"). An
 *    anchor that names the call itself needs only the automation term within 2 words ("this call
 *    is automated", "este mensaje es pregrabado"). The call, voice or message is singular: a
 *    plural ("automated calls", "llamadas automatizadas") is a statement about calls in general.
 * 3. No NEGATION between the anchor and the identification, nor in the two words before the
 *    anchor (up to a comma): "this is not an automated call", "no es una llamada automatizada",
 *    "usted no está hablando con un asistente virtual". A BREAK word ends the search: a
 *    conjunction ("and", "but", "y", "pero") or a word for a human ("person", "real", "humano").
 *
 * The text is acceptable when at least one sentence identifies the call as automated and no
 * sentence negates it. Matching ignores case, accents and punctuation; sentences end at . ! ? ; :
 * ¡ ¿ and line breaks. "Recorded" alone never counts ("this call may be recorded" is a recording
 * notice, not a disclosure), nor do words like "automated" or "AI" without a self-reference ("our
 * automated system is open 24/7", "automated calls are regulated").
 */

type Phrase = readonly string[];
type AnchorKind = 'self' | 'subject' | 'determiner';

interface Anchor {
  words: Phrase;
  kind: AnchorKind;
}

interface LanguageRules {
  language: 'en' | 'es';
  anchors: readonly Anchor[];
  /** Terms for automation ("automated", "artificial", "pregrabado"). */
  automation: readonly Phrase[];
  /** Terms for what is automated: call, voice, message, assistant, ... */
  subjects: readonly Phrase[];
  /** Terms that are both at once ("robocall", "AI", "inteligencia artificial"). */
  standalone: readonly Phrase[];
  isNegation(word: string): boolean;
  breaks: ReadonlySet<string>;
}

/** Words between an anchor and the start of the identification. */
export const ANCHOR_WINDOW = 8;
/** Words between the two halves of an identification ("call is automated": 1). */
export const PAIR_GAP = 2;
/** Words before an anchor searched for a negation ("usted no está hablando"). */
const LOOKBEHIND = 2;

const words = (list: string[]): Phrase[] => list.map((p) => p.split(' '));
const anchors = (kind: AnchorKind, list: string[]): Anchor[] => list.map((p) => ({ words: p.split(' '), kind }));
/** Spanish adjectives in their four forms: stem + a, o, as, os. */
const gendered = (stems: string[]): string[] => stems.flatMap((s) => [`${s}a`, `${s}o`, `${s}as`, `${s}os`]);

const ENGLISH: LanguageRules = {
  language: 'en',
  anchors: [
    ...anchors('self', [
      'this is',
      "it's",
      'you are',
      "you're",
      'you have reached',
      "you've reached",
      'you will hear',
      'i am',
      "i'm",
      'calling',
      'speaking with',
      'speaking to',
      'talking with',
      'talking to',
      'listening to',
      'hearing',
    ]),
    ...anchors('subject', [
      'this call',
      'this phone call',
      'this message',
      'this voice',
      'this recording',
      'this conversation',
      'the voice you hear',
      'the voice you are hearing',
      "the voice you're hearing",
    ]),
    ...anchors('determiner', ['this', 'the following']),
  ],
  automation: words([
    'automated',
    'automatic',
    'automatically',
    'prerecorded',
    'pre recorded',
    'artificial',
    'artificially',
    'ai generated',
    'ai powered',
    'computer generated',
    'machine generated',
    'synthetic',
    'synthesized',
    'virtual',
    'digital',
    'robotic',
    'text to speech',
  ]),
  subjects: words([
    'call',
    'phone call',
    'message',
    'voice',
    'assistant',
    'agent',
    'system',
    'recording',
    'caller',
    'attendant',
    'announcement',
    'operator',
    'notification',
    'reminder',
  ]),
  standalone: words([
    'robocall',
    'robot',
    'bot',
    'chatbot',
    'voicebot',
    'ai',
    'artificial intelligence',
    'recorded message',
    'recorded voice',
    'recorded announcement',
  ]),
  isNegation: (w) => ['not', 'never', 'neither', 'nor', 'cannot', 'nothing'].includes(w) || w.endsWith("n't"),
  breaks: new Set(['and', 'but', 'or', 'however', 'although', 'though', 'whereas', 'human', 'humans', 'person', 'people', 'real', 'live', 'your']),
};

const SPANISH: LanguageRules = {
  language: 'es',
  anchors: [
    ...anchors('self', [
      'esta es',
      'este es',
      'esto es',
      'soy',
      'le habla',
      'les habla',
      'te habla',
      'habla con',
      'hablando con',
      'usted esta',
      'llamando',
      'le llamamos',
      'lo llamamos',
      'la llamamos',
      'les llamamos',
      'te llamamos',
      'le llamo',
      'se trata de',
      'escucha',
      'escuchando',
      'se comunica con',
    ]),
    ...anchors('subject', [
      'esta llamada',
      'este mensaje',
      'esta voz',
      'esta grabacion',
      'esta conversacion',
      'la voz que escucha',
      'la voz que esta escuchando',
    ]),
    ...anchors('determiner', ['esta', 'este', 'el siguiente', 'la siguiente']),
  ],
  automation: words([
    ...gendered(['automatizad', 'automatic', 'pregrabad', 'pre grabad', 'sintetic', 'sintetizad', 'robotic']),
    'automaticamente',
    'artificial',
    'artificiales',
    'virtual',
    'virtuales',
    'digital',
    'digitales',
    'generada por computadora',
    'generado por computadora',
    'generada por ordenador',
    'generado por ordenador',
  ]),
  subjects: words([
    'llamada',
    'mensaje',
    'voz',
    'asistente',
    'agente',
    'sistema',
    'grabacion',
    'operador',
    'operadora',
    'contestadora',
    'notificacion',
    'recordatorio',
  ]),
  standalone: words([
    'robot',
    'bot',
    'chatbot',
    'ia',
    'inteligencia artificial',
    'mensaje grabado',
    'voz grabada',
    'robollamada',
  ]),
  isNegation: (w) => ['no', 'nunca', 'jamas', 'ni', 'tampoco', 'ningun', 'ninguna', 'ninguno'].includes(w),
  breaks: new Set(['y', 'pero', 'o', 'sino', 'aunque', 'mientras', 'persona', 'personas', 'humano', 'humana', 'humanos', 'real', 'vivo', 'tu', 'tus']),
};

export const DISCLOSURE_LANGUAGES: readonly LanguageRules[] = [ENGLISH, SPANISH];

const COMMA = ',';

/**
 * Lowercase, accents and curly quotes folded, "a.i." as "ai", hyphens and slashes as spaces, then
 * split into sentences of word tokens (a comma stays as its own token: it limits the negation
 * look-behind).
 */
export function sentencesOf(text: string): string[][] {
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc`´]/g, "'")
    .replace(/\ba\.\s?i\b\.?/g, 'ai')
    .replace(/\bi\.\s?a\b\.?/g, 'ia')
    .replace(/[-\u2010-\u2015/_]/g, ' ');
  return folded
    .split(/[.!?;:¡¿\n\r\u2026]+/)
    .map((sentence) => sentence.match(/[\p{L}\p{N}]+(?:'[\p{L}]+)*|,/gu) ?? [])
    .filter((tokens) => tokens.some((t) => t !== COMMA));
}

function phraseAt(tokens: readonly string[], i: number, phrases: readonly Phrase[]): number {
  let best = 0;
  for (const p of phrases) {
    if (p.length <= best || i + p.length > tokens.length) continue;
    if (p.every((w, k) => tokens[i + k] === w)) best = p.length;
  }
  return best;
}

/** Whether a token stops a search: a negation (when honored), a break word, or a comma inside a pair. */
function stops(rules: LanguageRules, token: string, honorNegation: boolean): boolean {
  return (honorNegation && rules.isNegation(token)) || rules.breaks.has(token);
}

/** Looks for `phrases` starting within `gap` words after `from`; no stop word or comma in between. */
function phraseWithin(rules: LanguageRules, tokens: readonly string[], from: number, gap: number, phrases: readonly Phrase[], honorNegation: boolean): boolean {
  for (let i = from, skipped = 0; i < tokens.length && skipped <= gap; i++, skipped++) {
    const token = tokens[i]!;
    if (phraseAt(tokens, i, phrases) > 0) return true;
    if (token === COMMA || stops(rules, token, honorNegation)) return false;
  }
  return false;
}

/** An identification starting at i: a standalone term, or automation and subject terms near each other. */
function identificationAt(rules: LanguageRules, tokens: readonly string[], i: number, honorNegation: boolean): boolean {
  if (phraseAt(tokens, i, rules.standalone) > 0) return true;
  const auto = phraseAt(tokens, i, rules.automation);
  if (auto > 0 && phraseWithin(rules, tokens, i + auto, PAIR_GAP, [...rules.subjects, ...rules.standalone], honorNegation)) return true;
  const subject = phraseAt(tokens, i, rules.subjects);
  if (subject > 0 && phraseWithin(rules, tokens, i + subject, PAIR_GAP, [...rules.automation, ...rules.standalone], honorNegation)) return true;
  return false;
}

function negatedBefore(rules: LanguageRules, tokens: readonly string[], anchorStart: number): boolean {
  for (let i = anchorStart - 1; i >= 0 && i >= anchorStart - LOOKBEHIND; i--) {
    const token = tokens[i]!;
    if (token === COMMA) return false;
    if (rules.isNegation(token)) return true;
  }
  return false;
}

function identifiedAfterAnchor(rules: LanguageRules, tokens: readonly string[], anchorStart: number, anchor: Anchor, honorNegation: boolean): boolean {
  if (honorNegation && negatedBefore(rules, tokens, anchorStart)) return false;
  const from = anchorStart + anchor.words.length;
  if (anchor.kind === 'subject' && phraseWithin(rules, tokens, from, PAIR_GAP, [...rules.automation, ...rules.standalone], honorNegation)) {
    return true;
  }
  const window = anchor.kind === 'determiner' ? 0 : ANCHOR_WINDOW;
  for (let i = from, skipped = 0; i < tokens.length && skipped <= window; i++) {
    const token = tokens[i]!;
    if (token === COMMA) continue;
    if (identificationAt(rules, tokens, i, honorNegation)) return true;
    if (stops(rules, token, honorNegation)) return false;
    skipped++;
  }
  return false;
}

/** Whether one tokenized sentence identifies the call, voice or message as automated. */
export function sentenceIdentifies(rules: LanguageRules, tokens: readonly string[], honorNegation = true): boolean {
  for (let i = 0; i < tokens.length; i++) {
    for (const anchor of rules.anchors) {
      if (phraseAt(tokens, i, [anchor.words]) === 0) continue;
      if (identifiedAfterAnchor(rules, tokens, i, anchor, honorNegation)) return true;
    }
  }
  return false;
}

export const DISCLOSURE_EXAMPLES = {
  en: 'This is an automated call from <company>.',
  es: 'Esta es una llamada automatizada de <empresa>.',
} as const;

/**
 * Null when `text` clearly identifies the voice as automated (English or Spanish); otherwise why
 * not, in a sentence fit for an API error message.
 */
export function disclosureProblem(text: string): string | null {
  if (text.trim() === '') return 'the disclosure text is empty';
  const sentences = sentencesOf(text);
  let identified = false;
  for (const tokens of sentences) {
    for (const rules of DISCLOSURE_LANGUAGES) {
      if (sentenceIdentifies(rules, tokens, true)) {
        identified = true;
      } else if (sentenceIdentifies(rules, tokens, false)) {
        return 'the disclosure text denies that the voice is automated (for example "this is not an automated call"); it must state that it is';
      }
    }
  }
  if (identified) return null;
  return `the disclosure text does not clearly identify the call, voice or message as automated; say so in one sentence, for example "${DISCLOSURE_EXAMPLES.en}" or "${DISCLOSURE_EXAMPLES.es}"`;
}
