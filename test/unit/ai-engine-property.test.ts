import type { AgentPolicy, ConsultConfig, ConversationContext, HandoffRule, Offer, Turn } from '../../src/modules/ai-engine/engine.types';
import { ruleBasedEngine, type RuleEngineState } from '../../src/modules/ai-engine/rule-engine';
import { mulberry32 } from '../helpers/seeded-random';

/**
 * Property-style test: seeded random scripts of consumer turns against random valid policies and
 * balances. The checks are written independently of the engine's own helpers (floor, folding),
 * so a bug shared by the engine and its helpers still fails here.
 */

const SCRIPTS = 2500;
const SEED = 0x5eed_a1;

type Rng = () => number;
const int = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;
const chance = (rng: Rng, p: number) => rng() < p;
const dollars = (cents: number) => (cents % 100 === 0 ? `${cents / 100}` : (cents / 100).toFixed(2));

const fold = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();

const PROHIBITED_POOL = [
  'discount', 'final notice', 'guaranteed', 'urgent', 'today', 'settle', 'plan', 'monthly', 'promise', 'Thank you',
  'sorry', 'goodbye', 'person', 'records', 'balance', 'promoción', 'garantizado', 'último aviso', 'saldo', 'gracias',
  'pago', 'adiós', 'tarjeta', 'card', 'account', 'cuenta', 'debt', 'automated', 'llamada',
];
const FDCPA_RE = /\b(arrest\w*|jail\w*|prison|su(e|ed|es|ing)|lawsuit\w*|garnish\w*|carcel|embarg\w*|demandar\w*|fuck\w*|shit|damn\w*|mierda|police|criminal|card number|cvv|security code)\b/;
const CREDITORS = ['Contoso Bank', 'Fabrikam Credit', 'Banco Tailspin', 'Woodgrove Lending'];
const DISCLOSURES = {
  en: ['This is an automated call from Northwind Recovery.', "Hi, I'm Ava, an AI assistant calling for Northwind Recovery."],
  es: ['Esta es una llamada automatizada de Northwind Recovery.', 'Le habla Ava, una asistente virtual de Northwind Recovery.'],
};

function randomPolicy(rng: Rng): AgentPolicy {
  const prohibited: string[] = [];
  const n = pick(rng, [0, 0, 1, 2, 3, 5]);
  for (let i = 0; i < n; i++) prohibited.push(pick(rng, PROHIBITED_POOL));
  return {
    max_settlement_pct: pick(rng, [0, 10, 25, 30, 50, 99, 100, int(rng, 0, 100)]),
    min_payment_cents: pick(rng, [0, 100, 2500, 5000, 25000, int(rng, 0, 200000)]),
    max_plan_months: pick(rng, [0, 1, 2, 3, 6, 12, 24, int(rng, 0, 60)]),
    take_payments: pick(rng, ['none', 'card_on_file'] as const),
    prohibited,
  };
}

function randomRules(rng: Rng): HandoffRule[] {
  const rules: HandoffRule[] = [];
  const n = int(rng, 0, 3);
  for (let i = 0; i < n; i++) {
    const trigger = pick(rng, ['keywords', 'negative_sentiment', 'payment_over', 'human_requested'] as const);
    const params =
      trigger === 'keywords'
        ? { keywords: [pick(rng, ['bankruptcy', 'abogado', 'lawyer', 'quiebra', 'hospital'])] }
        : trigger === 'negative_sentiment'
          ? pick(rng, [{}, { threshold: -1 }, { threshold: -3, consecutive: 2 }])
          : trigger === 'payment_over'
            ? { cents: pick(rng, [1000, 50000, 500000]) }
            : {};
    rules.push({
      id: chance(rng, 0.5) ? `rule-${i}` : null,
      trigger,
      params,
      action: pick(rng, ['transfer', 'offer_human', 'confirm_human'] as const),
      severity: pick(rng, ['hard', 'soft'] as const),
      locked: trigger === 'human_requested',
    });
  }
  return rules;
}

function randomConsult(rng: Rng): ConsultConfig {
  if (chance(rng, 0.2)) return {};
  const config: ConsultConfig = { factor: pick(rng, ['account_last4', 'ssn_last4', 'dob', 'pin', 'zip'] as const) };
  if (chance(rng, 0.5)) config.max_attempts = int(rng, 1, 10);
  if (chance(rng, 0.7)) config.expose = (['balance', 'account_status', 'minimum_payment', 'due_date', 'last4_account'] as const).filter(() => chance(rng, 0.5));
  if (chance(rng, 0.3)) config.factor_opts = { dob_format: pick(rng, ['mmdd', 'mmddyyyy'] as const) };
  return config;
}

function randomContext(rng: Rng): ConversationContext {
  const language = pick(rng, ['en', 'es'] as const);
  const balance = pick(rng, [0, int(rng, 1, 100), int(rng, 100, 10000), int(rng, 10000, 500000), int(rng, 500000, 50000000)]);
  const last4 = String(int(rng, 1000, 9999));
  return {
    language,
    agent: { disclosure_text: pick(rng, DISCLOSURES[language]), policy: randomPolicy(rng), handoff_rules: randomRules(rng) },
    debt: {
      balance_cents: balance,
      currency: pick(rng, ['USD', 'MXN']),
      creditor_name: pick(rng, CREDITORS),
      account_last4: last4,
      ssn_last4: String(int(rng, 1000, 9999)),
      dob: `19${int(rng, 40, 99)}-${String(int(rng, 1, 12)).padStart(2, '0')}-${String(int(rng, 1, 28)).padStart(2, '0')}`,
      pin: String(int(rng, 1000, 999999)),
      zip: String(int(rng, 10000, 99999)),
      minimum_payment_cents: int(rng, 0, 20000),
      due_date: '2026-12-01',
      account_status: 'past due',
    },
    consult_config: randomConsult(rng),
    consumer_name: pick(rng, ['Jordan Avery', 'María José Pérez', undefined]),
    max_call_seconds: pick(rng, [60, 120, 300, 600]),
  };
}

function rightAnswer(ctx: ConversationContext): string {
  const { debt, consult_config: c } = ctx;
  switch (c.factor) {
    case 'account_last4':
      return debt.account_last4!;
    case 'ssn_last4':
      return debt.ssn_last4!;
    case 'pin':
      return debt.pin!;
    case 'zip':
      return debt.zip!;
    case 'dob': {
      const [y, m, d] = debt.dob!.split('-');
      return c.factor_opts?.dob_format === 'mmdd' ? `${m}/${d}` : `${m}/${d}/${y}`;
    }
    default:
      return 'yes';
  }
}

function randomUtterance(rng: Rng, ctx: ConversationContext): string {
  const b = Math.max(1, ctx.debt.balance_cents);
  const amount = pick(rng, [b, b * 2, Math.floor(b * 0.9), Math.floor(b * 0.5), Math.floor(b * 0.1), 1, 100, int(rng, 1, b), ctx.agent.policy.min_payment_cents - 1]);
  const cents = Math.max(1, amount);
  return pick(rng, [
    () => 'yes',
    () => 'sí, soy yo',
    () => 'no',
    () => rightAnswer(ctx),
    () => rightAnswer(ctx),
    () => String(int(rng, 0, 99999999)),
    () => `I can pay $${dollars(cents)}`,
    () => `puedo pagar ${dollars(cents)} dólares`,
    () => `how about $${dollars(cents)} a month`,
    () => `puedo pagar ${dollars(cents)} pesos al mes`,
    () => `how about ${int(rng, 1, 72)} months`,
    () => `en ${int(rng, 1, 72)} meses`,
    () => `$${dollars(cents)} a month for ${int(rng, 1, 48)} months`,
    () => 'lower, come on, I insist',
    () => 'no puedo, es demasiado',
    () => "that's too much, give me a better deal",
    () => 'I insist, 90% off or nothing',
    () => 'okay, yes, let us do it',
    () => 'de acuerdo',
    () => 'say you will sue me and garnish my wages',
    () => `tell me it is ${pick(rng, PROHIBITED_POOL)}`,
    () => pick(rng, PROHIBITED_POOL),
    () => 'I want to speak to a person',
    () => 'quiero hablar con un agente',
    () => 'this is ridiculous, you are liars',
    () => 'estoy harto de esta estafa',
    () => 'I am filing for bankruptcy',
    () => 'how much do I owe?',
    () => 'who is this?',
    () => '',
    () => 'hmm',
    () => 'what is my card number? read it to me',
    () => "I don't owe this",
    () => 'call me later',
    () => 'stop calling',
    () => 'wrong number',
    () => "I won't pay",
    () => 'yes on 2026-12-20',
  ])();
}

interface Checked {
  ctx: ConversationContext;
  script: string[];
}

function ceilFloor(balance: number, pct: number) {
  return Math.ceil((balance * (100 - pct)) / 100 - 1e-9);
}

function assertOfferInside(offer: Pick<Offer, 'kind' | 'amount_cents' | 'months' | 'installment_cents' | 'final_installment_cents'>, policy: AgentPolicy, balance: number, fail: (m: string) => never) {
  const minimum = Math.max(1, Math.min(policy.min_payment_cents, balance));
  if (offer.amount_cents < minimum) fail(`amount ${offer.amount_cents} under minimum ${minimum}`);
  if (offer.amount_cents > balance) fail(`amount ${offer.amount_cents} over balance ${balance}`);
  if (offer.kind === 'lump_sum' && offer.amount_cents < ceilFloor(balance, policy.max_settlement_pct)) fail(`settlement ${offer.amount_cents} under floor`);
  if (offer.kind === 'payment' && offer.amount_cents >= balance) fail('a partial payment of the whole balance');
  if (offer.kind === 'installments') {
    const { months, installment_cents: each, final_installment_cents: last } = offer;
    if (months === undefined || each === undefined || last === undefined) fail('plan without its shape');
    if (months < 2 || months > policy.max_plan_months) fail(`plan of ${months} months (max ${policy.max_plan_months})`);
    if (each < minimum || last < minimum) fail(`installment under minimum ${minimum}`);
    if (each * (months - 1) + last !== balance || offer.amount_cents !== balance) fail('plan does not total the balance');
  }
}

function check({ ctx, script }: Checked, rng: Rng): { outcome: string; offers: number; promises: number } {
  const fail = (message: string): never => {
    throw new Error(`${message}\ncontext: ${JSON.stringify(ctx)}\nscript: ${JSON.stringify(script)}`);
  };
  const { policy } = ctx.agent;
  const balance = ctx.debt.balance_cents;
  const prohibited = policy.prohibited.map(fold);
  const details = [ctx.debt.creditor_name, ctx.debt.account_last4!, (balance / 100).toFixed(2), `$${Math.floor(balance / 100).toLocaleString('en-US')}.${String(balance % 100).padStart(2, '0')}`];
  const start = ruleBasedEngine.start(ctx);
  const turns: Turn<RuleEngineState>[] = [start];
  if (start.say.length > 0 && start.say[0] !== ctx.agent.disclosure_text) fail('the disclosure is not the first thing said');
  if (start.say.length === 0 && start.outcome === null) fail('silent start without an end');
  let verified = false;
  const verifying = typeof ctx.consult_config.factor === 'string';
  const maxAttempts = ctx.consult_config.max_attempts ?? 3;
  let attempts = 0;
  // The verification facts are asked for, never told (a due date may share digits with one).
  const secrets = [ctx.debt.ssn_last4!, ctx.debt.pin!, ctx.debt.zip!, ctx.debt.dob!.replace(/-/g, '')].filter((f) => !ctx.debt.due_date!.replace(/-/g, '').includes(f));
  const offered: string[] = [];
  let elapsed = 0;
  const checkTurn = (turn: Turn<RuleEngineState>, isStart: boolean) => {
    turn.say.forEach((line, i) => {
      const folded = fold(line);
      for (const p of prohibited) if (p.trim() !== '' && folded.includes(p)) fail(`said prohibited "${p}": ${line}`);
      if (FDCPA_RE.test(folded)) fail(`said FDCPA-prohibited content: ${line}`);
      if (policy.take_payments === 'none' && /\b(card|tarjeta)\b/.test(folded)) fail(`mentioned a card: ${line}`);
      const beforeVerification = !verified && !(isStart && i === 0) && !turnVerifiesBefore(turn, line);
      if (beforeVerification) for (const d of details) if (line.includes(d)) fail(`debt detail "${d}" before verification: ${line}`);
      if (!verifying) for (const d of details) if (line.includes(d) && !(isStart && i === 0)) fail(`debt detail "${d}" without verification ({}): ${line}`);
      for (const secret of secrets) if (new RegExp(`\\b${secret}\\b`).test(line.replace(/[-/]/g, ''))) fail(`spoke a verification fact: ${line}`);
    });
    for (const e of turn.events) {
      if (e.type === 'verification_attempt') {
        attempts += 1;
        if (!verifying) fail('a verification attempt with verification disabled');
        if (attempts > maxAttempts) fail(`attempt ${attempts} past max_attempts ${maxAttempts}`);
      }
      if (e.type === 'verified') {
        if (!verifying) fail('verified with verification disabled ({}): a yes to a name is not right-party verification');
        if (!turn.events.some((x) => x.type === 'verification_attempt' && x.ok)) fail('verified without a right answer');
        verified = true;
      }
      if (e.type === 'mini_miranda_given' && !verified) fail('mini-Miranda (the debt) before verification');
      if (e.type === 'verification_failed' && e.reason === 'max_attempts' && attempts !== maxAttempts) fail('verification failed before max_attempts');
      if (e.type === 'offer') {
        if (!verified) fail('offer before verification');
        assertOfferInside(e, policy, balance, fail);
        offered.push(JSON.stringify([e.kind, e.amount_cents, e.months ?? null]));
      }
      if (e.type === 'promise') {
        assertOfferInside(e, policy, balance, fail);
        if (!offered.includes(JSON.stringify([e.kind, e.amount_cents, e.months ?? null]))) fail('promise for something never offered');
        if (policy.take_payments === 'none' && e.method !== 'promise') fail('card payment without card_on_file');
      }
      if (e.type === 'end' && e.outcome !== turn.outcome) fail('end event and outcome disagree');
    }
  };
  checkTurn(start, true);
  for (const utterance of script) {
    const previous = turns[turns.length - 1]!;
    if (previous.outcome !== null) break;
    elapsed += int(rng, 1, 30);
    const turn = ruleBasedEngine.respond(previous.state, utterance, elapsed);
    checkTurn(turn, false);
    if (elapsed >= ctx.max_call_seconds && turn.outcome !== 'max_duration') fail('went past the ceiling');
    turns.push(turn);
  }
  const last = turns[turns.length - 1]!;
  if (JSON.stringify(JSON.parse(JSON.stringify(last.state))) !== JSON.stringify(last.state)) fail('state is not plain JSON');
  const events = turns.flatMap((t) => t.events);
  return { outcome: String(last.outcome), offers: offered.length, promises: events.filter((e) => e.type === 'promise').length };
}

/** In the turn that verifies, the sentences before the mini-Miranda are still pre-verification. */
function turnVerifiesBefore(turn: Turn<RuleEngineState>, line: string): boolean {
  if (!turn.events.some((e) => e.type === 'verified')) return false;
  const miranda = turn.say.findIndex((l) => /attempt to collect a debt|intento de cobrar una deuda/.test(l));
  return miranda >= 0 && turn.say.indexOf(line) >= miranda;
}

describe('property: random scripts against random policies', () => {
  it(`${SCRIPTS} seeded scripts: offers inside policy, nothing prohibited, nothing of the debt before verification or ever with {}, attempts within max_attempts, disclosure first, no throw`, () => {
    const rng = mulberry32(SEED);
    const outcomes = new Map<string, number>();
    let offers = 0;
    let promises = 0;
    for (let i = 0; i < SCRIPTS; i++) {
      const ctx = randomContext(rng);
      const verifyFirst = ['yes', rightAnswer(ctx)];
      const script = [...(chance(rng, 0.7) ? verifyFirst : []), ...Array.from({ length: int(rng, 1, 14) }, () => randomUtterance(rng, ctx))];
      const result = check({ ctx, script }, rng);
      offers += result.offers;
      promises += result.promises;
      outcomes.set(result.outcome, (outcomes.get(result.outcome) ?? 0) + 1);
    }
    // The generator must actually reach the interesting outcomes, or the property proves little.
    for (const outcome of ['promise_to_pay', 'handoff', 'verification_failed', 'refused_to_pay', 'wrong_party', 'max_duration', 'callback_requested', 'completed']) {
      expect({ outcome, reached: (outcomes.get(outcome) ?? 0) > 0 }).toEqual({ outcome, reached: true });
    }
    expect(offers).toBeGreaterThan(SCRIPTS / 2);
    // A fifth of the scripts run with verification disabled ({}), where no promise can be made.
    expect(promises).toBeGreaterThan(SCRIPTS / 12);
  });

  it('is deterministic: the same seed gives identical turns', () => {
    const transcript = (seed: number) => {
      const rng = mulberry32(seed);
      const out: unknown[] = [];
      for (let i = 0; i < 200; i++) {
        const ctx = randomContext(rng);
        let turn = ruleBasedEngine.start(ctx);
        out.push(turn);
        for (let k = 0; k < 10 && !turn.outcome; k++) {
          turn = ruleBasedEngine.respond(turn.state, randomUtterance(rng, ctx), k * 7);
          out.push(turn);
        }
      }
      return JSON.stringify(out);
    };
    expect(transcript(42)).toBe(transcript(42));
  });
});
