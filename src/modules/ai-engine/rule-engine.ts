import { disclosureProblem } from '../disclosure/disclosure.rules';
import type {
  ConversationContext,
  ConversationEngine,
  DebtFacts,
  EndReason,
  EngineEvent,
  EngineLanguage,
  HandoffRef,
  Offer,
  Outcome,
  Turn,
} from './engine.types';
import { guardSay, violation, type GuardItem, type GuardOptions } from './guard';
import { compileRules, firingOnPromise, firingRule, MAX_CONSECUTIVE, refOf, type CompiledRule } from './handoff';
import { readUtterance, type Reading } from './intents';
import { boundsOf, escalation, evaluateProposal, insidePolicy, type Bounds, type Proposal } from './negotiation';
import { formatMoney, MINI_MIRANDA, SCRIPT, type Lines } from './script';
import { answerMatches, hasAnswer, verificationPlan, type VerificationPlan } from './verification';

/**
 * The deterministic rule-based conversation engine (docs/ai-engine.md). A small state machine:
 *
 *   identity ──yes──▶ verify ──match──▶ negotiate ──yes──▶ promise (end)
 *      │ no            │ max_attempts      │ no / lower: next offer of the escalation
 *      ▼               ▼                   ▼
 *   wrong_party   verification_failed   refused_to_pay after the final offer is declined twice
 *
 * and, from any phase, a pending `handoff` question when a rule offers or confirms a person.
 * Each consumer turn is read in a fixed precedence: the ceiling, opt-out, wrong party, an answer to
 * a pending handoff question, the handoff rules, a dispute, a callback request, then the phase.
 */

/** Seconds before the ceiling when the agent stops asking and wraps up. */
export const WRAP_UP_SECONDS = 15;
/** Unrecognized turns in a row the agent reprompts before it ends the call. */
export const MAX_REPROMPTS = 2;
/** Declines of the final offer before the agent gives up. */
const MAX_FINAL_DECLINES = 2;
/** Explicit refusals to pay before the agent gives up. */
const MAX_REFUSALS = 2;
/** A spoken turn is far shorter; the cap bounds the classifier's work on garbage input. */
export const MAX_UTTERANCE_CHARS = 2000;

/** `identified`: verification is disabled ({}) and the consumer said yes to their name: a person or a callback, never the debt. */
export type Phase = 'identity' | 'verify' | 'identified' | 'negotiate' | 'handoff' | 'ended';

/** The context as kept in state: the verification facts are dropped (only the expected answer stays). */
export type StoredContext = Omit<ConversationContext, 'debt'> & { debt: Omit<DebtFacts, 'account_number' | 'ssn_last4' | 'dob' | 'pin' | 'zip'> };

export interface PendingHandoff extends HandoffRef {
  /** Null for the dispute offer, which is not a rule. */
  key: string | null;
  /** What a "no" goes back to: the phase, or the promise the consumer was accepting. */
  resume: 'phase' | 'promise';
  resume_phase: Phase;
  promise_date: string | null;
}

export interface RuleEngineState {
  engine: 'rule-based';
  version: 1;
  context: StoredContext;
  rules: CompiledRule[];
  phase: Phase;
  verified: boolean;
  /** `expected` is erased once verification ends, either way. */
  verification: (VerificationPlan & { attempts: number }) | null;
  /** The offer awaiting an answer. */
  offer: Offer | null;
  /** Index in the escalation of the last escalation offer made. */
  step: number;
  final_declines: number;
  refusals: number;
  reprompts: number;
  handoff: PendingHandoff | null;
  declined_rules: string[];
  /** Sentiment scores of the consumer's turns, the latest last. */
  sentiment: number[];
  turns: number;
  outcome: Outcome | null;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function storedContext(context: ConversationContext): StoredContext {
  const { account_number: _account, ssn_last4: _ssn, dob: _dob, pin: _pin, zip: _zip, ...debt } = context.debt;
  return clone({ ...context, language: context.language === 'es' ? 'es' : 'en', debt });
}

function guardOptions(context: StoredContext): GuardOptions {
  const { debt } = context;
  const amounts = [debt.balance_cents, debt.minimum_payment_cents].filter((c): c is number => Number.isSafeInteger(c) && c! > 0);
  const withheld = [
    debt.creditor_name,
    debt.account_last4,
    ...amounts.flatMap((cents) => [formatMoney(cents, debt.currency), `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`]),
  ].filter((w): w is string => typeof w === 'string' && w.trim() !== '');
  return {
    language: context.language,
    prohibited: Array.isArray(context.agent.policy.prohibited) ? context.agent.policy.prohibited : [],
    takePayments: context.agent.policy.take_payments,
    withheld,
  };
}

/**
 * Why a context cannot start a conversation, or null. The disclosure must identify the voice as
 * automated, and neither it nor the mini-Miranda may be something the guard would block: both are
 * mandatory and said verbatim, so such a context is refused instead of spoken around.
 */
export function contextProblem(context: ConversationContext): string | null {
  const problem = disclosureProblem(context.agent.disclosure_text ?? '');
  if (problem) return problem;
  const options = guardOptions(storedContext(context));
  if (violation(context.agent.disclosure_text, options) !== null) return 'the disclosure text contains a prohibited phrase';
  if (violation(MINI_MIRANDA[options.language], options) !== null) return 'the prohibited phrases block the mandatory debt-collection notice';
  return null;
}

class TurnBuilder {
  private readonly items: GuardItem[] = [];
  private readonly events: EngineEvent[] = [];

  constructor(
    readonly s: RuleEngineState,
    readonly closing: boolean,
  ) {}

  get lines(): Lines {
    return SCRIPT[this.s.context.language];
  }

  get language(): EngineLanguage {
    return this.s.context.language;
  }

  money = (cents: number): string => formatMoney(cents, this.s.context.debt.currency);

  say(...texts: string[]): void {
    for (const text of texts) this.items.push({ text, withhold: !this.s.verified });
  }

  /** The disclosure: before verification, yet allowed to name the caller. */
  sayDisclosure(text: string): void {
    this.items.push({ text, withhold: false });
  }

  event(e: EngineEvent): void {
    this.events.push(e);
  }

  end(outcome: Outcome, reason: EndReason): void {
    const s = this.s;
    s.phase = 'ended';
    s.outcome = outcome;
    s.offer = null;
    s.handoff = null;
    if (s.verification) s.verification.expected = null;
    this.events.push({ type: 'end', outcome, reason });
  }

  /** Asks a question, or, inside the wrap-up window, closes the call instead. */
  ask(texts: string[], onAsked: () => void): void {
    if (this.closing) {
      this.event({ type: 'wrap_up' });
      this.say(this.lines.wrapUp);
      this.end('max_duration', 'wrap_up');
      return;
    }
    this.say(...texts);
    onAsked();
  }

  finish(): Turn<RuleEngineState> {
    const guarded = guardSay(this.items, guardOptions(this.s.context));
    return { state: this.s, say: guarded.say, events: [...this.events, ...guarded.events], outcome: this.s.outcome };
  }
}

function boundsFor(s: RuleEngineState): Bounds {
  return boundsOf(s.context.agent.policy, s.context.debt.balance_cents);
}

function currentQuestion(t: TurnBuilder): string[] {
  const { s, lines } = t;
  switch (s.phase) {
    case 'identity':
      return [lines.identity(s.context.consumer_name)];
    case 'verify': {
      const v = s.verification!;
      return [lines.verifyPrompt(v.factor, v.length, v.dob_format)];
    }
    case 'identified':
      return [lines.personOrCallback];
    case 'negotiate': {
      const offer = s.offer!;
      return [lines.offer(offer, t.money), lines.offerQuestion(s.context.agent.policy.take_payments, offer)];
    }
    case 'handoff':
      return [s.handoff!.action === 'confirm_human' ? lines.handoffConfirm : lines.handoffOffer];
    case 'ended':
      return [];
  }
}

function reprompt(t: TurnBuilder, previous: number): void {
  const count = previous + 1;
  if (count > MAX_REPROMPTS) {
    t.say(t.lines.noResponse);
    t.end('completed', 'no_response');
    return;
  }
  t.ask([t.lines.reprompt, ...currentQuestion(t)], () => {
    t.s.reprompts = count;
    t.event({ type: 'reprompt', count });
  });
}

function makeOffer(t: TurnBuilder, offer: Offer, preface: string[] = []): void {
  if (!insidePolicy(offer, boundsFor(t.s))) {
    t.say(t.lines.goodbye);
    t.end('completed', 'offer_outside_policy');
    return;
  }
  const { lines, s } = t;
  t.ask([...preface, lines.offer(offer, t.money), lines.offerQuestion(s.context.agent.policy.take_payments, offer)], () => {
    s.phase = 'negotiate';
    s.offer = offer;
    t.event({ type: 'offer', ...offer });
  });
}

function escalate(t: TurnBuilder, preface: string[] = []): void {
  const s = t.s;
  const offers = escalation(boundsFor(s));
  const next = s.step + 1;
  if (next < offers.length) {
    s.step = next;
    makeOffer(t, offers[next]!, preface);
    return;
  }
  s.final_declines += 1;
  if (s.final_declines >= MAX_FINAL_DECLINES || offers.length === 0) {
    t.say(t.lines.noDeal);
    t.end('refused_to_pay', 'refused');
    return;
  }
  makeOffer(t, offers[offers.length - 1]!, [...preface, t.lines.bestOffer]);
}

function afterVerified(t: TurnBuilder): void {
  const { s, lines } = t;
  s.verified = true;
  if (s.verification) s.verification.expected = null;
  t.event({ type: 'verified' });
  t.say(lines.verified, MINI_MIRANDA[t.language]);
  t.event({ type: 'mini_miranda_given' });
  const { debt } = s.context;
  t.say(lines.creditor(debt.creditor_name));
  for (const fact of s.context.consult_config.expose ?? []) {
    if (fact === 'balance') t.say(lines.balance(t.money(debt.balance_cents)));
    if (fact === 'account_status' && debt.account_status) t.say(lines.status(debt.account_status));
    if (fact === 'minimum_payment' && Number.isSafeInteger(debt.minimum_payment_cents)) t.say(lines.minimumPayment(t.money(debt.minimum_payment_cents!)));
    if (fact === 'due_date' && debt.due_date) t.say(lines.dueDate(debt.due_date));
    if (fact === 'last4_account' && debt.account_last4) t.say(lines.last4(debt.account_last4));
  }
  const offers = escalation(boundsFor(s));
  if (offers.length === 0) {
    t.say(lines.nothingDue);
    t.end('completed', 'nothing_due');
    return;
  }
  s.step = 0;
  makeOffer(t, offers[0]!);
}

function handOff(t: TurnBuilder, ref: HandoffRef): void {
  t.event({ type: 'handoff', ...ref });
  t.say(t.lines.transfer);
  t.end('handoff', 'handoff');
}

function fireRule(t: TurnBuilder, rule: CompiledRule, resume: PendingHandoff['resume'], promiseDate: string | null): void {
  const ref = refOf(rule);
  if (rule.action === 'transfer' || (t.closing && rule.trigger === 'human_requested')) {
    handOff(t, ref);
    return;
  }
  askHandoff(t, { ...ref, key: rule.key, resume, resume_phase: t.s.phase, promise_date: promiseDate });
}

function askHandoff(t: TurnBuilder, pending: PendingHandoff): void {
  const lines = t.lines;
  t.ask([pending.action === 'confirm_human' ? lines.handoffConfirm : lines.handoffOffer], () => {
    t.s.handoff = pending;
    t.s.phase = 'handoff';
    const { rule_id, trigger, action, severity } = pending;
    t.event({ type: 'handoff_offered', rule_id, trigger, action, severity });
  });
}

function recordPromise(t: TurnBuilder, offer: Offer, date: string | null): void {
  const take = t.s.context.agent.policy.take_payments;
  t.event({
    type: 'promise',
    kind: offer.kind,
    amount_cents: offer.amount_cents,
    ...(offer.months === undefined ? {} : { months: offer.months, installment_cents: offer.installment_cents, final_installment_cents: offer.final_installment_cents }),
    ...(date === null ? {} : { date }),
    method: take === 'card_on_file' ? 'card_on_file' : 'promise',
  });
  t.say(t.lines.promised(offer, take, t.money), t.lines.goodbye);
  t.end('promise_to_pay', 'promise');
}

function accept(t: TurnBuilder, offer: Offer, date: string | null): void {
  const rule = firingOnPromise(t.s.rules, offer.amount_cents, t.s.declined_rules);
  if (rule) {
    fireRule(t, rule, 'promise', date);
    return;
  }
  recordPromise(t, offer, date);
}

function answerHandoff(t: TurnBuilder, r: Reading, previousReprompts: number): void {
  const s = t.s;
  const pending = s.handoff!;
  const { rule_id, trigger, action, severity } = pending;
  const ref: HandoffRef = { rule_id, trigger, action, severity };
  if ((r.yes && !r.no) || r.humanRequested) {
    handOff(t, ref);
    return;
  }
  if (!r.no && !r.declineOffer) {
    reprompt(t, previousReprompts);
    return;
  }
  t.event({ type: 'handoff_declined', ...ref });
  if (pending.key !== null && !s.declined_rules.includes(pending.key)) s.declined_rules.push(pending.key);
  s.handoff = null;
  s.phase = pending.resume_phase;
  if (trigger === 'dispute' || severity === 'hard') {
    t.say(t.lines.goodbye);
    t.end('completed', trigger === 'dispute' ? 'disputed' : 'handoff_declined');
    return;
  }
  if (pending.resume === 'promise' && s.offer) {
    recordPromise(t, s.offer, pending.promise_date);
    return;
  }
  t.ask([t.lines.continueAfterDecline, ...currentQuestion(t)], () => undefined);
}

function proposalOf(r: Reading): Proposal | null {
  if (r.months !== null) return { kind: 'months', months: r.months };
  const amount = r.amounts[0];
  if (!amount) return null;
  return amount.monthly ? { kind: 'monthly', cents: amount.cents } : { kind: 'amount', cents: amount.cents };
}

const sameOffer = (a: Offer, b: Offer): boolean => JSON.stringify(a) === JSON.stringify(b);

function negotiate(t: TurnBuilder, r: Reading, previousReprompts: number): void {
  const s = t.s;
  const pending = s.offer!;
  const proposal = proposalOf(r);
  if (proposal) {
    const evaluation = evaluateProposal(boundsFor(s), proposal);
    if ('offer' in evaluation) {
      if (r.yes && !r.no && sameOffer(evaluation.offer, pending)) accept(t, pending, r.date);
      else makeOffer(t, evaluation.offer);
      return;
    }
    t.event({ type: 'offer_declined', reason: evaluation.declined });
    const why = evaluation.declined === 'below_minimum' ? t.lines.belowMinimum : t.lines.tooManyMonths;
    if (evaluation.counter) makeOffer(t, evaluation.counter, [why]);
    else escalate(t, [why]);
    return;
  }
  if (r.refusal) {
    t.event({ type: 'refusal' });
    s.refusals += 1;
    if (s.refusals >= MAX_REFUSALS) {
      t.say(t.lines.noDeal);
      t.end('refused_to_pay', 'refused');
      return;
    }
    escalate(t, [t.lines.refusalAck]);
    return;
  }
  if (r.askBalance) {
    const exposed = (s.context.consult_config.expose ?? []).includes('balance');
    const answer = exposed ? t.lines.balance(t.money(s.context.debt.balance_cents)) : t.lines.notExposed;
    t.ask([answer, ...currentQuestion(t)], () => undefined);
    return;
  }
  if (r.yes && !r.no && !r.declineOffer) {
    accept(t, pending, r.date);
    return;
  }
  if (r.no || r.declineOffer) {
    escalate(t);
    return;
  }
  reprompt(t, previousReprompts);
}

function verify(t: TurnBuilder, r: Reading, utterance: string, previousReprompts: number): void {
  const s = t.s;
  const v = s.verification!;
  if (r.askPurpose && !hasAnswer(v, utterance)) {
    t.ask([t.lines.purpose, ...currentQuestion(t)], () => undefined);
    return;
  }
  if (!hasAnswer(v, utterance)) {
    reprompt(t, previousReprompts);
    return;
  }
  v.attempts += 1;
  const ok = answerMatches(v, utterance);
  t.event({ type: 'verification_attempt', ok, attempt: v.attempts });
  if (ok) {
    afterVerified(t);
    return;
  }
  if (v.attempts >= v.max_attempts) {
    t.event({ type: 'verification_failed', reason: 'max_attempts' });
    t.say(t.lines.verifyFailed);
    t.end('verification_failed', 'verification_failed');
    return;
  }
  t.ask([t.lines.verifyRetry, ...currentQuestion(t)], () => undefined);
}

function confirmIdentity(t: TurnBuilder, r: Reading, previousReprompts: number): void {
  const s = t.s;
  if (r.askPurpose) {
    t.ask([t.lines.purpose, ...currentQuestion(t)], () => undefined);
    return;
  }
  if (r.no && !r.yes) {
    t.say(t.lines.wrongParty);
    t.end('wrong_party', 'wrong_party');
    return;
  }
  if (!r.yes) {
    reprompt(t, previousReprompts);
    return;
  }
  t.event({ type: 'identity_confirmed' });
  const v = s.verification;
  if (!v) {
    // A yes to a name is no right-party verification (FDCPA 1692c(b)): the debt, the creditor and
    // any offer stay unsaid; the consumer may take a person or a callback.
    s.phase = 'identified';
    t.ask([t.lines.identifiedOnly, ...currentQuestion(t)], () => undefined);
    return;
  }
  if (v.expected === null) {
    t.event({ type: 'verification_failed', reason: 'unverifiable' });
    t.say(t.lines.verifyFailed);
    t.end('verification_failed', 'unverifiable');
    return;
  }
  s.phase = 'verify';
  t.ask(currentQuestion(t), () => undefined);
}

/** The answer to "a person now, or a callback?" of an identity-only call (a callback request is read before the phase). */
function personOrCallback(t: TurnBuilder, r: Reading, previousReprompts: number): void {
  if (r.askPurpose) {
    t.ask([t.lines.purpose, ...currentQuestion(t)], () => undefined);
    return;
  }
  if (r.yes && !r.no) {
    handOff(t, { rule_id: null, trigger: 'human_requested', action: 'offer_human', severity: 'soft' });
    return;
  }
  if (r.no || r.declineOffer) {
    t.say(t.lines.goodbye);
    t.end('completed', 'identity_only');
    return;
  }
  reprompt(t, previousReprompts);
}

function handle(t: TurnBuilder, r: Reading, utterance: string, previousReprompts: number): void {
  const s = t.s;
  if (r.optOut) {
    t.event({ type: 'refusal' });
    t.event({ type: 'opt_out' });
    t.say(t.lines.optOut);
    t.end('refused_to_pay', 'opt_out');
    return;
  }
  if (r.wrongParty) {
    t.say(t.lines.wrongParty);
    t.end('wrong_party', 'wrong_party');
    return;
  }
  if (s.phase === 'handoff') {
    answerHandoff(t, r, previousReprompts);
    return;
  }
  const rule = firingRule(s.rules, { reading: r, sentimentHistory: s.sentiment }, s.declined_rules);
  if (rule) {
    fireRule(t, rule, 'phase', null);
    return;
  }
  if (r.dispute) {
    t.event({ type: 'dispute' });
    t.say(t.lines.disputeNoted);
    askHandoff(t, { rule_id: null, trigger: 'dispute', action: 'offer_human', severity: 'hard', key: null, resume: 'phase', resume_phase: s.phase, promise_date: null });
    return;
  }
  if (r.callback) {
    t.say(t.lines.callback);
    t.end('callback_requested', 'callback');
    return;
  }
  switch (s.phase) {
    case 'identity':
      confirmIdentity(t, r, previousReprompts);
      return;
    case 'verify':
      verify(t, r, utterance, previousReprompts);
      return;
    case 'identified':
      personOrCallback(t, r, previousReprompts);
      return;
    case 'negotiate':
      negotiate(t, r, previousReprompts);
      return;
    case 'ended':
      return;
  }
}

function ended(state: RuleEngineState, reason: EndReason): Turn<RuleEngineState> {
  return { state, say: [], events: [{ type: 'end', outcome: 'completed', reason }], outcome: 'completed' };
}

export class RuleBasedEngine implements ConversationEngine<RuleEngineState> {
  start(context: ConversationContext): Turn<RuleEngineState> {
    const plan = verificationPlan(context.consult_config ?? {}, context.debt);
    const state: RuleEngineState = {
      engine: 'rule-based',
      version: 1,
      context: storedContext(context),
      rules: compileRules(context.agent.handoff_rules),
      phase: 'identity',
      verified: false,
      verification: plan ? { ...plan, attempts: 0 } : null,
      offer: null,
      step: -1,
      final_declines: 0,
      refusals: 0,
      reprompts: 0,
      handoff: null,
      declined_rules: [],
      sentiment: [],
      turns: 0,
      outcome: null,
    };
    if (contextProblem(context) !== null) {
      state.phase = 'ended';
      state.outcome = 'completed';
      if (state.verification) state.verification.expected = null;
      return ended(state, 'invalid_context');
    }
    const t = new TurnBuilder(state, false);
    t.sayDisclosure(context.agent.disclosure_text);
    t.event({ type: 'disclosure_given' });
    t.say(...currentQuestion(t));
    return t.finish();
  }

  respond(previous: RuleEngineState, consumerUtterance: string, elapsedSeconds: number): Turn<RuleEngineState> {
    const s = clone(previous);
    if (s.outcome !== null) return { state: s, say: [], events: [], outcome: s.outcome };
    const utterance = typeof consumerUtterance === 'string' ? consumerUtterance.slice(0, MAX_UTTERANCE_CHARS) : '';
    const r = readUtterance(utterance);
    s.turns += 1;
    s.sentiment = [...s.sentiment, r.sentiment].slice(-MAX_CONSECUTIVE);
    const previousReprompts = s.reprompts;
    s.reprompts = 0;
    const max = s.context.max_call_seconds;
    const reachedCeiling = !(elapsedSeconds < max);
    const t = new TurnBuilder(s, !reachedCeiling && elapsedSeconds >= max - WRAP_UP_SECONDS);
    if (reachedCeiling) {
      if (r.optOut) t.event({ type: 'opt_out' });
      t.event({ type: 'ceiling_reached' });
      t.say(t.lines.ceiling);
      t.end('max_duration', 'ceiling');
      return t.finish();
    }
    handle(t, r, utterance, previousReprompts);
    return t.finish();
  }
}

export const ruleBasedEngine = new RuleBasedEngine();
