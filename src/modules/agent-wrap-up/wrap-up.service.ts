import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { agentWrapUpWorkflow, agentWrapUpWorkflowId } from '../../../workflows/agent-wrap-up.workflow';
import { expireWrapUp, type WrapUp } from './wrap-up.repository';

/**
 * Starts the durable timer of each wrap-up (workflow agentWrapUpWorkflow). Started by the activity
 * that moved the seat, through the Temporal client, rather than as a child of the call session: the
 * reaper (inside the dial tick) ends calls too, and the running call sessions' histories stay as
 * they are. A timer already started for the same wrap-up is a duplicate and fine; any other failure
 * is raised so the calling activity retries, and its retry finds the same wrap-up again.
 */
export async function startWrapUpTimers(deps: AppDeps, tenantId: string, wraps: WrapUp[]): Promise<void> {
  if (wraps.length === 0) return;
  const temporal = deps.temporal;
  if (!temporal) throw new Error('no workflow service is configured: the wrap-up timers cannot start');
  for (const wrap of wraps) {
    try {
      await temporal.workflow.start(agentWrapUpWorkflow, {
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        workflowId: agentWrapUpWorkflowId(tenantId, wrap.agentId, wrap.wrapUpUntil),
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [{ tenantId, agentId: wrap.agentId, wrapUpUntil: wrap.wrapUpUntil }],
        searchAttributes: { TenantId: [tenantId] },
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}

/** The timer's end: wrap_up → available unless the seat has left this wrap-up. */
export function expireAgentWrapUp(deps: AppDeps, input: { tenantId: string; agentId: string; wrapUpUntil: string }): Promise<boolean> {
  return withTenantSql(deps.db, input.tenantId, (sql) => expireWrapUp(sql, input.tenantId, { agentId: input.agentId, wrapUpUntil: input.wrapUpUntil }));
}
