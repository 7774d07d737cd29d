import type { CampaignState } from './campaign.rules';

export const LIFECYCLE_VERBS = ['start', 'resume', 'pause', 'stop', 'archive'] as const;
export type LifecycleVerb = (typeof LIFECYCLE_VERBS)[number];

/**
 * The campaign state machine of SPEC "States and transitions": the states each call accepts and
 * where it leads. start on a running campaign is the one idempotent call. stop accepts the states
 * in which a runner exists or may resume (running, paused, suspended_balance); a draft never ran
 * and is archived instead.
 */
const RULES: Record<LifecycleVerb, { from: readonly CampaignState[]; to: CampaignState }> = {
  start: { from: ['draft', 'paused', 'running'], to: 'running' },
  resume: { from: ['draft', 'paused', 'running'], to: 'running' },
  pause: { from: ['running'], to: 'paused' },
  stop: { from: ['running', 'paused', 'suspended_balance'], to: 'completed' },
  archive: { from: ['draft', 'completed'], to: 'archived' },
};

/** The state a lifecycle call leads to from `state`, or null when the transition is invalid (409). */
export function lifecycleTarget(verb: LifecycleVerb, state: string): CampaignState | null {
  const rule = RULES[verb];
  return (rule.from as readonly string[]).includes(state) ? rule.to : null;
}

export function acceptedStates(verb: LifecycleVerb): readonly CampaignState[] {
  return RULES[verb].from;
}
