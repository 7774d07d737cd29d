/**
 * Text folding shared by the classifier, the handoff rules and the output guard: one folding, so
 * a phrase a tenant configures matches the same way wherever it is used.
 */

/** Lowercase, accents removed (NFKD, marks dropped), curly quotes straightened. */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc`´]/g, "'");
}

/** Folded word tokens; an apostrophe inside a word stays ("don't"). */
export function tokensOf(text: string): string[] {
  return fold(text).match(/[\p{L}\p{N}]+(?:'[\p{L}]+)*/gu) ?? [];
}

/** Folded text with every run of non-word characters as one space, padded: substring-safe. */
export function spaced(text: string): string {
  return ` ${tokensOf(text).join(' ')} `;
}

/** Whether `phrase` (already tokenized) occurs in `tokens` as whole consecutive words. */
export function hasPhrase(tokens: readonly string[], phrase: readonly string[]): boolean {
  return indexOfPhrase(tokens, phrase) >= 0;
}

export function indexOfPhrase(tokens: readonly string[], phrase: readonly string[], from = 0): number {
  if (phrase.length === 0) return -1;
  outer: for (let i = from; i + phrase.length <= tokens.length; i++) {
    for (let k = 0; k < phrase.length; k++) {
      if (tokens[i + k] !== phrase[k]) continue outer;
    }
    return i;
  }
  return -1;
}

/** Tokenized phrase lists, built once from their source strings. */
export function phrases(list: readonly string[]): string[][] {
  return list.map(tokensOf).filter((p) => p.length > 0);
}

export function hasAnyPhrase(tokens: readonly string[], list: readonly (readonly string[])[]): boolean {
  return list.some((p) => hasPhrase(tokens, p));
}
