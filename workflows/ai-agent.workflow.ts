import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { AiAgentActivities } from '../activities/ai-agent.activities';
import type { ActorType } from '../src/lib/audit';

export type AiAgentStatus = 'draft' | 'live' | 'paused' | 'retired';

/**
 * Every move the lifecycle allows. Retiring is reachable from every other state (DELETE); nothing
 * leaves retired. Going back to draft is never allowed: a draft has never been live, and the
 * disclosure lock that the first live sets never opens again.
 */
export const AI_AGENT_TRANSITIONS: Readonly<Record<AiAgentStatus, readonly AiAgentStatus[]>> = {
  draft: ['live', 'retired'],
  live: ['paused', 'retired'],
  paused: ['live', 'retired'],
  retired: [],
};

export function isAiAgentTransition(from: AiAgentStatus, to: AiAgentStatus): boolean {
  return AI_AGENT_TRANSITIONS[from].includes(to);
}

/** `type` of the ApplicationFailures a transition answers with; the API maps each to its HTTP error. */
export const AI_AGENT_FAILURES = {
  /** The move is not in AI_AGENT_TRANSITIONS from the current state (409). */
  invalidTransition: 'AiAgentInvalidTransition',
  /** Going live while the tenant's voice_ai_enabled is off (409). */
  voiceAiDisabled: 'AiAgentVoiceAiDisabled',
  /** Going live with a disclosure that fails the content check (422). */
  disclosureInvalid: 'AiAgentDisclosureInvalid',
  /** The row was not in the state this workflow believed (a concurrent writer won); details[0] is the row's status (409). */
  stale: 'AiAgentStale',
} as const;

export const aiAgentLifecycleWorkflowId = (tenantId: string, agentId: string) => `ai-agent:${tenantId}:${agentId}`;

export interface AiAgentActor {
  type: ActorType;
  id: string | null;
}

export interface AiAgentTransitionRequest {
  to: AiAgentStatus;
  actor: AiAgentActor;
}

export interface AiAgentTransitionResult {
  from: AiAgentStatus;
  to: AiAgentStatus;
}

export interface AiAgentLifecycleInput {
  tenantId: string;
  agentId: string;
  /** The agent's status when this run starts (the row's, or the previous run's state). */
  status: AiAgentStatus;
  /** Transitions before continue-as-new; default TRANSITIONS_PER_RUN. */
  transitionsPerRun?: number;
}

export const aiAgentTransitionUpdate = defineUpdate<AiAgentTransitionResult, [AiAgentTransitionRequest]>('transition');
export const aiAgentStatusQuery = defineQuery<AiAgentStatus>('status');

/** Continue-as-new after this many transitions (or sooner when Temporal suggests it): bounded history. */
export const TRANSITIONS_PER_RUN = 1000;

const { persistAiAgentTransition } = proxyActivities<AiAgentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
});

function refuseMove(from: AiAgentStatus, to: AiAgentStatus): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`an AI agent cannot move from ${from} to ${to}`, AI_AGENT_FAILURES.invalidTransition, from);
}

/**
 * The one owner of an AI agent's status. Each move arrives as the `transition` update: the
 * validator refuses a move the lifecycle does not allow before it enters history, then the
 * activity persists it conditionally on the state this workflow holds (a writer that changed the
 * row meanwhile makes it refuse, and this workflow adopts the row's state). Moves are applied one
 * at a time. The run ends when the agent is retired.
 */
export async function aiAgentLifecycleWorkflow(input: AiAgentLifecycleInput): Promise<void> {
  let status = input.status;
  let busy = false;
  let transitions = 0;

  setHandler(aiAgentStatusQuery, () => status);
  setHandler(
    aiAgentTransitionUpdate,
    async ({ to, actor }) => {
      await condition(() => !busy);
      // Another move may have been applied while this one waited its turn.
      if (!isAiAgentTransition(status, to)) throw refuseMove(status, to);
      busy = true;
      const from = status;
      try {
        await persistAiAgentTransition({ tenantId: input.tenantId, agentId: input.agentId, from, to, actor });
        status = to;
        transitions += 1;
        return { from, to };
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : undefined;
        if (cause instanceof ApplicationFailure && cause.type === AI_AGENT_FAILURES.stale) {
          status = cause.details?.[0] as AiAgentStatus;
        }
        throw err;
      } finally {
        busy = false;
      }
    },
    {
      validator: ({ to }: AiAgentTransitionRequest) => {
        if (!isAiAgentTransition(status, to)) throw refuseMove(status, to);
      },
    },
  );

  const perRun = input.transitionsPerRun ?? TRANSITIONS_PER_RUN;
  await condition(() => status === 'retired' || transitions >= perRun || workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  if (status === 'retired') return;
  await continueAsNew<typeof aiAgentLifecycleWorkflow>({ ...input, status });
}
