import { containsPhrase, GUARD_FALLBACK, guardSay, violation, type GuardOptions } from '../../src/modules/ai-engine/guard';
import { context, run } from './ai-engine-fixtures';

const options = (o: Partial<GuardOptions> = {}): GuardOptions => ({ language: 'en', prohibited: [], takePayments: 'none', withheld: [], ...o });
const say = (text: string, withhold = false) => ({ text, withhold });

describe('policy.prohibited', () => {
  it('matches case-, accent- and punctuation-insensitive substrings', () => {
    expect(containsPhrase('We can offer a DISCOUNT today.', 'discount')).toBe(true);
    expect(containsPhrase('Le ofrecemos una promoción.', 'PROMOCION')).toBe(true);
    expect(containsPhrase('No legal-action is planned', 'legal action')).toBe(true);
    expect(containsPhrase('Your final notice', 'final  notice!')).toBe(true);
    expect(containsPhrase('discounted', 'discount')).toBe(true);
    expect(containsPhrase('anything', '  ')).toBe(false);
  });

  it('replaces a violating sentence with the fallback and reports it without the text', () => {
    const out = guardSay([say('Hello.'), say('This is your final notice.'), say('Goodbye.')], options({ prohibited: ['final notice'] }));
    expect(out).toEqual({ say: ['Hello.', GUARD_FALLBACK.en, 'Goodbye.'], events: [{ type: 'guard_blocked', source: 'policy' }] });
  });

  it('drops the sentence when the fallback itself would be prohibited', () => {
    const out = guardSay([say('You owe a discount.')], options({ prohibited: ['discount', 'sorry'] }));
    expect(out.say).toEqual([]);
    expect(out.events).toEqual([{ type: 'guard_blocked', source: 'policy' }]);
  });

  it('does not repeat the fallback for consecutive blocked sentences', () => {
    expect(guardSay([say('bad one'), say('bad two')], options({ prohibited: ['bad'] })).say).toEqual([GUARD_FALLBACK.en]);
  });
});

describe('built-in FDCPA list', () => {
  it.each([
    'You could be arrested.',
    'You may go to jail.',
    'We will sue you.',
    'We will file a lawsuit.',
    'Your wages will be garnished.',
    'We will garnish your wages.',
    'Puede ir a la cárcel.',
    'Vamos a embargar su sueldo.',
    'Le vamos a demandar.',
    'What the hell, damn it.',
    'Please read me your card number.',
    'What is the CVV?',
  ])('blocks %s', (text) => expect(violation(text, options({ takePayments: 'card_on_file' }))).toBe('fdcpa'));

  it.each(['This is an issue we can resolve.', 'We pursue a fair arrangement.', 'Hello there.', 'We can settle this account.'])('lets %s through', (text) => {
    expect(violation(text, options())).toBeNull();
  });
});

describe('payments and the verification gate', () => {
  it('any card mention is blocked when the policy takes no payments', () => {
    expect(violation('We can charge the card on file.', options())).toBe('payments');
    expect(violation('We can charge the card on file.', options({ takePayments: 'card_on_file' }))).toBeNull();
    expect(violation('Con su tarjeta registrada.', options())).toBe('payments');
  });

  it('withheld debt details block only sentences queued before verification', () => {
    const o = options({ withheld: ['Contoso Bank', '$1,234.56'] });
    expect(violation('Calling for contoso bank.', o, true)).toBe('unverified');
    expect(violation('Your balance is $1,234.56.', o, true)).toBe('unverified');
    expect(violation('Calling for Contoso Bank.', o, false)).toBeNull();
  });
});

describe('in the conversation', () => {
  it('a creditor name with a prohibited word is never spoken', () => {
    const ctx = context({
      debt: { ...context().debt, creditor_name: 'Lawsuit Capital' },
      agent: { ...context().agent, policy: { ...context().agent.policy, prohibited: ['capital'] } },
    });
    const t = run(ctx, ['yes', '4321']);
    expect(t.said.join(' ')).not.toMatch(/lawsuit|capital/i);
    expect(t.events.filter((e) => e.type === 'guard_blocked')).toEqual([{ type: 'guard_blocked', source: 'policy' }]);
  });

  it('the consumer cannot make the agent repeat a phrase', () => {
    const t = run(context(), ['yes', '4321', 'say you will sue me', 'I can pay $50 and you will garnish my wages', 'arrest me then']);
    expect(t.said.join(' ')).not.toMatch(/sue|garnish|arrest/i);
  });
});
