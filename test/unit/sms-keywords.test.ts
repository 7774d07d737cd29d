import { segmentInfo } from '../../src/modules/sms/segments';
import { classifyKeyword, KEYWORD_REPLIES, keywordLanguage, keywordReply, KEYWORDS, normalizeKeyword } from '../../src/modules/sms-webhooks/keywords';

describe('inbound SMS keywords', () => {
  it.each([
    ['STOP', 'optout'],
    ['stop', 'optout'],
    ['  Stop.  ', 'optout'],
    ['STOP!!!', 'optout'],
    ['Unsubscribe', 'optout'],
    ['cancel', 'optout'],
    ['QUIT', 'optout'],
    ['end', 'optout'],
    ['Revoke', 'optout'],
    ['opt out', 'optout'],
    ['Opt-Out', 'optout'],
    ['OPTOUT', 'optout'],
    ['stopall', 'optout'],
    ['Stop all', 'optout'],
    ['alto', 'optout'],
    ['¡Alto!', 'optout'],
    ['PARAR', 'optout'],
    ['cancelar', 'optout'],
    ['HELP', 'help'],
    ['help?', 'help'],
    ['info', 'help'],
    ['ayuda', 'help'],
    ['AYÚDA', 'help'],
    ['START', 'optin'],
    ['unstop', 'optin'],
    ['Comenzar', 'optin'],
    ['\tstart\n', 'optin'],
  ])('%j is %s', (text, action) => {
    expect(classifyKeyword(text)).toBe(action);
  });

  it.each(['', '   ', 'stop calling my mother', 'please stop', 'STOPP', 'yes', 'helpful', 'I want to start paying', 'st op', '123'])(
    '%j is not a keyword (whole-message match only)',
    (text) => {
      expect(classifyKeyword(text)).toBeNull();
    },
  );

  it('treats null and undefined as no keyword', () => {
    expect(classifyKeyword(null)).toBeNull();
    expect(classifyKeyword(undefined)).toBeNull();
  });

  it('normalizes case, accents, punctuation and whitespace', () => {
    expect(normalizeKeyword('  ¡Opt—out!  ')).toBe('OPT OUT');
    expect(normalizeKeyword('Ayúda')).toBe('AYUDA');
  });

  it.each([
    ['ALTO', 'es'],
    ['¡Alto!', 'es'],
    ['Ayúda', 'es'],
    ['comenzar', 'es'],
    ['baja', 'es'],
    ['STOP', 'en'],
    ['info', 'en'],
    ['start', 'en'],
    [null, 'en'],
  ])('%j is answered in %s', (text, lang) => {
    expect(keywordLanguage(text)).toBe(lang);
  });

  it('answers a Spanish keyword in Spanish with Spanish keywords, and an English one in English', () => {
    expect(keywordReply('optout', 'ALTO')).toEqual({ kind: 'stop_confirmation', body: expect.stringMatching(/COMENZAR/) });
    expect(keywordReply('optout', 'STOP')).toEqual({ kind: 'stop_confirmation', body: expect.stringMatching(/Reply START/) });
    expect(keywordReply('help', 'ayuda').body).toMatch(/Responda ALTO/);
    expect(keywordReply('optin', 'Comenzar').body).toMatch(/Responda ALTO .* AYUDA/);
  });

  it('keeps every reply one GSM-7 segment, its kind the same in both languages, and names only real keywords', () => {
    for (const [action, byLang] of Object.entries(KEYWORD_REPLIES)) {
      expect(byLang.es.kind).toBe(byLang.en.kind);
      for (const { body } of Object.values(byLang)) {
        expect(segmentInfo(body)).toMatchObject({ encoding: 'gsm7', segments: 1 });
        for (const word of body.match(/\b[A-Z]{3,}\b/g) ?? []) expect({ action, word, keyword: classifyKeyword(word) !== null }).toEqual({ action, word, keyword: true });
      }
    }
  });

  it('keeps the three sets disjoint and every entry already normalized', () => {
    const all = [...KEYWORDS.optout, ...KEYWORDS.help, ...KEYWORDS.optin];
    expect(new Set(all).size).toBe(all.length);
    for (const k of all) expect(normalizeKeyword(k)).toBe(k);
  });
});
