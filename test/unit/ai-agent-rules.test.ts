import {
  AI_AGENT_STATUSES,
  assertDisclosureWritable,
  canonicalLanguage,
  checkedDisclosure,
  checkedHandoffRules,
  checkedName,
  checkedParams,
  checkedPolicy,
  checkedVoice,
  DEFAULT_POLICY,
  DEFAULT_VOICE,
  defaultName,
  HUMAN_REQUESTED_RULE,
  isAiAgentTransition,
  requestedMove,
  versionedChange,
  type AiAgentStatus,
  type HandoffRule,
} from '../../src/modules/ai-agents/ai-agent.rules';
import { errorOf } from '../helpers/errors';


const status422 = (fn: () => unknown, message: RegExp) => {
  const err = errorOf(fn);
  expect({ status: err.status, code: err.code }).toEqual({ status: 422, code: 'unprocessable' });
  expect(err.message).toMatch(message);
};

const EN = 'This is an automated call from Acme Recovery.';
const ES = 'Esta es una llamada automatizada de Acme Recovery.';

describe('AI agent lifecycle moves', () => {
  const allowed: Record<AiAgentStatus, AiAgentStatus[]> = { draft: ['live', 'retired'], live: ['paused', 'retired'], paused: ['live', 'retired'], retired: [] };

  it.each(AI_AGENT_STATUSES.flatMap((from) => AI_AGENT_STATUSES.map((to) => [from, to] as const)))('%s → %s follows the table', (from, to) => {
    expect(isAiAgentTransition(from, to)).toBe(allowed[from].includes(to));
  });

  it('a PATCH move: same status is none, retired is DELETE only, a retired agent refuses, others follow the table', () => {
    expect(requestedMove('live', 'live')).toBeNull();
    expect(requestedMove('draft', 'live')).toBe('live');
    expect(requestedMove('paused', 'live')).toBe('live');
    expect(requestedMove('live', 'paused')).toBe('paused');
    for (const [from, to, message] of [
      ['live', 'retired', /DELETE/],
      ['draft', 'paused', /cannot move from draft to paused/],
      ['live', 'draft', /cannot move from live to draft/],
      ['paused', 'draft', /cannot move/],
      ['retired', 'live', /retired/],
      ['retired', 'retired', /retired/],
    ] as const) {
      const err = errorOf(() => requestedMove(from, to));
      expect({ status: err.status, code: err.code }).toEqual({ status: 409, code: 'conflict' });
      expect(err.message).toMatch(message);
    }
  });
});

describe('names', () => {
  it('trims and bounds a name', () => {
    expect(checkedName('  Ana  ')).toBe('Ana');
    status422(() => checkedName('   '), /blank/);
    status422(() => checkedName('x'.repeat(201)), /200/);
    expect(checkedName('x'.repeat(200))).toHaveLength(200);
  });

  it('the default name is the first free "AI agent N" from N', () => {
    expect(defaultName(1, new Set())).toBe('AI agent 1');
    expect(defaultName(3, new Set(['ai agent 3', 'ai agent 4']))).toBe('AI agent 5');
  });
});

describe('voice', () => {
  it('fills defaults, merges a patch and canonicalizes the language', () => {
    expect(checkedVoice(DEFAULT_VOICE, {})).toEqual({ language: 'en-US', voice_id: 'default', pace: 0.5 });
    expect(checkedVoice(DEFAULT_VOICE, { language: 'es-mx', pace: 1 })).toEqual({ language: 'es-MX', voice_id: 'default', pace: 1 });
    expect(canonicalLanguage('EN')).toBe('en');
  });

  it('refuses what is not BCP-47, a voice_id out of 1..100 and a pace out of 0..1', () => {
    for (const language of ['', 'english please', 'en_US_x_', '12']) status422(() => checkedVoice(DEFAULT_VOICE, { language }), /voice\.language/);
    status422(() => checkedVoice(DEFAULT_VOICE, { voice_id: '' }), /voice\.voice_id/);
    status422(() => checkedVoice(DEFAULT_VOICE, { voice_id: 'v'.repeat(101) }), /voice\.voice_id/);
    status422(() => checkedVoice(DEFAULT_VOICE, { pace: -0.01 }), /voice\.pace/);
    status422(() => checkedVoice(DEFAULT_VOICE, { pace: 1.01 }), /voice\.pace/);
  });
});

describe('policy', () => {
  it('defaults are conservative', () => {
    expect(checkedPolicy(DEFAULT_POLICY, {})).toEqual({ max_settlement_pct: 0, min_payment_cents: 2500, max_plan_months: 6, take_payments: 'none', prohibited: [] });
  });

  it.each([
    [{ max_settlement_pct: 101 }, /max_settlement_pct/],
    [{ max_settlement_pct: -1 }, /max_settlement_pct/],
    [{ max_settlement_pct: 10.5 }, /max_settlement_pct/],
    [{ min_payment_cents: -1 }, /min_payment_cents/],
    [{ max_plan_months: 0 }, /max_plan_months/],
    [{ max_plan_months: 61 }, /max_plan_months/],
  ])('%j is 422', (patch, message) => {
    status422(() => checkedPolicy(DEFAULT_POLICY, patch), message);
  });

  it.each([
    ['101 prohibited phrases', { prohibited: Array.from({ length: 101 }, (_, i) => `p${i}`) }, /at most 100/],
    ['an empty prohibited phrase', { prohibited: [''] }, /prohibited\[0\]/],
    ['a prohibited phrase of 201 characters', { prohibited: ['ok', 'x'.repeat(201)] }, /prohibited\[1\]/],
  ])('%s is 422', (_label, patch, message) => {
    status422(() => checkedPolicy(DEFAULT_POLICY, patch), message);
  });

  it('accepts the bounds', () => {
    expect(checkedPolicy(DEFAULT_POLICY, { max_settlement_pct: 100, min_payment_cents: 0, max_plan_months: 60, prohibited: ['x'.repeat(200)] }).max_plan_months).toBe(60);
  });
});

describe('disclosure', () => {
  it('is mandatory, content-checked in English and Spanish, and at most 10000 bytes', () => {
    expect(checkedDisclosure(EN)).toBe(EN);
    expect(checkedDisclosure(ES)).toBe(ES);
    status422(() => checkedDisclosure(undefined), /required/);
    status422(() => checkedDisclosure('Hello, this is Acme Recovery calling about your account.'), /does not clearly identify/);
    status422(() => checkedDisclosure('Hola, le llamamos de Acme sobre su cuenta.'), /does not clearly identify/);
    status422(() => checkedDisclosure('This is not an automated call.'), /denies/);
    // 'é' is two bytes: 5000 of them plus the sentence pass the character count but not the byte limit.
    status422(() => checkedDisclosure(`${EN} ${'é'.repeat(5000)}`), /10000 bytes/);
  });

  it('once locked, only the same text passes', () => {
    expect(() => assertDisclosureWritable(true, EN, EN)).not.toThrow();
    expect(() => assertDisclosureWritable(false, EN, ES)).not.toThrow();
    const err = errorOf(() => assertDisclosureWritable(true, EN, ES));
    expect({ status: err.status, code: err.code }).toEqual({ status: 409, code: 'conflict' });
  });
});

describe('handoff rule params', () => {
  it('per trigger, with sentiment defaults filled in', () => {
    expect(checkedParams('p', 'keywords', { keywords: ['lawyer', 'abogado'] })).toEqual({ keywords: ['lawyer', 'abogado'] });
    expect(checkedParams('p', 'negative_sentiment', {})).toEqual({ threshold: -0.5, consecutive: 2 });
    expect(checkedParams('p', 'negative_sentiment', { threshold: -0.8, consecutive: 3 })).toEqual({ threshold: -0.8, consecutive: 3 });
    expect(checkedParams('p', 'payment_over', { cents: 50_000 })).toEqual({ cents: 50_000 });
    expect(checkedParams('p', 'human_requested', {})).toEqual({});
  });

  it.each([
    ['keywords', {}, /keywords/],
    ['keywords', { keywords: [] }, /keywords/],
    ['keywords', { keywords: ['  '] }, /keywords/],
    ['keywords', { keywords: [3] }, /keywords/],
    ['keywords', { keywords: ['x'], extra: 1 }, /unknown key 'extra'/],
    ['negative_sentiment', { threshold: 'low' }, /threshold/],
    ['negative_sentiment', { threshold: -2 }, /threshold/],
    ['negative_sentiment', { consecutive: 0 }, /consecutive/],
    ['negative_sentiment', { consecutive: 1.5 }, /consecutive/],
    ['payment_over', {}, /cents/],
    ['payment_over', { cents: 0 }, /cents/],
    ['payment_over', { cents: 10.5 }, /cents/],
    ['human_requested', { seconds: 3 }, /unknown key/],
  ] as const)('%s %j is 422', (trigger, params, message) => {
    status422(() => checkedParams('handoff_rules[0].params', trigger, params), message);
  });
});

describe('handoff rules', () => {
  const keywordRule = { trigger: 'keywords', params: { keywords: ['lawyer'] }, action: 'transfer', severity: 'hard' } as const;

  it('appends the locked human_requested rule and gives every rule a server id', () => {
    const rules = checkedHandoffRules([keywordRule], []);
    expect(rules).toHaveLength(2);
    expect(rules[0]).toMatchObject({ ...keywordRule, locked: false });
    expect(rules[1]).toMatchObject({ ...HUMAN_REQUESTED_RULE, locked: true });
    expect(new Set(rules.map((r) => r.id)).size).toBe(2);
  });

  it('keeps ids of current rules, replaces unknown ids and keeps the locked rule id', () => {
    const current = checkedHandoffRules([keywordRule], []);
    const next = checkedHandoffRules([{ ...keywordRule, id: current[0]!.id, params: { keywords: ['attorney'] } }, { ...keywordRule, id: '00000000-0000-4000-8000-000000000000' }], current);
    expect(next[0]!.id).toBe(current[0]!.id);
    expect(next[1]!.id).not.toBe('00000000-0000-4000-8000-000000000000');
    expect(next[2]!.id).toBe(current[1]!.id);
  });

  it('a resend that says the same thing (ids aside) is the current list itself', () => {
    const current = checkedHandoffRules([keywordRule], []);
    const again = checkedHandoffRules([keywordRule], current);
    expect(again).toEqual(current);
    expect(versionedChange({ voice: DEFAULT_VOICE, disclosure_text: EN, policy: DEFAULT_POLICY, handoff_rules: current }, { voice: DEFAULT_VOICE, disclosure_text: EN, policy: DEFAULT_POLICY, handoff_rules: again })).toBe(false);
  });

  it('the locked rule may be sent unchanged, never changed, unlocked or doubled', () => {
    const current: HandoffRule[] = checkedHandoffRules([], []);
    expect(checkedHandoffRules([{ ...HUMAN_REQUESTED_RULE, locked: true }], current)).toEqual(current);
    status422(() => checkedHandoffRules([{ ...HUMAN_REQUESTED_RULE, action: 'offer_human' }], current), /locked/);
    status422(() => checkedHandoffRules([{ ...HUMAN_REQUESTED_RULE, severity: 'soft' }], current), /locked/);
    status422(() => checkedHandoffRules([{ ...HUMAN_REQUESTED_RULE, locked: false }], current), /locked/);
    status422(() => checkedHandoffRules([HUMAN_REQUESTED_RULE, HUMAN_REQUESTED_RULE], current), /exactly one human_requested/);
  });

  it('refuses a repeated id and too many rules', () => {
    const id = '11111111-1111-4111-8111-111111111111';
    status422(() => checkedHandoffRules([{ ...keywordRule, id }, { ...keywordRule, id }], []), /repeats/);
    status422(() => checkedHandoffRules(Array.from({ length: 51 }, () => keywordRule), []), /at most 50/);
  });
});

describe('versioned change', () => {
  it('any difference in voice, disclosure, policy or rules is a change', () => {
    const base = { voice: DEFAULT_VOICE, disclosure_text: EN, policy: DEFAULT_POLICY, handoff_rules: checkedHandoffRules([], []) };
    expect(versionedChange(base, { ...base })).toBe(false);
    expect(versionedChange(base, { ...base, voice: { ...DEFAULT_VOICE, pace: 0.6 } })).toBe(true);
    expect(versionedChange(base, { ...base, disclosure_text: ES })).toBe(true);
    expect(versionedChange(base, { ...base, policy: { ...DEFAULT_POLICY, prohibited: ['x'] } })).toBe(true);
  });
});
