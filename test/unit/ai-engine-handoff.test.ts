import type { HandoffAction, HandoffRule, HandoffSeverity, HandoffTrigger } from '../../src/modules/ai-engine/engine.types';
import { compileRules, DEFAULT_HUMAN_RULE, firingRule } from '../../src/modules/ai-engine/handoff';
import { readUtterance } from '../../src/modules/ai-engine/intents';
import { context, HUMAN_RULE, run } from './ai-engine-fixtures';

const RULE_ID = '7d0c2a52-3a0e-4c55-9d1e-1f2a3b4c5d6e';

const TRIGGERS: { trigger: HandoffTrigger; params: Record<string, unknown>; utterance: string }[] = [
  { trigger: 'keywords', params: { keywords: ['bankruptcy', 'quiebra'] }, utterance: 'I am filing for BANKRUPTCY next week' },
  { trigger: 'negative_sentiment', params: {}, utterance: 'this is ridiculous, you are liars' },
  { trigger: 'payment_over', params: { cents: 100000 }, utterance: 'I can pay $1,500' },
  { trigger: 'human_requested', params: {}, utterance: 'can I speak to a representative' },
];
const ACTIONS: HandoffAction[] = ['transfer', 'offer_human', 'confirm_human'];
const SEVERITIES: HandoffSeverity[] = ['hard', 'soft'];
/** The actions that ask before handing off. */
const ASKING = ACTIONS.filter((a): a is Exclude<HandoffAction, 'transfer'> => a !== 'transfer');

function withRule(trigger: HandoffTrigger, params: Record<string, unknown>, action: HandoffAction, severity: HandoffSeverity) {
  const rule: HandoffRule = { id: RULE_ID, trigger, params, action, severity, locked: trigger === 'human_requested' };
  const rules = trigger === 'human_requested' ? [rule] : [rule, HUMAN_RULE];
  return context({ agent: { ...context().agent, handoff_rules: rules } });
}

const QUESTION: Record<Exclude<HandoffAction, 'transfer'>, string> = {
  offer_human: 'Would you like to speak with a person?',
  confirm_human: 'Just to confirm, would you like to speak with a person?',
};

describe.each(TRIGGERS)('trigger $trigger', ({ trigger, params, utterance }) => {
  describe.each(SEVERITIES)('severity %s', (severity) => {
    const ref = (action: HandoffAction) => ({ rule_id: RULE_ID, trigger, action, severity });

    it('transfer hands off at once', () => {
      const t = run(withRule(trigger, params, 'transfer', severity), ['yes', '4321', utterance]);
      expect(t.last.events).toEqual([{ type: 'handoff', ...ref('transfer') }, { type: 'end', outcome: 'handoff', reason: 'handoff' }]);
      expect(t.last.say).toEqual(["I'll connect you with a representative now. Please hold."]);
    });

    it.each(ASKING)('%s asks, and hands off on yes', (action) => {
      const t = run(withRule(trigger, params, action, severity), ['yes', '4321', utterance, 'yes please']);
      expect(t.turns[3]!.events).toEqual([{ type: 'handoff_offered', ...ref(action) }]);
      expect(t.turns[3]!.say).toEqual([QUESTION[action]]);
      expect(t.last.events[0]).toEqual({ type: 'handoff', ...ref(action) });
      expect(t.last.outcome).toBe('handoff');
    });

    it.each(ASKING)(
      severity === 'hard' ? '%s declined: stops negotiating and ends' : '%s declined: continues the negotiation',
      (action) => {
        const t = run(withRule(trigger, params, action, severity), ['yes', '4321', utterance, 'no thanks']);
        expect(t.last.events[0]).toEqual({ type: 'handoff_declined', ...ref(action) });
        if (severity === 'hard') {
          expect(t.last.events.at(-1)).toEqual({ type: 'end', outcome: 'completed', reason: 'handoff_declined' });
          expect(t.last.say).toEqual(['Thank you for your time. Goodbye.']);
        } else {
          expect(t.last.outcome).toBeNull();
          expect(t.last.say).toEqual([
            "All right, let's continue.",
            'You can resolve this account with one payment of $1,234.56, the full balance.',
            'Can you commit to that?',
          ]);
          expect(t.last.state.phase).toBe('negotiate');
        }
      },
    );
  });
});

describe('declined soft rules', () => {
  it('a declined soft rule stays quiet for the rest of the call', () => {
    const ctx = withRule('keywords', { keywords: ['bankruptcy'] }, 'offer_human', 'soft');
    const t = run(ctx, ['yes', '4321', 'bankruptcy', 'no', 'bankruptcy again']);
    expect(t.events.filter((e) => e.type === 'handoff_offered')).toHaveLength(1);
  });

  it('a declined human_requested rule fires again on a new request', () => {
    const ctx = withRule('human_requested', {}, 'confirm_human', 'soft');
    const t = run(ctx, ['yes', '4321', 'talk to a human', 'no', 'actually, let me speak to an agent', 'yes']);
    expect(t.events.filter((e) => e.type === 'handoff_offered')).toHaveLength(2);
    expect(t.last.outcome).toBe('handoff');
  });
});

describe('payment_over on an accepted offer', () => {
  const rule = (action: HandoffAction, severity: HandoffSeverity) => withRule('payment_over', { cents: 100000 }, action, severity);

  it('transfer: accepting an offer over the threshold hands off instead of recording a promise', () => {
    const t = run(rule('transfer', 'hard'), ['yes', '4321', 'yes']);
    expect(t.last.outcome).toBe('handoff');
    expect(t.events.some((e) => e.type === 'promise')).toBe(false);
  });

  it('soft offer declined: the promise is recorded', () => {
    const t = run(rule('offer_human', 'soft'), ['yes', '4321', 'yes', 'no']);
    expect(t.last.events.map((e) => e.type)).toEqual(['handoff_declined', 'promise', 'end']);
    expect(t.last.outcome).toBe('promise_to_pay');
  });

  it('an offer at or under the threshold is simply promised', () => {
    const t = run(withRule('payment_over', { cents: 123456 }, 'transfer', 'hard'), ['yes', '4321', 'yes']);
    expect(t.last.outcome).toBe('promise_to_pay');
  });
});

describe('negative_sentiment parameters', () => {
  it('fires at the default threshold −2, not above', () => {
    const ctx = withRule('negative_sentiment', {}, 'transfer', 'hard');
    expect(run(ctx, ['yes', '4321', 'I am annoyed']).last.outcome).toBe('handoff');
    expect(run(ctx, ['yes', '4321', 'I am tired']).last.outcome).toBeNull();
    expect(run(ctx, ['yes', '4321', 'I am not happy']).last.outcome).toBe('handoff');
  });

  it('honors a custom threshold and a consecutive-turn count', () => {
    const ctx = withRule('negative_sentiment', { threshold: -1, consecutive: 2 }, 'transfer', 'hard');
    const once = run(ctx, ['yes', '4321', 'I am tired', 'no']);
    expect(once.last.outcome).toBeNull();
    const twice = run(ctx, ['yes', '4321', 'I am tired', 'estoy harto']);
    expect(twice.last.outcome).toBe('handoff');
  });

  it('fires before verification too (nothing about the debt is said)', () => {
    const ctx = withRule('negative_sentiment', {}, 'transfer', 'hard');
    expect(run(ctx, ['you are stupid scammers']).last.outcome).toBe('handoff');
  });
});

describe('keywords', () => {
  const ctx = withRule('keywords', { keywords: ['bankruptcy', 'Cáncer', 'lost my job'] }, 'transfer', 'hard');

  it.each([['I lost my job last month'], ['tengo CANCER'], ['BANKRUPTCY!']])('matches %s (whole words, case and accents ignored)', (u) => {
    expect(run(ctx, ['yes', '4321', u]).last.outcome).toBe('handoff');
  });

  it.each([['bankruptcys are hard'], ['I lost my jobs'], ['cancerous']])('does not match part of a word: %s', (u) => {
    expect(run(ctx, ['yes', '4321', u]).last.outcome).toBeNull();
  });

  it('a malformed rule never fires and never throws', () => {
    const bad = withRule('keywords', { keywords: 'bankruptcy' }, 'transfer', 'hard');
    expect(run(bad, ['yes', '4321', 'bankruptcy']).last.outcome).toBeNull();
    const badCents = withRule('payment_over', { cents: 'lots' }, 'transfer', 'hard');
    expect(run(badCents, ['yes', '4321', 'I can pay $100000']).last.outcome).toBeNull();
  });
});

describe('rule order', () => {
  const rule = (trigger: HandoffTrigger, severity: HandoffSeverity, id: string, params: Record<string, unknown> = {}): HandoffRule => ({
    id, trigger, params, action: 'transfer', severity, locked: false,
  });

  it('human_requested first, then hard before soft, then array order', () => {
    const compiled = compileRules([
      rule('keywords', 'soft', 'k-soft'),
      rule('negative_sentiment', 'hard', 's-hard'),
      rule('payment_over', 'soft', 'p-soft'),
      rule('keywords', 'hard', 'k-hard'),
      rule('human_requested', 'soft', 'human'),
    ]);
    expect(compiled.map((r) => r.key)).toEqual(['human', 's-hard', 'k-hard', 'k-soft', 'p-soft']);
  });

  it('adds the locked default human_requested rule when the agent has none', () => {
    const compiled = compileRules([rule('keywords', 'hard', 'k')]);
    expect(compiled.map((r) => [r.trigger, r.action, r.severity])).toEqual([
      ['human_requested', DEFAULT_HUMAN_RULE.action, DEFAULT_HUMAN_RULE.severity],
      ['keywords', 'transfer', 'hard'],
    ]);
  });

  it('the first matching rule in that order fires', () => {
    const compiled = compileRules([
      rule('keywords', 'soft', 'soft-kw', { keywords: ['person'] }),
      rule('keywords', 'hard', 'hard-kw', { keywords: ['person'] }),
      rule('human_requested', 'soft', 'human'),
    ]);
    const fire = (u: string) => firingRule(compiled, { reading: readUtterance(u), sentimentHistory: [0] }, [])?.key;
    expect(fire('let me speak to a person')).toBe('human');
    expect(fire('what a person')).toBe('hard-kw');
    expect(firingRule(compiled, { reading: readUtterance('what a person'), sentimentHistory: [0] }, ['hard-kw'])?.key).toBe('soft-kw');
  });
});

describe('human_requested in Spanish', () => {
  const spanish = (rules: HandoffRule[]) =>
    context({ language: 'es', agent: { ...context().agent, disclosure_text: 'Esta es una llamada automatizada de Northwind Recovery.', handoff_rules: rules } });

  it.each(['quiero hablar con una persona', 'páseme con un agente, por favor', '¡operador!'])('%s hands off (default rule, before verification too)', (u) => {
    const t = run(spanish([]), [u]);
    expect(t.last.events[0]).toEqual({ type: 'handoff', rule_id: null, trigger: 'human_requested', action: 'transfer', severity: 'hard' });
    expect(t.last.say).toEqual(['Le comunico con un representante ahora. Por favor espere.']);
  });

  it('confirm_human asks in Spanish and hands off on "sí"', () => {
    const rule: HandoffRule = { id: RULE_ID, trigger: 'human_requested', params: {}, action: 'confirm_human', severity: 'soft', locked: true };
    const t = run(spanish([rule]), ['sí', '4321', 'quiero hablar con un humano', 'sí, por favor']);
    expect(t.turns[3]!.say).toEqual(['Para confirmar, ¿desea hablar con una persona?']);
    expect(t.last.outcome).toBe('handoff');
  });
});
