import type { EavesdropMode } from '../../switch/esl';

/** Domain rules of supervision (SPEC "Supervision"). Pure. */

export const SUPERVISION_MODES = ['listen', 'whisper', 'barge', 'takeover'] as const;
export type SupervisionMode = (typeof SUPERVISION_MODES)[number];

/** Agent roles allowed to supervise (SPEC Authentication item 9). */
export const SUPERVISOR_ROLES: readonly string[] = ['supervisor', 'admin'];

/** Plan states under which the eavesdrop modes run; anything else is 402 plan_inactive. */
export const ACTIVE_PLAN_STATUSES: readonly string[] = ['active', 'trialing'];

export type RefusalReason = 'role_forbidden' | 'plan_inactive' | 'supervision_capacity';

export function mayTakeRole(role: string): boolean {
  return SUPERVISOR_ROLES.includes(role);
}

/**
 * Whether the tenant's plan lets this mode run. Takeover is never refused for the plan: it hands a
 * live debtor to a person, and refusing it would strand the call with an agent who asked for help.
 */
export function planAllows(mode: SupervisionMode, planStatus: string): boolean {
  return mode === 'takeover' || ACTIVE_PLAN_STATUSES.includes(planStatus);
}

/** What the switch is asked for each mode, given the consumer leg and the agent leg bridged to it. */
export type SupervisionCommand =
  | { kind: 'eavesdrop'; targetUuid: string; mode: EavesdropMode }
  | { kind: 'takeover'; consumerUuid: string };

/**
 * listen and barge attach to the consumer leg (barge whispers to both halves: three-way); whisper
 * must target the AGENT leg, because eavesdrop_whisper_aleg speaks to the target leg only. null
 * when whisper has no agent leg to speak to.
 */
export function commandFor(mode: SupervisionMode, consumerUuid: string, agentLegUuid: string | null): SupervisionCommand | null {
  switch (mode) {
    case 'listen':
      return { kind: 'eavesdrop', targetUuid: consumerUuid, mode: 'listen' };
    case 'whisper':
      return agentLegUuid === null ? null : { kind: 'eavesdrop', targetUuid: agentLegUuid, mode: 'whisper' };
    case 'barge':
      return { kind: 'eavesdrop', targetUuid: consumerUuid, mode: 'barge' };
    case 'takeover':
      return { kind: 'takeover', consumerUuid };
  }
}

/**
 * The quota check: live sessions of the tenant, not counting this supervisor's own live session
 * on the same call (the new mode replaces it, so it frees the slot it takes).
 */
export function quotaFull(liveSessions: number, replacesOwn: boolean, limit: number): boolean {
  return liveSessions - (replacesOwn ? 1 : 0) >= limit;
}
