import type { ConsultConfig, DebtFacts } from '../../src/modules/ai-engine/engine.types';
import { answerDigits, answerMatches, hasAnswer, normalizeDob, verificationPlan } from '../../src/modules/ai-engine/verification';
import { context, run } from './ai-engine-fixtures';

const DEBT: DebtFacts = { balance_cents: 1000, currency: 'USD', creditor_name: 'C', account_last4: '9876', account_number: 'AC-12349876', ssn_last4: '4321', dob: '1980-03-05', pin: '002468', zip: '94105-1234' };
const planFor = (config: ConsultConfig, debt: DebtFacts = DEBT) => verificationPlan(config, debt)!;

describe('verification per factor', () => {
  it.each([
    [{ factor: 'account_last4' }, ['9876', 'it is 9 8 7 6', 'nine eight seven six'], ['9875', '98765', '1234']],
    [{ factor: 'ssn_last4' }, ['4321', '43-21', 'cuatro tres dos uno'], ['4322', '321']],
    [{ factor: 'pin' }, ['002468', 'zero zero two four six eight'], ['2468', '0024680']],
    [{ factor: 'pin', factor_opts: { length: 4 } }, ['2468'], ['002468']],
    [{ factor: 'zip' }, ['94105', 'nine four one zero five'], ['94105-1234', '94106']],
    [{ factor: 'account_last4', factor_opts: { length: 2 } }, ['76'], ['9876']],
    [{ factor: 'account_last4', factor_opts: { length: 6 } }, ['349876', 'three four nine eight seven six'], ['9876', '123349876']],
  ] as [ConsultConfig, string[], string[]][])('%j', (config, good, bad) => {
    const plan = planFor(config);
    for (const answer of good) expect({ answer, ok: answerMatches(plan, answer) }).toEqual({ answer, ok: true });
    for (const answer of bad) expect({ answer, ok: answerMatches(plan, answer) }).toEqual({ answer, ok: false });
  });

  it.each([
    ['mmddyyyy', ['03/05/1980', '3-5-1980', 'March 5th, 1980', '5 de marzo de 1980', '03051980', 'march 05 1980'], ['03/05', '05/03/1980', '03/05/1981', 'March 1980']],
    ['mmdd', ['03/05', '3 5', 'March 5', '0305', '03/05/1980', 'marzo 5'], ['05/03', '0503', 'march']],
  ] as const)('dob in format %s', (format, good, bad) => {
    const plan = planFor({ factor: 'dob', factor_opts: { dob_format: format } });
    for (const answer of good) expect({ answer, ok: answerMatches(plan, answer) }).toEqual({ answer, ok: true });
    for (const answer of bad) expect({ answer, ok: answerMatches(plan, answer) }).toEqual({ answer, ok: false });
  });

  it('defaults: three attempts, dob with year', () => {
    expect(planFor({ factor: 'dob' })).toMatchObject({ max_attempts: 3, dob_format: 'mmddyyyy', expected: '03051980' });
    expect(planFor({ factor: 'ssn_last4', max_attempts: 7 }).max_attempts).toBe(7);
  });

  it('is disabled by {} and unverifiable when the fact is missing or short', () => {
    expect(verificationPlan({}, DEBT)).toBeNull();
    expect(planFor({ factor: 'ssn_last4' }, { ...DEBT, ssn_last4: undefined }).expected).toBeNull();
    expect(planFor({ factor: 'account_last4', factor_opts: { length: 6 } }, { ...DEBT, account_number: undefined }).expected).toBeNull();
    expect(planFor({ factor: 'account_last4', factor_opts: { length: 12 } }).expected).toBeNull();
    expect(planFor({ factor: 'dob' }, { ...DEBT, dob: '03/05/1980' }).expected).toBeNull();
    expect(answerMatches(planFor({ factor: 'ssn_last4' }, { ...DEBT, ssn_last4: undefined }), '')).toBe(false);
  });

  it('knows an answer from a non-answer', () => {
    expect(hasAnswer(planFor({ factor: 'zip' }), 'hold on')).toBe(false);
    expect(hasAnswer(planFor({ factor: 'dob' }), 'march the fifth')).toBe(true);
    expect(answerDigits('one 2 tres')).toBe('123');
    expect(normalizeDob('13/05/1980', 'mmddyyyy')).toBeNull();
  });
});

describe('verification in the conversation', () => {
  it.each([
    [{ factor: 'account_last4' }, '9876'],
    [{ factor: 'dob', factor_opts: { dob_format: 'mmdd' } }, 'March 15'],
    [{ factor: 'dob' }, '03/15/1980'],
    [{ factor: 'pin' }, '2468'],
    [{ factor: 'zip' }, '94105'],
  ] as [ConsultConfig, string][])('%j succeeds with the right answer', (config, answer) => {
    const t = run(context({ consult_config: config }), ['yes', answer]);
    expect(t.events.filter((e) => e.type === 'verified')).toHaveLength(1);
  });

  it.each([
    [{ factor: 'account_last4', max_attempts: 1 }, '1111', 1],
    [{ factor: 'dob', factor_opts: { dob_format: 'mmddyyyy' }, max_attempts: 2 }, 'March 15', 2],
    [{ factor: 'zip', max_attempts: 10 }, '00000', 10],
  ] as [ConsultConfig, string, number][])('%j fails after max_attempts wrong answers', (config, wrong, attempts) => {
    const t = run(context({ consult_config: config }), ['yes', ...Array<string>(attempts).fill(wrong)]);
    expect(t.last.outcome).toBe('verification_failed');
    expect(t.events.filter((e) => e.type === 'verification_attempt')).toHaveLength(attempts);
  });

  it('asks for the factor in the configured shape', () => {
    const ask = (config: ConsultConfig, language: 'en' | 'es' = 'en') => run(context({ consult_config: config, language }), ['yes']).last.say[0];
    expect(ask({ factor: 'dob', factor_opts: { dob_format: 'mmdd' } })).toBe('For your security, please tell me your date of birth, month and day.');
    expect(ask({ factor: 'pin', factor_opts: { length: 4 } })).toBe('For your security, please tell me your 4-digit PIN.');
    expect(ask({ factor: 'zip' }, 'es')).toBe('Por su seguridad, dígame su código postal de 5 dígitos.');
  });
});
