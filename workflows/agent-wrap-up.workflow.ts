import { proxyActivities, sleep } from '@temporalio/workflow';
import type { AgentActivities } from '../activities/agent.activities';

const { expireAgentWrapUp } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '30 seconds',
  // Unlimited attempts: a database outage must delay the end of a wrap-up, not leave the seat in
  // it for good. The activity is a guarded update, safe to repeat.
  retry: { maximumInterval: '1 minute' },
});

export interface AgentWrapUpInput {
  tenantId: string;
  agentId: string;
  /** agents.wrap_up_until of the wrap-up this timer ends (ISO 8601, millisecond precision). */
  wrapUpUntil: string;
}

/**
 * One per wrap-up: the end instant is part of the id, so a seat's next wrap-up gets its own timer
 * and a repeated start of the same one is refused as a duplicate.
 */
export const agentWrapUpWorkflowId = (tenantId: string, agentId: string, wrapUpUntil: string) =>
  `agent-wrap-up:${tenantId}:${agentId}:${Date.parse(wrapUpUntil)}`;

/**
 * Sleeps until the wrap-up's end (a durable timer: it survives worker restarts), then moves the
 * seat wrap_up → available unless it has left that wrap-up meanwhile (ended early through
 * POST /v1/agents/{id}/wrap-up, checked out, or into a newer wrap-up).
 */
export async function agentWrapUpWorkflow(input: AgentWrapUpInput): Promise<{ expired: boolean }> {
  // Date.now() is the workflow clock here (replay-safe): a past end adds no timer.
  const delay = Date.parse(input.wrapUpUntil) - Date.now();
  if (delay > 0) await sleep(delay);
  return expireAgentWrapUp(input);
}
