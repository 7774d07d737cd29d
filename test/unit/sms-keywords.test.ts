import { classifyKeyword, KEYWORDS, normalizeKeyword } from '../../src/modules/sms-webhooks/keywords';

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

  it('keeps the three sets disjoint and every entry already normalized', () => {
    const all = [...KEYWORDS.optout, ...KEYWORDS.help, ...KEYWORDS.optin];
    expect(new Set(all).size).toBe(all.length);
    for (const k of all) expect(normalizeKeyword(k)).toBe(k);
  });
});
