import { amountsOf, dateOf, monthsOf, readUtterance, requestsHuman, sentimentOf } from '../../src/modules/ai-engine/intents';
import { tokensOf } from '../../src/modules/ai-engine/text';

describe('human_requested phrases', () => {
  it.each([
    'I want to speak to a person',
    'Can I talk to a human?',
    'let me speak with your supervisor',
    'transfer me to an agent',
    'OPERATOR',
    'representative please',
    'get me a real person',
    'no, I want to talk to a person',
    'Quiero hablar con una persona',
    'quiero hablar con un agente',
    'páseme con un representante',
    'comuníqueme con alguien por favor',
    'operador',
    'necesito hablar con un ser humano',
  ])('EN/ES request: %s', (u) => expect(requestsHuman(tokensOf(u))).toBe(true));

  it.each([
    "I don't want to talk to a person",
    'I do not need to speak with an agent',
    'no quiero hablar con una persona',
    'nunca hablar con un agente',
    'are you a person?',
    'I paid in person',
    'hello',
  ])('not a request: %s', (u) => expect(requestsHuman(tokensOf(u))).toBe(false));
});

describe('amounts', () => {
  it.each([
    ['I can pay $50', [{ cents: 5000, monthly: false }]],
    ['maybe $1,234.5', [{ cents: 123450, monthly: false }]],
    ['I could pay 75 dollars a month', [{ cents: 7500, monthly: true }]],
    ['puedo pagar 200 pesos al mes', [{ cents: 20000, monthly: true }]],
    ['$100 per month for 10 months', [{ cents: 10000, monthly: true }]],
    ['I can pay 300 now and $20 later', [{ cents: 30000, monthly: false }, { cents: 2000, monthly: false }]],
    ['I can pay 6 months', []],
    ['my zip is 94105', []],
    ['$0', []],
    ['$99999999999999999999', []],
  ])('%s', (u, expected) => expect(amountsOf(u)).toEqual(expected));
});

describe('months, dates, sentiment', () => {
  it.each([
    ['how about 6 months', 6],
    ['twelve monthly payments', 12],
    ['en 10 pagos', 10],
    ['doce meses', 12],
    ['$50 a month', null],
    ['I can pay $50', null],
  ])('months in %s', (u, n) => expect(monthsOf(u)).toBe(n));

  it('reads ISO dates only, and only valid ones', () => {
    expect(dateOf('on 2026-12-15 please')).toBe('2026-12-15');
    expect(dateOf('2026-13-01')).toBeNull();
    expect(dateOf('next friday')).toBeNull();
  });

  it('scores words and flips a negated one', () => {
    expect(sentimentOf(tokensOf('this is ridiculous'))).toBe(-2);
    expect(sentimentOf(tokensOf('I am not happy'))).toBe(-2);
    expect(sentimentOf(tokensOf('Estoy HARTO, es una estafa'))).toBe(-5);
    expect(sentimentOf(tokensOf('thanks, that is great'))).toBe(3);
  });
});

describe('readUtterance signals', () => {
  it.each([
    ['Yes, that is me', { yes: true, no: false }],
    ['sí, soy yo', { yes: true, no: false }],
    ['nope', { yes: false, no: true }],
    ['stop calling me', { optOut: true }],
    ['no me llamen más', { optOut: true }],
    ['wrong number', { wrongParty: true }],
    ['that is not my debt', { dispute: true }],
    ['ya pagué esa cuenta', { dispute: true }],
    ["I won't pay", { refusal: true }],
    ["that's too much", { declineOffer: true }],
    ['call me back tomorrow', { callback: true }],
    ['who is this?', { askPurpose: true }],
    ['¿cuánto debo?', { askBalance: true }],
  ])('%s', (u, expected) => expect(readUtterance(u)).toMatchObject(expected));
});
