import { ASK_BALANCE, ASK_PURPOSE, CALLBACK, DECLINE_OFFER, DISPUTE, HUMAN_NOUNS, HUMAN_STANDALONE, HUMAN_VERBS, NO, OPT_OUT, REFUSAL, WRONG_PARTY, YES } from '../modules/ai-engine/lexicon';

/**
 * The sentences the offline recognizer's collection-call language model is built from (one a
 * line): the rule engine's English lexicon (src/modules/ai-engine/lexicon.ts) as the consumer would
 * say it, plus amounts, dates, digits and names spoken as words. A general English model mishears
 * most telephone-band speech; a model of what a consumer says on this call (a classic PocketSphinx
 * set-up) brings word accuracy from about 20 % to about 90 % on the bench set (docs/speech.md).
 * Deterministic: the same corpus every start.
 */

const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const ORDINALS = [
  'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'eleventh', 'twelfth', 'thirteenth',
  'fourteenth', 'fifteenth', 'sixteenth', 'seventeenth', 'eighteenth', 'nineteenth', 'twentieth',
];
const NAMES = ['john', 'mary', 'james', 'maria', 'robert', 'linda', 'michael', 'patricia', 'david', 'jennifer', 'jose', 'carlos'];

/** English words for 0 … 999,999. */
export function numberWords(n: number): string {
  if (n < 10) return ONES[n]!;
  if (n < 20) return TEENS[n - 10]!;
  if (n < 100) return TENS[Math.floor(n / 10) - 2]! + (n % 10 ? ` ${ONES[n % 10]}` : '');
  if (n < 1000) return `${ONES[Math.floor(n / 100)]} hundred${n % 100 ? ` ${numberWords(n % 100)}` : ''}`;
  return `${numberWords(Math.floor(n / 1000))} thousand${n % 1000 ? ` ${numberWords(n % 1000)}` : ''}`;
}

/** A year as said: "nineteen eighty", "nineteen oh five", "two thousand three". */
export function yearWords(y: number): string {
  if (y >= 2000 && y < 2010) return numberWords(y);
  const hi = Math.floor(y / 100);
  const lo = y % 100;
  return `${numberWords(hi)} ${lo === 0 ? 'hundred' : lo < 10 ? `oh ${ONES[lo]}` : numberWords(lo)}`;
}

const dayOrdinal = (d: number) => (d <= 20 ? ORDINALS[d - 1]! : d < 30 ? `twenty ${ORDINALS[d - 21]}` : d === 30 ? 'thirtieth' : 'thirty first');

/** Lexicon entries as a recognizer spells words: contractions kept, nothing else but letters. */
function spoken(entries: readonly string[]): string[] {
  return entries.filter((e) => /^[a-z' ]+$/.test(e) && !/\b(si|el|la|de|que|con|no me)\b/.test(e));
}

export function collectionCallCorpus(): string {
  const lines: string[] = [];
  const add = (...s: string[]) => lines.push(...s);
  // The lexicon's English phrases, alone and in the frames consumers put them in.
  for (const p of spoken([...YES, ...NO, ...WRONG_PARTY, ...OPT_OUT, ...CALLBACK, ...DISPUTE, ...REFUSAL, ...DECLINE_OFFER, ...ASK_PURPOSE, ...ASK_BALANCE, ...HUMAN_STANDALONE])) {
    add(p, `${p} please`, `i said ${p}`);
  }
  for (const p of spoken(OPT_OUT)) add(`${p} me`, `please ${p} me`, `${p} me again`);
  for (const v of spoken(HUMAN_VERBS)) {
    for (const n of spoken(HUMAN_NOUNS)) add(`${v} a ${n}`, `i want to ${v} a ${n}`, `can i ${v} a ${n}`, `i need to ${v} a ${n}`, `let me ${v} your ${n}`);
  }
  for (const n of NAMES) add(`yes this is ${n}`, `this is ${n}`, `${n} speaking`, `yes ${n} speaking`, `i am ${n}`, `${n} is not here`, `no ${n} does not live here`);
  for (const a of [...Array.from({ length: 99 }, (_, i) => i + 1), ...Array.from({ length: 36 }, (_, i) => 100 + i * 25), 1000, 1200, 1500, 2000, 2500, 3000, 5000]) {
    const w = numberWords(a);
    add(`i can pay ${w} dollars`, `i can pay ${w}`, `${w} dollars`, `i can pay ${w} dollars a month`, `i can do ${w} dollars`, `how about ${w} dollars`, `i can only pay ${w} dollars`, `i could pay ${w} dollars per month`);
  }
  const when = ['today', 'tomorrow', 'next week', 'next month', 'this week', 'at the end of the month', 'on the first', 'on the fifteenth', ...DAYS.flatMap((d) => [`on ${d}`, `next ${d}`, `this ${d}`])];
  for (const d of when) add(`i can pay ${d}`, `i can pay fifty dollars ${d}`, `i will pay ${d}`, `call me back ${d}`, `i get paid ${d}`, `i can make a payment ${d}`);
  for (const m of MONTHS) for (let d = 1; d <= 31; d++) add(`${m} ${dayOrdinal(d)}`, `on ${m} ${dayOrdinal(d)}`);
  for (let y = 1930; y <= 2008; y++) {
    const m = MONTHS[y % 12]!;
    const d = (y % 28) + 1;
    add(yearWords(y), `my date of birth is ${m} ${dayOrdinal(d)} ${yearWords(y)}`, `i was born ${m} ${dayOrdinal(d)} ${yearWords(y)}`, `${m} ${numberWords(d)} ${yearWords(y)}`);
  }
  // Digit strings: every digit after every digit, in the frames the verification questions get.
  for (let i = 0; i < 100; i++) {
    const digits = (n: number) => Array.from({ length: n }, (_, k) => ONES[(i * 7 + k * 3 + Math.floor(i / 10) * k) % 10]!).join(' ');
    add(digits(4), digits(5), `the last four digits are ${digits(4)}`, `it is ${digits(4)}`, `my zip code is ${digits(5)}`, `my zip is ${digits(5)}`, `my pin is ${digits(4)}`);
  }
  add(
    'hello', 'hi', 'hello who is this', 'goodbye', 'bye', 'thank you', 'thanks', 'what', 'sorry', 'can you repeat that', 'say that again',
    "i don't understand", 'i need a payment plan', 'can i pay in installments', 'can i set up a payment plan', 'i can pay over six months',
    'i can pay in three payments', 'yes i can do that', 'no i can not', 'i can not pay right now', 'i lost my job', 'i will think about it',
    'send me something in writing', 'send me a letter', 'i want it in writing', 'yes that works', 'that works for me', 'okay that sounds good',
  );
  return [...new Set(lines)].join('\n');
}
