import { eligibilityReasons, maskConsumerText, ratio, SANDBOX_DEFAULT_DEBT, sandboxDebtProblem, type EligibilityFacts } from '../../src/modules/ai-conversations/ai-conversation.rules';
import { runScript } from '../../src/modules/ai-conversations/ai-sandbox.service';
import type { ConversationContext } from '../../src/modules/ai-engine/engine.types';

describe('maskConsumerText', () => {
  it.each([
    ['call 5551234567', 'call ******4567'],
    ['555-123-4567', '***-***-4567'],
    ['(555) 123-4567', '(***) ***-4567'],
    ['+1 555.123.4567', '+* ***.***.4567'],
    ['card 4111111111111111', 'card ************1111'],
    ['1234567', '***4567'],
    ['two  spaces 555  1234', 'two  spaces ***  1234'],
  ])('masks %s', (input, masked) => {
    expect(maskConsumerText(input)).toBe(masked);
  });

  it.each([['123456'], ['ssn 4321'], ['pay $1,000.50 on 12/15/2026'], ['three spaces 555   1234'], ['']])('leaves %s alone', (input) => {
    expect(maskConsumerText(input)).toBe(input);
  });
});

describe('ratio', () => {
  it('is a 4-decimal string rounded half up, null over zero', () => {
    expect([ratio(1, 3), ratio(2, 3), ratio(0, 5), ratio(5, 5), ratio(1, 8), ratio(1, 0)]).toEqual(['0.3333', '0.6667', '0.0000', '1.0000', '0.1250', null]);
  });
});

describe('sandboxDebtProblem', () => {
  it('accepts the defaults and refuses facts that are not what they claim', () => {
    expect(sandboxDebtProblem(SANDBOX_DEFAULT_DEBT)).toBeNull();
    expect(sandboxDebtProblem({})).toBeNull();
    expect(sandboxDebtProblem({ currency: 'usd' })).toMatch(/currency/);
    expect(sandboxDebtProblem({ creditor_name: '  ' })).toMatch(/creditor_name/);
    expect(sandboxDebtProblem({ account_last4: '12345' })).toMatch(/account_last4/);
    expect(sandboxDebtProblem({ pin: '12' })).toMatch(/pin/);
    expect(sandboxDebtProblem({ zip: '1234' })).toMatch(/zip/);
    expect(sandboxDebtProblem({ due_date: '2026-13-01' })).toMatch(/due_date/);
    expect(sandboxDebtProblem({ dob: '2024-02-29' })).toBeNull();
  });
});

describe('eligibilityReasons', () => {
  const ok: EligibilityFacts = {
    voiceAiEnabled: true,
    tierAllowsAi: true,
    paused: false,
    budgetExhausted: false,
    agentStatus: 'live',
    tenantDisclosureValid: true,
    agentDisclosureValid: true,
    artificialVoice: true,
    consentedLeads: 1,
  };

  it('is empty when every gate passes', () => {
    expect(eligibilityReasons(ok)).toEqual([]);
  });

  it('lists every failing gate in the documented order', () => {
    expect(
      eligibilityReasons({ voiceAiEnabled: false, tierAllowsAi: false, paused: true, budgetExhausted: true, agentStatus: null, tenantDisclosureValid: false, agentDisclosureValid: null, artificialVoice: true, consentedLeads: 0 }),
    ).toEqual(['voice_ai_disabled', 'tier_not_eligible', 'ai_paused', 'budget_exhausted', 'no_ai_agent', 'disclosure_invalid', 'no_prior_express_consent_path']);
  });

  it('checks the agent status and its disclosure separately from the tenant disclosure', () => {
    expect(eligibilityReasons({ ...ok, agentStatus: 'paused' })).toEqual(['ai_agent_not_live']);
    expect(eligibilityReasons({ ...ok, agentDisclosureValid: false })).toEqual(['disclosure_invalid']);
    expect(eligibilityReasons({ ...ok, tenantDisclosureValid: false })).toEqual(['disclosure_invalid']);
  });

  it('applies the disclosure and consent gates only to artificial-voice calls', () => {
    expect(eligibilityReasons({ ...ok, artificialVoice: false, tenantDisclosureValid: false, consentedLeads: 0 })).toEqual([]);
  });
});

describe('runScript', () => {
  const context: ConversationContext = {
    language: 'en',
    agent: {
      disclosure_text: 'This is an automated call from Acme Recovery.',
      policy: { max_settlement_pct: 0, min_payment_cents: 2500, max_plan_months: 6, take_payments: 'none', prohibited: [] },
      handoff_rules: [{ id: 'r1', trigger: 'human_requested', params: {}, action: 'transfer', severity: 'hard', locked: true }],
    },
    debt: SANDBOX_DEFAULT_DEBT,
    consult_config: {},
    max_call_seconds: 900,
  };

  it('is deterministic, clocks turns by the step and stops reading once the conversation ended', () => {
    const verifying: ConversationContext = { ...context, consult_config: { factor: 'ssn_last4' } };
    const a = runScript(verifying, ['yes', '1234', 'yes', 'more'], 7);
    expect(runScript(verifying, ['yes', '1234', 'yes', 'more'], 7)).toEqual(a);
    expect(a.turnsUsed).toBe(3);
    expect(a.outcome).toBe('promise_to_pay');
    expect(a.transcript.filter((t) => t.speaker === 'consumer').map((t) => t.at_seconds)).toEqual([7, 14, 21]);
    expect(a.events.at(-1)).toEqual({ type: 'end', outcome: 'promise_to_pay', reason: 'promise', at_seconds: 21 });
  });

  it('ends at the ceiling on the engine clock', () => {
    const r = runScript({ ...context, max_call_seconds: 30 }, ['hmm', 'hmm', 'hmm', 'hmm'], 30);
    expect(r.outcome).toBe('max_duration');
    expect(r.turnsUsed).toBe(1);
  });

  it('stores masked consumer words while the engine reads them whole', () => {
    const r = runScript(context, ['yes, reach me on 212 555 0123'], 10);
    expect(r.transcript.find((t) => t.speaker === 'consumer')).toEqual({ speaker: 'consumer', text: 'yes, reach me on *** *** 0123', at_seconds: 10 });
    expect(r.events.map((e) => e.type)).toContain('identity_confirmed');
  });
});
