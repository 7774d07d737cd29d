import type { ConversationContext, EngineEvent } from '../../src/modules/ai-engine/engine.types';
import { engineLanguage } from '../../src/modules/ai-engine/engine.types';
import { contextProblem, ruleBasedEngine, WRAP_UP_SECONDS } from '../../src/modules/ai-engine/rule-engine';
import { MINI_MIRANDA } from '../../src/modules/ai-engine/script';
import { context, CREDITOR, DISCLOSURE_ES, run, type Transcript } from './ai-engine-fixtures';

const types = (t: Transcript) => t.events.map((e) => e.type);
const ofType = <K extends EngineEvent['type']>(t: Transcript, type: K) => t.events.filter((e): e is Extract<EngineEvent, { type: K }> => e.type === type);
/** Every way the test balance ($1,234.56), creditor and account last four could be spoken. */
const DEBT_DETAILS = ['1,234.56', '1234.56', CREDITOR, '9876'];

/** The sentences said before the turn that carried the `verified` event, and that turn's own sentences up to the mini-Miranda. */
function saidBeforeVerification(t: Transcript): string[] {
  const out: string[] = [];
  for (const turn of t.turns) {
    if (turn.events.some((e) => e.type === 'verified')) {
      const cut = turn.say.findIndex((line) => line === MINI_MIRANDA.en || line === MINI_MIRANDA.es);
      return [...out, ...turn.say.slice(0, cut)];
    }
    out.push(...turn.say);
  }
  return out;
}

const noDebtDetails = (lines: string[]) => {
  for (const line of lines) for (const detail of DEBT_DETAILS) expect({ line, detail, found: line.includes(detail) }).toEqual({ line, detail, found: false });
};

describe('greeting', () => {
  it('says the disclosure first and verbatim, then asks for the consumer by name', () => {
    const turn = ruleBasedEngine.start(context());
    expect(turn.say[0]).toBe(context().agent.disclosure_text);
    expect(turn.say[1]).toBe('Am I speaking with Jordan Avery?');
    expect(turn.events).toEqual([{ type: 'disclosure_given' }]);
    expect(turn.outcome).toBeNull();
  });

  it('speaks Spanish when the context says so', () => {
    const turn = ruleBasedEngine.start(context({ language: 'es', agent: { ...context().agent, disclosure_text: DISCLOSURE_ES } }));
    expect(turn.say).toEqual([DISCLOSURE_ES, '¿Hablo con Jordan Avery?']);
  });

  it('refuses to start, silently, when the disclosure does not identify the voice as automated', () => {
    const ctx = context({ agent: { ...context().agent, disclosure_text: 'Hello from Northwind Recovery.' } });
    expect(contextProblem(ctx)).toMatch(/does not clearly identify/);
    const turn = ruleBasedEngine.start(ctx);
    expect(turn.say).toEqual([]);
    expect(turn.outcome).toBe('completed');
    expect(turn.events).toEqual([{ type: 'end', outcome: 'completed', reason: 'invalid_context' }]);
  });

  it('refuses to start when the policy prohibits words of the disclosure or of the mini-Miranda', () => {
    const withProhibited = (prohibited: string[]) => context({ agent: { ...context().agent, policy: { ...context().agent.policy, prohibited } } });
    expect(contextProblem(withProhibited(['AUTOMATED call']))).toMatch(/disclosure text contains a prohibited phrase/);
    expect(contextProblem(withProhibited(['débt']))).toMatch(/mandatory debt-collection notice/);
    expect(ruleBasedEngine.start(withProhibited(['debt'])).say).toEqual([]);
    expect(contextProblem(context())).toBeNull();
  });

  it('derives the language from the BCP-47 primary tag', () => {
    expect(['es', 'es-MX', 'ES_us', 'en-US', 'fr-CA', '', null, undefined].map(engineLanguage)).toEqual(['es', 'es', 'es', 'en', 'en', 'en', 'en', 'en']);
  });
});

describe('verification gate', () => {
  it('says nothing about the debt before verification, then the mini-Miranda, creditor and exposed facts', () => {
    const t = run(context(), ['yes', '4321']);
    noDebtDetails(saidBeforeVerification(t));
    const verifiedTurn = t.turns[2]!;
    expect(verifiedTurn.say.slice(0, 4)).toEqual([
      'Thank you for confirming.',
      MINI_MIRANDA.en,
      `This call is on behalf of ${CREDITOR}.`,
      'Your current balance is $1,234.56.',
    ]);
    expect(types(t)).toEqual(['disclosure_given', 'identity_confirmed', 'verification_attempt', 'verified', 'mini_miranda_given', 'offer']);
  });

  it('states only the facts consult_config.expose lists, in its order', () => {
    const debt = { ...context().debt, account_status: 'past due', minimum_payment_cents: 2500, due_date: '2026-12-01' };
    const t = run(context({ debt, consult_config: { factor: 'ssn_last4', expose: ['due_date', 'last4_account', 'minimum_payment', 'account_status'] } }), ['yes', '4321']);
    expect(t.turns[2]!.say.slice(3, 7)).toEqual([
      'The payment due date is 2026-12-01.',
      'This is about your account ending in 9876.',
      'The minimum payment due is $25.00.',
      'Your account status is: past due.',
    ]);
    expect(t.said.some((line) => line.startsWith('Your current balance'))).toBe(false);
  });

  it('ends politely, with no debt detail, after max_attempts wrong answers', () => {
    const t = run(context({ consult_config: { factor: 'ssn_last4', max_attempts: 2 } }), ['yes', '1111', '2222', '4321']);
    expect(t.last.outcome).toBe('verification_failed');
    expect(ofType(t, 'verification_attempt')).toEqual([
      { type: 'verification_attempt', ok: false, attempt: 1 },
      { type: 'verification_attempt', ok: false, attempt: 2 },
    ]);
    expect(ofType(t, 'verification_failed')).toEqual([{ type: 'verification_failed', reason: 'max_attempts' }]);
    expect(t.turns).toHaveLength(4);
    noDebtDetails(t.said);
    expect(t.last.state.verification!.expected).toBeNull();
    expect(t.said.at(-1)).toMatch(/wasn't able to verify your identity/);
  });

  it('defaults to three attempts', () => {
    const t = run(context(), ['yes', '1', '2', '3', '4321']);
    expect(t.last.outcome).toBe('verification_failed');
    expect(ofType(t, 'verification_attempt')).toHaveLength(3);
  });

  it('does not count a turn without an answer as an attempt', () => {
    const t = run(context(), ['yes', 'hmm, let me look', 'who is calling?', '4321']);
    expect(ofType(t, 'verification_attempt')).toEqual([{ type: 'verification_attempt', ok: true, attempt: 1 }]);
    expect(t.said).toContain("I'm calling about a personal business matter, and I first need to confirm I'm speaking with the right person.");
  });

  it('ends as unverifiable when the debt lacks the configured fact', () => {
    const { pin: _pin, ...debt } = context().debt;
    const t = run(context({ debt, consult_config: { factor: 'pin' } }), ['yes']);
    expect(ofType(t, 'verification_failed')).toEqual([{ type: 'verification_failed', reason: 'unverifiable' }]);
    expect(t.last.outcome).toBe('verification_failed');
  });

  it('with verification disabled ({}), a yes to the name only gets a person or a callback, never the debt', () => {
    const t = run(context({ consult_config: {} }), ['yes, speaking']);
    expect(types(t)).toEqual(['disclosure_given', 'identity_confirmed']);
    expect(t.last.say).toEqual([
      "Thank you. I'm not able to go over the details of this matter on this call.",
      'Would you like to speak with a person now? If now is not a good time, just say call me later and we will call you back.',
    ]);
    noDebtDetails(t.said);
    const person = run(context({ consult_config: {} }), ['yes, speaking', 'yes please']);
    expect(ofType(person, 'handoff')).toEqual([{ type: 'handoff', rule_id: null, trigger: 'human_requested', action: 'offer_human', severity: 'soft' }]);
    expect(person.last.outcome).toBe('handoff');
    const later = run(context({ consult_config: {}, language: 'es' }), ['sí', 'llámeme más tarde']);
    expect(later.last.outcome).toBe('callback_requested');
    const no = run(context({ consult_config: {} }), ['yes', 'no thanks']);
    expect(ofType(no, 'end')).toEqual([{ type: 'end', outcome: 'completed', reason: 'identity_only' }]);
    for (const script of [['yes', 'how much do I owe?', 'what is this about?', 'I want to pay $50', 'no']]) {
      const r = run(context({ consult_config: {} }), script);
      noDebtDetails(r.said);
      expect(types(r)).not.toContain('offer');
      expect(types(r)).not.toContain('mini_miranda_given');
    }
    noDebtDetails(run(context({ consult_config: {} }), ['mm']).said);
  });

  it('keeps no verification fact in the state, and erases the expected answer once verified', () => {
    const start = ruleBasedEngine.start(context());
    expect(Object.keys(start.state.context.debt).sort()).toEqual(['account_last4', 'balance_cents', 'creditor_name', 'currency']);
    expect(start.state.verification!.expected).toBe('4321');
    expect(run(context(), ['yes', '4321']).last.state.verification!.expected).toBeNull();
  });
});

describe('other intents', () => {
  it.each([
    ['wrong number'],
    ["no, that's not me"],
    ['no'],
    ['no one by that name lives here'],
    ['número equivocado'],
    ['no, no soy yo'],
  ])('%s → apologizes and ends as wrong_party without disclosing anything', (utterance) => {
    const t = run(context(), [utterance]);
    expect(t.last.outcome).toBe('wrong_party');
    expect(t.last.say).toEqual(['I apologize for the inconvenience. Goodbye.']);
    noDebtDetails(t.said);
  });

  it.each([['stop calling me'], ['Do not call this number again'], ['no me vuelvan a llamar'], ['dejen de llamar']])(
    '%s → refusal and opt_out events, ends',
    (utterance) => {
      const t = run(context(), ['yes', '4321', utterance]);
      expect(t.last.events).toEqual([{ type: 'refusal' }, { type: 'opt_out' }, { type: 'end', outcome: 'refused_to_pay', reason: 'opt_out' }]);
      expect(t.last.say).toEqual(["Understood. We'll stop calling this number. Goodbye."]);
    },
  );

  it('opt-out works before verification too', () => {
    expect(run(context(), ["don't call me anymore"]).last.outcome).toBe('refused_to_pay');
  });

  it.each([['Can you call me later?'], ['llámeme más tarde']])('%s → callback_requested', (utterance) => {
    const t = run(context(), [utterance]);
    expect(t.last.outcome).toBe('callback_requested');
    noDebtDetails(t.said);
  });

  it('a dispute is noted, no further offer is made, and a person is offered', () => {
    const t = run(context(), ['yes', '4321', "I don't owe this, it's not my debt", 'no']);
    expect(ofType(t, 'dispute')).toHaveLength(1);
    expect(t.turns[3]!.events).toEqual([{ type: 'dispute' }, { type: 'handoff_offered', rule_id: null, trigger: 'dispute', action: 'offer_human', severity: 'hard' }]);
    expect(t.last.outcome).toBe('completed');
    expect(t.last.events.at(-1)).toEqual({ type: 'end', outcome: 'completed', reason: 'disputed' });
    expect(ofType(t, 'offer')).toHaveLength(1);
  });

  it('a dispute accepted goes to a person', () => {
    const t = run(context(), ['yes', '4321', 'I already paid this', 'yes please']);
    expect(t.last.outcome).toBe('handoff');
    expect(ofType(t, 'handoff')).toEqual([{ type: 'handoff', rule_id: null, trigger: 'dispute', action: 'offer_human', severity: 'hard' }]);
  });

  it('reprompts twice on unrecognized turns, then ends', () => {
    const t = run(context(), ['', 'hmm', 'the weather is nice']);
    expect(ofType(t, 'reprompt')).toEqual([{ type: 'reprompt', count: 1 }, { type: 'reprompt', count: 2 }]);
    expect(t.turns[1]!.say).toEqual(["I'm sorry, I didn't catch that.", 'Am I speaking with Jordan Avery?']);
    expect(t.last.events.at(-1)).toEqual({ type: 'end', outcome: 'completed', reason: 'no_response' });
  });

  it('an understood turn resets the reprompt count', () => {
    const t = run(context(), ['', 'hmm', 'yes', '', 'uh', '4321']);
    expect(ofType(t, 'reprompt').map((e) => e.count)).toEqual([1, 2, 1, 2]);
    expect(ofType(t, 'verified')).toHaveLength(1);
  });

  it('answers "how much" with the balance only when it is exposed', () => {
    expect(run(context(), ['yes', '4321', 'how much do I owe?']).last.say[0]).toBe('Your current balance is $1,234.56.');
    const hidden = run(context({ consult_config: { factor: 'ssn_last4' } }), ['yes', '4321', 'how much do I owe?']);
    expect(hidden.last.say[0]).toBe("I'm not able to share that detail on this call.");
  });
});

describe('negotiation flow', () => {
  it('escalates full balance → best plan → best settlement, then holds the floor and gives up', () => {
    const t = run(context(), ['yes', '4321', 'no', "I can't afford that", 'lower please', 'no', 'no']);
    const offers = ofType(t, 'offer').map(({ kind, amount_cents, months }) => ({ kind, amount_cents, months }));
    expect(offers).toEqual([
      { kind: 'lump_sum', amount_cents: 123456, months: undefined },
      { kind: 'installments', amount_cents: 123456, months: 6 },
      { kind: 'lump_sum', amount_cents: 86420, months: undefined },
      { kind: 'lump_sum', amount_cents: 86420, months: undefined },
    ]);
    expect(t.last.outcome).toBe('refused_to_pay');
  });

  it('records a promise for the accepted offer, with the date named', () => {
    const t = run(context(), ['yes', '4321', 'no', 'ok, I can do that on 2026-12-15']);
    expect(ofType(t, 'promise')).toEqual([
      { type: 'promise', kind: 'installments', amount_cents: 123456, months: 6, installment_cents: 20576, final_installment_cents: 20576, date: '2026-12-15', method: 'promise' },
    ]);
    expect(t.last.outcome).toBe('promise_to_pay');
  });

  it('declines a payment below the minimum with a counter-offer at the minimum', () => {
    const t = run(context(), ['yes', '4321', 'I can pay $20']);
    expect(t.last.events.slice(0, 2)).toEqual([
      { type: 'offer_declined', reason: 'below_minimum' },
      { type: 'offer', kind: 'payment', amount_cents: 5000, pct_of_balance: 4.05 },
    ]);
  });

  it('restates an in-policy proposal and accepts it on yes', () => {
    const t = run(context(), ['yes', '4321', 'I could do $300 a month', 'yes']);
    expect(ofType(t, 'offer')[1]).toEqual({
      type: 'offer', kind: 'installments', amount_cents: 123456, months: 5, installment_cents: 24691, final_installment_cents: 24692, pct_of_balance: 100,
    });
    expect(t.turns[3]!.say).toContain('You can pay the balance in 4 monthly payments of $246.91 and a final payment of $246.92.');
    expect(ofType(t, 'promise')[0]).toMatchObject({ kind: 'installments', months: 5 });
  });

  it('never asks for card details; with card_on_file it confirms a charge on the card on file', () => {
    const none = run(context(), ['yes', '4321', 'yes']);
    expect(none.said.join(' ')).not.toMatch(/card/i);
    const policy = { ...context().agent.policy, take_payments: 'card_on_file' as const };
    const card = run(context({ agent: { ...context().agent, policy } }), ['yes', '4321', 'yes']);
    expect(card.turns[2]!.say.at(-1)).toBe('Would you like to pay that with the card we have on file?');
    expect(ofType(card, 'promise')[0]).toMatchObject({ method: 'card_on_file', amount_cents: 123456 });
    expect(card.said.join(' ')).not.toMatch(/card number|cvv|security code|expiration/i);
  });

  it('two explicit refusals end the call as refused_to_pay', () => {
    const t = run(context(), ['yes', '4321', "I won't pay", 'I refuse to pay']);
    expect(ofType(t, 'refusal')).toHaveLength(2);
    expect(t.last.outcome).toBe('refused_to_pay');
  });

  it('ends as completed when nothing is due', () => {
    const t = run(context({ debt: { ...context().debt, balance_cents: 0 } }), ['yes', '4321']);
    expect(t.last.events.at(-1)).toEqual({ type: 'end', outcome: 'completed', reason: 'nothing_due' });
    expect(ofType(t, 'offer')).toEqual([]);
  });

  it('runs the whole flow in Spanish', () => {
    const ctx = context({ language: 'es', agent: { ...context().agent, disclosure_text: DISCLOSURE_ES } });
    const t = run(ctx, ['sí, soy yo', 'cuatro tres dos uno', 'no puedo', 'de acuerdo']);
    expect(t.turns[2]!.say.slice(0, 4)).toEqual([
      'Gracias por confirmar.',
      MINI_MIRANDA.es,
      `Esta llamada es en nombre de ${CREDITOR}.`,
      'Su saldo actual es de $1,234.56.',
    ]);
    expect(t.turns[3]!.say).toEqual(['Puede pagar el saldo en 6 pagos mensuales de $205.76.', '¿Puede comprometerse a eso?']);
    expect(t.last.outcome).toBe('promise_to_pay');
  });
});

describe('call ceiling', () => {
  const ctx = context({ max_call_seconds: 120 });

  it('at max_call_seconds the turn ends with ceiling_reached / max_duration, whatever was said', () => {
    const start = ruleBasedEngine.start(ctx);
    const turn = ruleBasedEngine.respond(start.state, 'yes', 120);
    expect(turn.events).toEqual([{ type: 'ceiling_reached' }, { type: 'end', outcome: 'max_duration', reason: 'ceiling' }]);
    expect(turn.say).toEqual(["We've reached the time limit for this call. Thank you, goodbye."]);
    expect(turn.outcome).toBe('max_duration');
  });

  it('an opt-out at the ceiling is still reported', () => {
    const turn = ruleBasedEngine.respond(ruleBasedEngine.start(ctx).state, 'stop calling', 500);
    expect(turn.events.map((e) => e.type)).toEqual(['opt_out', 'ceiling_reached', 'end']);
  });

  it('inside the wrap-up window it asks nothing new and wraps up', () => {
    const at = 120 - WRAP_UP_SECONDS;
    const verified = run(ctx, ['yes', '4321'], 1).last;
    const turn = ruleBasedEngine.respond(verified.state, 'no', at);
    expect(turn.events).toEqual([{ type: 'wrap_up' }, { type: 'end', outcome: 'max_duration', reason: 'wrap_up' }]);
    expect(turn.say).toEqual(["We're almost out of time for this call. We'll follow up with you another time. Thank you, goodbye."]);
  });

  it('inside the wrap-up window a yes to the pending offer is still a promise', () => {
    const verified = run(ctx, ['yes', '4321'], 1).last;
    expect(ruleBasedEngine.respond(verified.state, 'yes', 110).outcome).toBe('promise_to_pay');
  });

  it('one second before the window the conversation goes on', () => {
    const verified = run(ctx, ['yes', '4321'], 1).last;
    expect(ruleBasedEngine.respond(verified.state, 'no', 120 - WRAP_UP_SECONDS - 1).outcome).toBeNull();
  });
});

describe('state and determinism', () => {
  const script = ['who is this?', 'yes', '1234', '4321', 'how much?', 'I can pay $40', 'too much', 'you people are ridiculous', '6 months', 'yes'];

  it('the same context and script give identical turns', () => {
    expect(JSON.stringify(run(context(), script).turns)).toBe(JSON.stringify(run(context(), script).turns));
  });

  it('states are plain JSON and round-trip through serialization', () => {
    const a = run(context(), script);
    let state = JSON.parse(JSON.stringify(ruleBasedEngine.start(context()).state));
    const replayed = [];
    for (const [i, utterance] of script.entries()) {
      const turn = ruleBasedEngine.respond(state, utterance, (i + 1) * 10);
      replayed.push(turn);
      state = JSON.parse(JSON.stringify(turn.state));
      if (turn.outcome) break;
    }
    expect(JSON.stringify(replayed)).toBe(JSON.stringify(a.turns.slice(1)));
  });

  it('respond never mutates the state it is given', () => {
    const start = ruleBasedEngine.start(context());
    const before = JSON.stringify(start.state);
    ruleBasedEngine.respond(start.state, 'yes', 5);
    expect(JSON.stringify(start.state)).toBe(before);
  });

  it('an ended conversation answers empty turns with the same outcome', () => {
    const t = run(context(), ['wrong number']);
    const again = ruleBasedEngine.respond(t.last.state, 'yes', 20);
    expect(again).toEqual({ state: t.last.state, say: [], events: [], outcome: 'wrong_party' });
  });

  it('a context without a human_requested rule still honors the request', () => {
    const ctx: ConversationContext = { ...context(), agent: { ...context().agent, handoff_rules: [] } };
    expect(run(ctx, ['I want to talk to a real person']).last.outcome).toBe('handoff');
  });
});
