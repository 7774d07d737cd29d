import type { CampaignState } from './campaign.rules';

export const LIFECYCLE_VERBS = ['start', 'resume', 'pause', 'stop', 'archive'] as const;
export type LifecycleVerb = (typeof LIFECYCLE_VERBS)[number];
/**
 * Billing enforcement's moves (no route): a running campaign is suspended when the tenant's cap is
 * reached or its prepaid funds run out, and goes back to running when funds return.
 */
export const BALANCE_VERBS = ['suspend_balance', 'restore_balance'] as const;
export type CampaignVerb = LifecycleVerb | (typeof BALANCE_VERBS)[number];

/**
 * The campaign state machine of SPEC "States and transitions": the states each call accepts and
 * where it leads. start on a running campaign is the one idempotent call. stop accepts the states
 * in which a runner exists or may resume (running, paused, suspended_balance); a draft never ran
 * and is archived instead.
 */
const RULES: Record<CampaignVerb, { from: readonly CampaignState[]; to: CampaignState }> = {
  start: { from: ['draft', 'paused', 'running'], to: 'running' },
  resume: { from: ['draft', 'paused', 'running'], to: 'running' },
  pause: { from: ['running'], to: 'paused' },
  stop: { from: ['running', 'paused', 'suspended_balance'], to: 'completed' },
  archive: { from: ['draft', 'completed'], to: 'archived' },
  suspend_balance: { from: ['running'], to: 'suspended_balance' },
  restore_balance: { from: ['suspended_balance'], to: 'running' },
};

/** The state a lifecycle call leads to from `state`, or null when the transition is invalid (409). */
export function lifecycleTarget(verb: CampaignVerb, state: string): CampaignState | null {
  const rule = RULES[verb];
  return (rule.from as readonly string[]).includes(state) ? rule.to : null;
}

export function acceptedStates(verb: CampaignVerb): readonly CampaignState[] {
  return RULES[verb].from;
}
