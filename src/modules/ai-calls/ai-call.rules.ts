// Decisions of live AI calls as pure functions: the dial tick, the activities and the tests share them.

/** Live AI calls one ai_voice campaign keeps at once when the tenant sets no channel ceiling below it. */
export const AI_MAX_CONCURRENT_CALLS = 10;

/** How far out a callback the consumer asked the AI for is scheduled (the engine hears no time). */
export const AI_CALLBACK_DELAY_MS = 24 * 3_600_000;

/** Debt states a dispute said to the AI moves to disputed; a paid, settled or closed debt keeps its state. */
export const DISPUTABLE_DEBT_STATES = ['open', 'in_collection', 'promise_to_pay'] as const;

/** An utterance is cut here before it is relayed (the engine reads at most 2,000 characters). */
export const MAX_SPEECH_CHARS = 2000;

/** Why an ai_voice tick places nothing, in the order the gates are checked (reported as the run's `idle`). */
export type AiGateRefusal = 'voice_ai_disabled' | 'ai_paused' | 'ai_agent_not_live' | 'ai_budget_exhausted';

export interface AiGateFacts {
  voiceAiEnabled: boolean;
  pausedAt: Date | null;
  agentStatus: string | null;
  /** Month-to-date metered cost and the tenant's cap, as decimal strings (null cap = no cap). */
  monthCostUsd: string;
  budgetUsd: string | null;
}

/** Decimal string (up to 6 places) to integer micro-dollars: money is never a JS float here. */
export function toMicros(usd: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{0,6})\d*)?$/.exec(usd.trim());
  if (!m) throw new Error(`not a decimal amount: ${usd}`);
  const micros = BigInt(m[2]!) * 1_000_000n + BigInt((m[3] ?? '').padEnd(6, '0'));
  return m[1] ? -micros : micros;
}

export function aiGateRefusal(f: AiGateFacts): AiGateRefusal | null {
  if (!f.voiceAiEnabled) return 'voice_ai_disabled';
  if (f.pausedAt !== null) return 'ai_paused';
  if (f.agentStatus !== 'live') return 'ai_agent_not_live';
  if (f.budgetUsd !== null && toMicros(f.monthCostUsd) >= toMicros(f.budgetUsd)) return 'ai_budget_exhausted';
  return null;
}

/** Seconds from the answer to the end, never negative, capped at the call's ceiling. */
export function billableSeconds(answeredAt: Date, endedAt: Date, ceilingSeconds: number): number {
  const secs = Math.ceil(Math.max(0, endedAt.getTime() - answeredAt.getTime()) / 1000);
  return Math.min(secs, ceilingSeconds);
}

/** Every started minute is billed: 1 s is one minute, 60 s is one, 61 s is two, 0 s is none. */
export function billableMinutes(seconds: number): number {
  return Math.ceil(seconds / 60);
}

/** The first instant of the UTC month holding `at`, and of the next one. */
export function utcMonth(at: Date): { from: Date; to: Date } {
  return {
    from: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)),
    to: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)),
  };
}
