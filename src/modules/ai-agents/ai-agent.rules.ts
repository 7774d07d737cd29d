import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../../lib/canonical-json';
import { conflict, unprocessable } from '../../lib/errors';
import { disclosureProblem } from '../disclosure/disclosure.rules';
import { isAiAgentTransition, type AiAgentStatus } from '../../../workflows/ai-agent.workflow';

export { AI_AGENT_TRANSITIONS, isAiAgentTransition, type AiAgentStatus } from '../../../workflows/ai-agent.workflow';

export const AI_AGENT_STATUSES = ['draft', 'live', 'paused', 'retired'] as const;
export const HANDOFF_TRIGGERS = ['keywords', 'negative_sentiment', 'payment_over', 'human_requested'] as const;
export const HANDOFF_ACTIONS = ['transfer', 'offer_human', 'confirm_human'] as const;
export const HANDOFF_SEVERITIES = ['hard', 'soft'] as const;
export const TAKE_PAYMENTS = ['none', 'card_on_file'] as const;

export type HandoffTrigger = (typeof HANDOFF_TRIGGERS)[number];
export type HandoffAction = (typeof HANDOFF_ACTIONS)[number];
export type HandoffSeverity = (typeof HANDOFF_SEVERITIES)[number];
export type TakePayments = (typeof TAKE_PAYMENTS)[number];

export const NAME_MAX_CHARS = 200;
export const DEFAULT_NAME_PREFIX = 'AI agent';
export const VOICE_ID_MAX_CHARS = 100;
export const DISCLOSURE_MAX_BYTES = 10_000;
export const PROHIBITED_MAX_ITEMS = 100;
export const PROHIBITED_MAX_CHARS = 200;
export const MAX_PLAN_MONTHS = 60;
export const HANDOFF_RULES_MAX = 50;
export const KEYWORDS_MAX_ITEMS = 100;
export const KEYWORD_MAX_CHARS = 100;
export const SENTIMENT_CONSECUTIVE_MAX = 10;

export interface Voice {
  language: string;
  voice_id: string;
  pace: number;
}

export interface Policy {
  max_settlement_pct: number;
  min_payment_cents: number;
  max_plan_months: number;
  take_payments: TakePayments;
  prohibited: string[];
}

export interface HandoffRule {
  id: string;
  trigger: HandoffTrigger;
  params: Record<string, unknown>;
  action: HandoffAction;
  severity: HandoffSeverity;
  locked: boolean;
}

/** A rule as a client sends it: the id is optional and `locked` is the server's to set. */
export interface HandoffRuleInput {
  id?: string | null;
  trigger: HandoffTrigger;
  params?: Record<string, unknown>;
  action: HandoffAction;
  severity: HandoffSeverity;
  locked?: boolean;
}

/**
 * A voice absent from the create request: US English at a middle pace on the engine's default
 * voice. Every field a client leaves out takes its value from here.
 */
export const DEFAULT_VOICE: Voice = { language: 'en-US', voice_id: 'default', pace: 0.5 };

/**
 * The conservative policy an agent gets when the client says nothing: no settlement discount, no
 * payment below $25, plans of at most 6 months, no payment taking, nothing extra prohibited. The
 * AI can only offer less than a human would until the tenant widens it on purpose.
 */
export const DEFAULT_POLICY: Policy = {
  max_settlement_pct: 0,
  min_payment_cents: 2500,
  max_plan_months: 6,
  take_payments: 'none',
  prohibited: [],
};

/** The hand-off every agent has: a consumer who asks for a person is transferred, always. */
export const HUMAN_REQUESTED_RULE = { trigger: 'human_requested', params: {}, action: 'transfer', severity: 'hard' } as const;

/** Defaults of a negative_sentiment rule's params: two consecutive turns at or below -0.5. */
export const DEFAULT_SENTIMENT_PARAMS = { threshold: -0.5, consecutive: 2 } as const;

export function checkedName(raw: string): string {
  const name = raw.trim();
  if (!name) throw unprocessable('name must not be blank');
  if ([...name].length > NAME_MAX_CHARS) throw unprocessable(`name must be at most ${NAME_MAX_CHARS} characters`);
  return name;
}

/** The first "AI agent N" (N from `from` up) whose lowercase form is not in `taken`. */
export function defaultName(from: number, taken: ReadonlySet<string>): string {
  for (let n = Math.max(1, from); ; n += 1) {
    const name = `${DEFAULT_NAME_PREFIX} ${n}`;
    if (!taken.has(name.toLowerCase())) return name;
  }
}

/** The canonical BCP-47 form of `raw` ("en-us" → "en-US"), or 422. */
export function canonicalLanguage(raw: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(raw);
    if (canonical) return canonical;
  } catch {
    // RangeError: not a well-formed language tag; answered below.
  }
  throw unprocessable(`voice.language must be a BCP-47 language tag (for example en-US or es-MX); got '${[...raw].slice(0, 40).join('')}'`);
}

/** `patch` over `base` (absent keys keep the base value), then checked; 422 names the field. */
export function checkedVoice(base: Voice, patch: Partial<Voice>): Voice {
  const voice = { ...base, ...patch };
  const language = canonicalLanguage(voice.language);
  const voiceIdChars = [...voice.voice_id].length;
  if (voiceIdChars < 1 || voiceIdChars > VOICE_ID_MAX_CHARS) throw unprocessable(`voice.voice_id must be 1 to ${VOICE_ID_MAX_CHARS} characters`);
  if (!Number.isFinite(voice.pace) || voice.pace < 0 || voice.pace > 1) throw unprocessable('voice.pace must be a number from 0 to 1');
  return { language, voice_id: voice.voice_id, pace: voice.pace };
}

function intIn(field: string, value: number, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw unprocessable(`${field} must be an integer from ${min} to ${max}`);
}

export function checkedPolicy(base: Policy, patch: Partial<Policy>): Policy {
  const policy = { ...base, ...patch };
  intIn('policy.max_settlement_pct', policy.max_settlement_pct, 0, 100);
  intIn('policy.min_payment_cents', policy.min_payment_cents, 0, Number.MAX_SAFE_INTEGER);
  intIn('policy.max_plan_months', policy.max_plan_months, 1, MAX_PLAN_MONTHS);
  if (policy.prohibited.length > PROHIBITED_MAX_ITEMS) throw unprocessable(`policy.prohibited must have at most ${PROHIBITED_MAX_ITEMS} entries`);
  policy.prohibited.forEach((phrase, i) => {
    const chars = [...phrase].length;
    if (chars < 1 || chars > PROHIBITED_MAX_CHARS || !phrase.trim()) {
      throw unprocessable(`policy.prohibited[${i}] must be 1 to ${PROHIBITED_MAX_CHARS} characters and not blank`);
    }
  });
  return {
    max_settlement_pct: policy.max_settlement_pct,
    min_payment_cents: policy.min_payment_cents,
    max_plan_months: policy.max_plan_months,
    take_payments: policy.take_payments,
    prohibited: [...policy.prohibited],
  };
}

/** The disclosure text checked: 422 when missing, over 10000 UTF-8 bytes, or not identifying the voice as automated. */
export function checkedDisclosure(text: string | undefined): string {
  if (text === undefined) throw unprocessable('disclosure.text is required: every AI agent opens with the artificial-voice disclosure');
  if (Buffer.byteLength(text, 'utf8') > DISCLOSURE_MAX_BYTES) throw unprocessable(`disclosure.text must be at most ${DISCLOSURE_MAX_BYTES} bytes (UTF-8)`);
  const problem = disclosureProblem(text);
  if (problem) throw unprocessable(`disclosure.text: ${problem}`);
  return text;
}

/** The disclosure of an agent that has been live never changes (the same text again is no change). */
export function assertDisclosureWritable(locked: boolean, current: string, next: string): void {
  if (locked && next !== current) throw conflict('the disclosure of an AI agent that has been live is locked and cannot change');
}

function unknownParams(field: string, params: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(params).filter((k) => !allowed.includes(k));
  if (extra.length) throw unprocessable(`${field} has unknown key${extra.length > 1 ? 's' : ''} ${extra.map((k) => `'${k}'`).join(', ')}`);
}

/** A rule's params checked for its trigger, with defaults filled in so the engine never guesses. */
export function checkedParams(field: string, trigger: HandoffTrigger, params: Record<string, unknown>): Record<string, unknown> {
  switch (trigger) {
    case 'keywords': {
      unknownParams(field, params, ['keywords']);
      const keywords: unknown = params.keywords;
      if (!Array.isArray(keywords) || keywords.length === 0 || keywords.length > KEYWORDS_MAX_ITEMS) {
        throw unprocessable(`${field}.keywords must be a list of 1 to ${KEYWORDS_MAX_ITEMS} words or phrases`);
      }
      const list: unknown[] = keywords;
      for (const k of list) {
        if (typeof k !== 'string' || !k.trim() || [...k].length > KEYWORD_MAX_CHARS) {
          throw unprocessable(`${field}.keywords entries must be non-blank strings of at most ${KEYWORD_MAX_CHARS} characters`);
        }
      }
      return { keywords: [...list] };
    }
    case 'negative_sentiment': {
      unknownParams(field, params, ['threshold', 'consecutive']);
      const threshold = params.threshold ?? DEFAULT_SENTIMENT_PARAMS.threshold;
      const consecutive = params.consecutive ?? DEFAULT_SENTIMENT_PARAMS.consecutive;
      if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < -1 || threshold > 1) {
        throw unprocessable(`${field}.threshold must be a sentiment score from -1 to 1`);
      }
      if (typeof consecutive !== 'number' || !Number.isSafeInteger(consecutive) || consecutive < 1 || consecutive > SENTIMENT_CONSECUTIVE_MAX) {
        throw unprocessable(`${field}.consecutive must be an integer from 1 to ${SENTIMENT_CONSECUTIVE_MAX}`);
      }
      return { threshold, consecutive };
    }
    case 'payment_over': {
      unknownParams(field, params, ['cents']);
      const cents = params.cents;
      if (typeof cents !== 'number' || !Number.isSafeInteger(cents) || cents <= 0) throw unprocessable(`${field}.cents must be a positive integer`);
      return { cents };
    }
    case 'human_requested':
      unknownParams(field, params, []);
      return {};
  }
}

const ruleContent = (r: Omit<HandoffRule, 'id'>) => canonicalJson({ trigger: r.trigger, params: r.params, action: r.action, severity: r.severity, locked: r.locked });

/**
 * The rule list a write ends with. Client rules are checked and keep their order; an id naming one
 * of `current`'s rules keeps it, any other id (or none) gets a fresh server id. The locked
 * human_requested rule is the only human_requested rule there is: sent unchanged it stays where the
 * client put it, absent it is appended; a changed or second one is 422. When the result says the
 * same as `current` (ids aside), `current` itself is returned, so a resend is no change.
 */
export function checkedHandoffRules(input: readonly HandoffRuleInput[], current: readonly HandoffRule[]): HandoffRule[] {
  if (input.length > HANDOFF_RULES_MAX) throw unprocessable(`handoff_rules must have at most ${HANDOFF_RULES_MAX} rules`);
  const currentIds = new Set(current.map((r) => r.id));
  const lockedCurrent = current.find((r) => r.trigger === 'human_requested');
  const seenIds = new Set<string>();
  let humanSeen = false;
  const rules: HandoffRule[] = input.map((rule, i) => {
    const field = `handoff_rules[${i}]`;
    if (rule.id) {
      if (seenIds.has(rule.id)) throw unprocessable(`${field}.id repeats the id of an earlier rule`);
      seenIds.add(rule.id);
    }
    const params = checkedParams(`${field}.params`, rule.trigger, rule.params ?? {});
    if (rule.trigger === 'human_requested') {
      if (humanSeen) throw unprocessable(`${field}: an AI agent has exactly one human_requested rule (the locked one)`);
      humanSeen = true;
      if (rule.action !== HUMAN_REQUESTED_RULE.action || rule.severity !== HUMAN_REQUESTED_RULE.severity || rule.locked === false) {
        throw unprocessable(
          `${field}: the human_requested rule is locked (action ${HUMAN_REQUESTED_RULE.action}, severity ${HUMAN_REQUESTED_RULE.severity}); it cannot be changed or removed`,
        );
      }
      return { id: lockedCurrent?.id ?? randomUUID(), ...HUMAN_REQUESTED_RULE, params: {}, locked: true };
    }
    const id = rule.id && currentIds.has(rule.id) && rule.id !== lockedCurrent?.id ? rule.id : randomUUID();
    return { id, trigger: rule.trigger, params, action: rule.action, severity: rule.severity, locked: false };
  });
  if (!humanSeen) rules.push({ id: lockedCurrent?.id ?? randomUUID(), ...HUMAN_REQUESTED_RULE, params: {}, locked: true });
  const same = rules.length === current.length && rules.every((r, i) => ruleContent(r) === ruleContent(current[i]!));
  return same ? [...current] : rules;
}

/** The versioned part of an agent: what a policy_version stands for. */
export interface VersionedFields {
  voice: Voice;
  disclosure_text: string;
  policy: Policy;
  handoff_rules: HandoffRule[];
}

const VERSIONED_KEYS = ['voice', 'disclosure_text', 'policy', 'handoff_rules'] as const;

/** The versioned fields whose value differs between `prev` and `next`. */
export function changedVersionedFields(prev: VersionedFields, next: VersionedFields): (keyof VersionedFields)[] {
  return VERSIONED_KEYS.filter((k) => canonicalJson(prev[k]) !== canonicalJson(next[k]));
}

/** Whether `next` says something different from `prev` (a no-op write keeps the version). */
export function versionedChange(prev: VersionedFields, next: VersionedFields): boolean {
  return changedVersionedFields(prev, next).length > 0;
}

/**
 * A status move requested through PATCH, decided against the row before anything is written: the
 * same status is no move (null); retired only through DELETE; anything else must be a lifecycle move.
 */
export function requestedMove(from: AiAgentStatus, to: AiAgentStatus): AiAgentStatus | null {
  if (from === 'retired') throw conflict('the AI agent is retired; a retired agent cannot change');
  if (to === from) return null;
  if (to === 'retired') throw conflict('an AI agent is retired with DELETE /v1/ai/agents/{id}, not through PATCH');
  if (!isAiAgentTransition(from, to)) throw conflict(`an AI agent cannot move from ${from} to ${to}`);
  return to;
}
