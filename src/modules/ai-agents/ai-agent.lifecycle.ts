import { WithStartWorkflowOperation } from '@temporalio/client';
import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { conflict, internal, unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { applicationFailureOf } from '../../lib/workflow-failure';
import {
  AI_AGENT_FAILURES,
  aiAgentLifecycleWorkflow,
  aiAgentLifecycleWorkflowId,
  aiAgentTransitionUpdate,
  type AiAgentActor,
  type AiAgentStatus,
} from '../../../workflows/ai-agent.workflow';
import { disclosureProblem } from '../disclosure/disclosure.rules';
import { selectAiAgent, selectVoiceAiEnabled, transitionAiAgent } from './ai-agent.repository';

export const AI_AGENT_SUBJECT = 'ai_agent';

export interface TransitionInput {
  tenantId: string;
  agentId: string;
  from: AiAgentStatus;
  to: AiAgentStatus;
  actor: AiAgentActor;
}

export type TransitionOutcome =
  | { outcome: 'applied' }
  | { outcome: 'voice_ai_disabled' | 'disclosure_invalid'; message: string }
  | { outcome: 'stale'; message: string; status: AiAgentStatus };

export const VOICE_AI_DISABLED_MESSAGE = "the tenant's voice AI add-on is off (voice_ai_enabled false): an AI agent cannot go live";

/**
 * The write behind one lifecycle move (the workflow's activity): going live re-checks the tenant's
 * voice_ai_enabled and the disclosure in the same transaction as the move, so neither can change
 * between check and write. A retry of a move that already committed finds the row in `to` and
 * reports it applied, writing nothing twice.
 */
export function persistTransition(deps: AppDeps, input: TransitionInput): Promise<TransitionOutcome> {
  return withTenantSql(deps.db, input.tenantId, async (sql): Promise<TransitionOutcome> => {
    const row = await selectAiAgent(sql, input.agentId, true);
    if (!row) throw new Error(`AI agent ${input.agentId} is not in the tenant`);
    if (row.status === input.to) return { outcome: 'applied' };
    if (row.status !== input.from) {
      return { outcome: 'stale', status: row.status, message: `the AI agent is ${row.status} now; it cannot move from ${input.from} to ${input.to}` };
    }
    if (input.to === 'live') {
      if (!(await selectVoiceAiEnabled(sql))) return { outcome: 'voice_ai_disabled', message: VOICE_AI_DISABLED_MESSAGE };
      const problem = disclosureProblem(row.disclosure_text);
      if (problem) return { outcome: 'disclosure_invalid', message: `disclosure.text: ${problem}` };
    }
    const moved = await transitionAiAgent(sql, input.agentId, input.from, input.to);
    if (!moved) throw new Error(`AI agent ${input.agentId} left ${input.from} under a row lock`);
    await appendAuditSql(sql, input.tenantId, [
      {
        actorType: input.actor.type,
        actorId: input.actor.id,
        action: `${AI_AGENT_SUBJECT}.${input.to}`,
        subjectType: AI_AGENT_SUBJECT,
        subjectId: input.agentId,
        payload: {
          from: input.from,
          to: input.to,
          policy_version: moved.policy_version,
          ...(input.to === 'live' && !row.disclosure_locked ? { disclosure_locked: true } : {}),
        },
      },
    ]);
    return { outcome: 'applied' };
  });
}

function lifecycleStart(deps: AppDeps, tenantId: string, agentId: string, status: AiAgentStatus) {
  return {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: aiAgentLifecycleWorkflowId(tenantId, agentId),
    args: [{ tenantId, agentId, status }] as [{ tenantId: string; agentId: string; status: AiAgentStatus }],
    searchAttributes: { TenantId: [tenantId] },
  };
}

/**
 * Starts the agent's lifecycle workflow when it is created. The agent exists without it: a start
 * that fails here (or a deployment without a workflow service) is made up for by the first
 * transition, which starts the workflow if it is missing.
 */
export async function startLifecycle(deps: AppDeps, tenantId: string, agentId: string): Promise<void> {
  if (!deps.temporal) return;
  try {
    await deps.temporal.workflow.start(aiAgentLifecycleWorkflow, { ...lifecycleStart(deps, tenantId, agentId, 'draft'), workflowIdConflictPolicy: 'USE_EXISTING' });
  } catch (err) {
    deps.logger.warn({ err, aiAgentId: agentId }, 'could not start the AI agent lifecycle workflow; the first transition starts it');
  }
}

/**
 * Asks the agent's lifecycle workflow to move it (update `transition`), starting the workflow
 * from the row's status when it is missing. The workflow's typed refusals map to HTTP errors:
 * a move the lifecycle does not allow, a lost race, or the tenant's voice AI being off are 409; a
 * disclosure that fails its check is 422.
 */
export async function requestTransition(
  deps: AppDeps,
  tenantId: string,
  agentId: string,
  current: AiAgentStatus,
  to: AiAgentStatus,
  actor: AiAgentActor,
): Promise<void> {
  if (!deps.temporal) throw internal('no workflow service is configured: AI agent status moves are unavailable; retry when it is');
  try {
    await deps.temporal.workflow.executeUpdateWithStart(aiAgentTransitionUpdate, {
      args: [{ to, actor }],
      startWorkflowOperation: new WithStartWorkflowOperation(aiAgentLifecycleWorkflow, {
        ...lifecycleStart(deps, tenantId, agentId, current),
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  } catch (err) {
    const failure = applicationFailureOf(err);
    switch (failure?.type) {
      case AI_AGENT_FAILURES.invalidTransition:
      case AI_AGENT_FAILURES.stale:
      case AI_AGENT_FAILURES.voiceAiDisabled:
        throw conflict(failure.message);
      case AI_AGENT_FAILURES.disclosureInvalid:
        throw unprocessable(failure.message);
      default:
        throw err;
    }
  }
}
