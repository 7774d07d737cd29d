/**
 * Recognizers spell numbers as words ("fifty dollars", "four five six seven", "nineteen eighty");
 * the rule engine reads amounts and dates as digits (src/modules/ai-engine/intents.ts). This turns
 * runs of English number words into digits: a compound number becomes its value ("two hundred
 * fifty" → 250), numbers said one after another are written together ("four five six seven" →
 * 4567, "nineteen eighty" → 1980), ordinals become their number ("fifteenth" → 15). A lone "one"
 * stays a word unless money follows ("no one by that name" is a wrong-party phrase).
 */

const UNITS: Record<string, number> = { zero: 0, oh: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9 };
const TEENS: Record<string, number> = { ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19 };
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const ORDINALS: Record<string, number> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10, eleventh: 11, twelfth: 12,
  thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17, eighteenth: 18, nineteenth: 19, twentieth: 20, thirtieth: 30,
};
const MONEY_AFTER = new Set(['dollar', 'dollars', 'bucks']);

const isNumberWord = (w: string) => w in UNITS || w in TEENS || w in TENS || w === 'hundred' || w === 'thousand' || w in ORDINALS;

/** Parses one number from `words` at `i`; returns its value and the next index, or null. */
function parseNumber(words: string[], i: number): { value: number; next: number; ordinal: boolean } | null {
  let total = 0;
  let current = 0;
  let j = i;
  let seen = false;
  let ordinal = false;
  const small = (w: string | undefined) => (w === undefined ? undefined : (UNITS[w] ?? TEENS[w] ?? TENS[w] ?? ORDINALS[w]));
  while (j < words.length) {
    const w = words[j]!;
    if (w === 'oh' && !seen) break;
    if (w in TENS && current % 100 === 0) {
      current += TENS[w]!;
      seen = true;
      j++;
      const next = words[j];
      if (next !== undefined && (next in UNITS || (next in ORDINALS && ORDINALS[next]! < 10)) && next !== 'zero' && next !== 'oh') {
        current += small(next)!;
        ordinal = next in ORDINALS;
        j++;
      } else if (next !== undefined && next in ORDINALS) break;
      if (ordinal) break;
      continue;
    }
    if ((w in UNITS || w in TEENS || w in ORDINALS) && current % 100 === 0 && !(seen && current % 1000 === 0 && total === 0 && current === 0 && j > i)) {
      if (seen && current === 0 && total === 0) break;
      if (seen && current % 100 === 0 && current > 0 && !(words[j - 1] === 'hundred')) break;
      current += small(w)!;
      seen = true;
      ordinal = w in ORDINALS;
      j++;
      if (ordinal || w in TEENS || w in UNITS) {
        if (words[j] === 'hundred' || words[j] === 'thousand') continue;
        break;
      }
      continue;
    }
    if (w === 'hundred' && seen && current > 0 && current < 10) {
      current *= 100;
      j++;
      continue;
    }
    if (w === 'thousand' && seen && current > 0) {
      total += current * 1000;
      current = 0;
      j++;
      continue;
    }
    break;
  }
  if (!seen) return null;
  // "one hundred and five"
  if (words[j] === 'and' && words[j - 1] === 'hundred') {
    const rest = parseNumber(words, j + 1);
    if (rest && rest.value < 100) return { value: total + current + rest.value, next: rest.next, ordinal: rest.ordinal };
  }
  return { value: total + current, next: j, ordinal };
}

export function spokenNumbersToDigits(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  let i = 0;
  while (i < words.length) {
    const lower = words[i]!.toLowerCase();
    const start = lower === 'a' && (words[i + 1]?.toLowerCase() === 'hundred' || words[i + 1]?.toLowerCase() === 'thousand') ? i + 1 : i;
    if (!isNumberWord(words[start]!.toLowerCase()) || (lower === 'oh' && !isNumberWord(words[i + 1]?.toLowerCase() ?? ''))) {
      out.push(words[i]!);
      i++;
      continue;
    }
    const lowered = words.map((w) => w.toLowerCase());
    // "a hundred" is "one hundred".
    if (start !== i) lowered[i] = 'one';
    const groups: number[] = [];
    let j = i;
    while (j < lowered.length) {
      if (lowered[j] === 'oh' && groups.length > 0 && lowered[j + 1] !== undefined && lowered[j + 1]! in UNITS) {
        groups.push(0);
        j++;
        continue;
      }
      const n = parseNumber(lowered, j);
      if (!n) break;
      groups.push(n.value);
      j = n.next;
      if (n.ordinal) break;
    }
    if (groups.length === 0) {
      out.push(words[i]!);
      i++;
      continue;
    }
    if (groups.length === 1 && j - i === 1 && lowered[i] === 'one' && !MONEY_AFTER.has(lowered[j] ?? '')) {
      out.push(words[i]!);
      i++;
      continue;
    }
    out.push(groups.length === 1 ? String(groups[0]) : groups.map((g) => String(g)).join(''));
    i = j;
  }
  return out.join(' ');
}
