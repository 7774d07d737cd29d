import {
  HANDOFF_ACTIONS,
  HANDOFF_SEVERITIES,
  HANDOFF_TRIGGERS,
  type HandoffAction,
  type HandoffRef,
  type HandoffRule,
  type HandoffSeverity,
  type HandoffTrigger,
} from './engine.types';
import type { Reading } from './intents';
import { hasAnyPhrase, phrases } from './text';

/**
 * Handoff rule evaluation. Rules are compiled once at start into plain JSON (they live in the
 * conversation state), ordered: human_requested first, then hard before soft, then array order.
 * The first rule that matches a turn fires; one handoff per turn.
 *
 * - keywords: params.keywords, words or phrases, whole-word, case- and accent-insensitive.
 * - negative_sentiment: the lexicon score of the utterance ≤ params.threshold (default −2) on
 *   params.consecutive consecutive turns (default 1).
 * - payment_over: the consumer names an amount, or accepts an offer whose total is, more than
 *   params.cents.
 * - human_requested: "speak to a person", "hablar con un agente", "operator", ... The rule is
 *   always present: an agent without one gets the locked default (transfer, hard).
 *
 * A malformed rule (keywords not a list, cents not a number, unknown trigger) never fires; an
 * unknown action is a transfer and an unknown severity hard, the cautious reading of each.
 */

export const DEFAULT_SENTIMENT_THRESHOLD = -2;
/** The longest sentiment streak a rule may ask for (and the history the state keeps). */
export const MAX_CONSECUTIVE = 20;

export const DEFAULT_HUMAN_RULE: HandoffRule = {
  id: null,
  trigger: 'human_requested',
  params: {},
  action: 'transfer',
  severity: 'hard',
  locked: true,
};

export interface CompiledRule extends HandoffRef {
  trigger: HandoffTrigger;
  /** Stable within a conversation: the rule id, else its trigger and position. */
  key: string;
  keywords: string[][];
  threshold: number;
  consecutive: number;
  cents: number | null;
}

const oneOf = <T extends string>(list: readonly T[], value: unknown, fallback: T): T =>
  (list as readonly unknown[]).includes(value) ? (value as T) : fallback;

const finite = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

function compile(rule: HandoffRule, index: number): CompiledRule | null {
  if (!(HANDOFF_TRIGGERS as readonly unknown[]).includes(rule.trigger)) return null;
  const params = rule.params !== null && typeof rule.params === 'object' ? rule.params : {};
  const keywords = Array.isArray(params.keywords) ? phrases(params.keywords.filter((k): k is string => typeof k === 'string')) : [];
  const consecutive = finite(params.consecutive);
  const cents = finite(params.cents);
  const action: HandoffAction = oneOf(HANDOFF_ACTIONS, rule.action, 'transfer');
  const severity: HandoffSeverity = oneOf(HANDOFF_SEVERITIES, rule.severity, 'hard');
  return {
    key: typeof rule.id === 'string' && rule.id !== '' ? rule.id : `${rule.trigger}#${index}`,
    rule_id: typeof rule.id === 'string' ? rule.id : null,
    trigger: rule.trigger,
    action,
    severity,
    keywords,
    threshold: finite(params.threshold) ?? DEFAULT_SENTIMENT_THRESHOLD,
    consecutive: consecutive === null ? 1 : Math.min(MAX_CONSECUTIVE, Math.max(1, Math.floor(consecutive))),
    cents: cents !== null && cents >= 0 ? cents : null,
  };
}

const rank = (rule: CompiledRule): number => (rule.trigger === 'human_requested' ? 0 : rule.severity === 'hard' ? 1 : 2);

export function compileRules(rules: readonly HandoffRule[]): CompiledRule[] {
  const list: (HandoffRule | null)[] = Array.from<HandoffRule | null>(rules ?? []);
  const withHuman = list.some((r) => r?.trigger === 'human_requested') ? list : [...list, DEFAULT_HUMAN_RULE];
  const compiled = withHuman.map((r, i) => (r ? compile(r, i) : null)).filter((r): r is CompiledRule => r !== null);
  return compiled.map((rule, i) => ({ rule, i })).sort((a, b) => rank(a.rule) - rank(b.rule) || a.i - b.i).map(({ rule }) => rule);
}

export interface TurnSignals {
  reading: Reading;
  /** Sentiment scores of the consumer's turns, oldest first, this turn last. */
  sentimentHistory: readonly number[];
}

function matches(rule: CompiledRule, signals: TurnSignals): boolean {
  const { reading } = signals;
  switch (rule.trigger) {
    case 'human_requested':
      return reading.humanRequested;
    case 'keywords':
      return hasAnyPhrase(reading.tokens, rule.keywords);
    case 'negative_sentiment': {
      const recent = signals.sentimentHistory.slice(-rule.consecutive);
      return recent.length === rule.consecutive && recent.every((score) => score <= rule.threshold);
    }
    case 'payment_over':
      return rule.cents !== null && reading.amounts.some((a) => a.cents > rule.cents!);
  }
}

/**
 * The rule this turn fires, if any. A rule the consumer already declined stays quiet for the rest
 * of the call, except human_requested: asking again is a new request.
 */
export function firingRule(rules: readonly CompiledRule[], signals: TurnSignals, declined: readonly string[]): CompiledRule | null {
  return rules.find((rule) => (rule.trigger === 'human_requested' || !declined.includes(rule.key)) && matches(rule, signals)) ?? null;
}

/** The payment_over rule a promise of `cents` fires, if any. */
export function firingOnPromise(rules: readonly CompiledRule[], cents: number, declined: readonly string[]): CompiledRule | null {
  return rules.find((r) => r.trigger === 'payment_over' && r.cents !== null && cents > r.cents && !declined.includes(r.key)) ?? null;
}

export function refOf(rule: CompiledRule): HandoffRef {
  return { rule_id: rule.rule_id, trigger: rule.trigger, action: rule.action, severity: rule.severity };
}
