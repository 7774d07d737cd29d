import type { ConversationContext, HandoffRule, Turn } from '../../src/modules/ai-engine/engine.types';
import { ruleBasedEngine, type RuleEngineState } from '../../src/modules/ai-engine/rule-engine';

export const DISCLOSURE_EN = 'Hello, this is an automated call from Northwind Recovery.';
export const DISCLOSURE_ES = 'Hola, esta es una llamada automatizada de Northwind Recovery.';
export const CREDITOR = 'Contoso Bank';
export const HUMAN_RULE: HandoffRule = { id: null, trigger: 'human_requested', params: {}, action: 'transfer', severity: 'hard', locked: true };

/** A context with verification on the SSN last four, a $1,234.56 balance and a permissive policy. */
export function context(overrides: Partial<ConversationContext> = {}): ConversationContext {
  return {
    language: 'en',
    agent: {
      disclosure_text: DISCLOSURE_EN,
      policy: { max_settlement_pct: 30, min_payment_cents: 5000, max_plan_months: 6, take_payments: 'none', prohibited: [] },
      handoff_rules: [HUMAN_RULE],
    },
    debt: {
      balance_cents: 123456,
      currency: 'USD',
      creditor_name: CREDITOR,
      account_last4: '9876',
      account_number: '55000009876',
      ssn_last4: '4321',
      dob: '1980-03-15',
      pin: '2468',
      zip: '94105',
    },
    consult_config: { factor: 'ssn_last4', expose: ['balance'] },
    consumer_name: 'Jordan Avery',
    max_call_seconds: 300,
    ...overrides,
  };
}

export interface Transcript {
  turns: Turn<RuleEngineState>[];
  last: Turn<RuleEngineState>;
  said: string[];
  events: Turn<RuleEngineState>['events'];
}

/** Runs a script, one consumer turn every `step` seconds; stops feeding turns once the call has ended. */
export function run(ctx: ConversationContext, script: readonly string[], step = 10): Transcript {
  const turns = [ruleBasedEngine.start(ctx)];
  let elapsed = 0;
  for (const utterance of script) {
    const previous = turns[turns.length - 1]!;
    if (previous.outcome !== null) break;
    elapsed += step;
    turns.push(ruleBasedEngine.respond(previous.state, utterance, elapsed));
  }
  return { turns, last: turns[turns.length - 1]!, said: turns.flatMap((t) => t.say), events: turns.flatMap((t) => t.events) };
}
