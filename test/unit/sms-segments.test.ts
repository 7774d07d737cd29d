import { formatAmount, mergeSmsBody } from '../../src/modules/sms/merge';
import { gsm7Septets, segmentInfo } from '../../src/modules/sms/segments';

describe('segmentInfo: GSM-7', () => {
  it('counts the basic alphabet one septet each', () => {
    expect(segmentInfo('Hello, world!')).toEqual({ encoding: 'gsm7', segments: 1, units: 13 });
    expect(segmentInfo('@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ¤¡ÄÖÑÜ§¿äöñüà\n\r').encoding).toBe('gsm7');
  });

  it('an empty body is one segment of zero units', () => {
    expect(segmentInfo('')).toEqual({ encoding: 'gsm7', segments: 1, units: 0 });
  });

  it.each(['^', '{', '}', '\\', '[', '~', ']', '|', '€', '\f'])('extension character %j counts two septets', (ch) => {
    expect(gsm7Septets(ch)).toBe(2);
    expect(segmentInfo(`a${ch}b`)).toEqual({ encoding: 'gsm7', segments: 1, units: 4 });
  });

  it('160 septets is one segment, 161 is two (153 per concatenated segment)', () => {
    expect(segmentInfo('a'.repeat(160))).toEqual({ encoding: 'gsm7', segments: 1, units: 160 });
    expect(segmentInfo('a'.repeat(161))).toEqual({ encoding: 'gsm7', segments: 2, units: 161 });
    expect(segmentInfo('a'.repeat(306)).segments).toBe(2);
    expect(segmentInfo('a'.repeat(307)).segments).toBe(3);
    expect(segmentInfo('a'.repeat(459)).segments).toBe(3);
    expect(segmentInfo('a'.repeat(460)).segments).toBe(4);
  });

  it('extension characters count toward the single-segment limit', () => {
    expect(segmentInfo('€'.repeat(80))).toEqual({ encoding: 'gsm7', segments: 1, units: 160 });
    expect(segmentInfo(`${'€'.repeat(80)}a`)).toEqual({ encoding: 'gsm7', segments: 2, units: 161 });
  });

  it('never splits an escape from its character across segments', () => {
    // 152 septets then a two-septet character: it does not fit in the first 153, so it opens segment 2.
    const body = `${'a'.repeat(152)}€${'a'.repeat(10)}`;
    expect(segmentInfo(body)).toEqual({ encoding: 'gsm7', segments: 2, units: 164 });
    // 152 + 2 + 151 = 305 septets would fit two raw 153-septet halves, but the split pair forces a third.
    const tight = `${'a'.repeat(152)}€${'a'.repeat(152)}`;
    expect(segmentInfo(tight)).toEqual({ encoding: 'gsm7', segments: 3, units: 306 });
  });
});

describe('segmentInfo: UCS-2', () => {
  it('one character outside GSM-7 makes the whole message UCS-2', () => {
    expect(segmentInfo('Hola, ¿cómo está?')).toEqual({ encoding: 'ucs2', segments: 1, units: 17 });
    expect(segmentInfo('price “quoted”').encoding).toBe('ucs2');
    expect(segmentInfo('tab\there').encoding).toBe('ucs2');
  });

  it('70 code units is one segment, 71 is two (67 per concatenated segment)', () => {
    expect(segmentInfo('ж'.repeat(70))).toEqual({ encoding: 'ucs2', segments: 1, units: 70 });
    expect(segmentInfo('ж'.repeat(71))).toEqual({ encoding: 'ucs2', segments: 2, units: 71 });
    expect(segmentInfo('ж'.repeat(134)).segments).toBe(2);
    expect(segmentInfo('ж'.repeat(135)).segments).toBe(3);
  });

  it('an astral character is two code units', () => {
    expect(segmentInfo('😀')).toEqual({ encoding: 'ucs2', segments: 1, units: 2 });
    expect(segmentInfo('😀'.repeat(35))).toEqual({ encoding: 'ucs2', segments: 1, units: 70 });
    expect(segmentInfo(`${'😀'.repeat(35)}a`)).toEqual({ encoding: 'ucs2', segments: 2, units: 71 });
  });

  it('never splits a surrogate pair across segments', () => {
    // 66 units then a pair: 68 > 67, so the pair opens segment 2.
    const body = `${'ж'.repeat(66)}😀${'ж'.repeat(10)}`;
    expect(segmentInfo(body)).toEqual({ encoding: 'ucs2', segments: 2, units: 78 });
    // 66 + 2 + 66 = 134 units: raw halves of 67 would fit, but the pair may not be split.
    const tight = `${'ж'.repeat(66)}😀${'ж'.repeat(66)}`;
    expect(segmentInfo(tight)).toEqual({ encoding: 'ucs2', segments: 3, units: 134 });
  });
});

describe('mergeSmsBody', () => {
  it('replaces every known variable', () => {
    const out = mergeSmsBody('Ref {{debt_ref}} / {{consumer_ref}} acct {{account_number}}: ${{amount}} ({{state}}). Reply STOP to opt out', {
      debt_ref: 'D-1',
      consumer_ref: 'C-9',
      account_number: '0042',
      amount: '12.50',
      state: 'open',
    });
    expect(out).toBe('Ref D-1 / C-9 acct 0042: $12.50 (open). Reply STOP to opt out');
  });

  it('renders a missing or null value empty and repeats tokens', () => {
    expect(mergeSmsBody('{{debt_ref}}-{{debt_ref}}-{{state}}', { debt_ref: 'x', state: null })).toBe('x-x-');
  });

  it('keeps an unknown or spaced token verbatim', () => {
    expect(mergeSmsBody('{{nope}} {{ debt_ref }} {{debt_ref}}', { debt_ref: 'r' })).toBe('{{nope}} {{ debt_ref }} r');
  });

  it('does not re-expand a value that looks like a token', () => {
    expect(mergeSmsBody('{{debt_ref}} {{state}}', { debt_ref: '{{state}}', state: 'ok' })).toBe('{{state}} ok');
  });

  it('formats cents for {{amount}}', () => {
    expect(formatAmount(123450n)).toBe('1234.50');
    expect(formatAmount(5)).toBe('0.05');
    expect(formatAmount(0)).toBe('0.00');
    expect(formatAmount(-250n)).toBe('-2.50');
  });
});
