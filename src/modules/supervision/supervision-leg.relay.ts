import { WorkflowExecutionAlreadyStartedError, type Client as TemporalClient } from '@temporalio/client';
import type { Logger } from '../../lib/logger';
import type { EslEvent, EslManager } from '../../switch/esl';
import { supervisionLegWorkflowId } from '../../../workflows/ids';
import { supervisionLegEndedWorkflow } from '../../../workflows/supervision-leg.workflow';

export interface SupervisionLegRelayOptions {
  esl: EslManager;
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
}

/**
 * The supervision session a switch event ends: the hangup of a supervisor leg by the supervisor's
 * phone (recv_bye). A leg the switch ended (send_bye: the call ended under it, or a new mode
 * replaced it) is left to what ended it: the call-end sweep or the replacement.
 */
export function supervisionLegEnd(ev: EslEvent): { tenantId: string; sessionId: string; legUuid: string } | null {
  if (ev.name !== 'CHANNEL_HANGUP_COMPLETE' || !ev.uuid || ev.variables.sip_hangup_disposition !== 'recv_bye') return null;
  const sessionId = ev.variables.dd_supervision_id;
  const tenantId = ev.variables.dd_supervision_tenant_id;
  return sessionId && tenantId ? { tenantId, sessionId, legUuid: ev.uuid } : null;
}

/**
 * Relays the supervisor's own hangup of each supervisor leg (originated with dd_supervision_id) to a
 * one-step workflow that ends its session, so a supervisor who puts the phone down frees the slot at once.
 * A repeated hangup event reaches the same workflow id and is dropped. A hangup missed while no
 * relay runs leaves the slot to the sweep at the call's end, as before.
 */
export function startSupervisionLegRelay(options: SupervisionLegRelayOptions): () => Promise<void> {
  const pending = new Set<Promise<void>>();
  const onEvent = (ev: EslEvent) => {
    const end = supervisionLegEnd(ev);
    if (!end) return;
    const started = options.temporal.workflow
      .start(supervisionLegEndedWorkflow, {
        workflowId: supervisionLegWorkflowId(end.tenantId, end.sessionId),
        taskQueue: options.taskQueue,
        args: [end],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      })
      .then(
        () => undefined,
        (err: unknown) => {
          if (err instanceof WorkflowExecutionAlreadyStartedError) return;
          options.logger.warn({ err: (err as Error).message, session_id: end.sessionId }, 'supervisor leg hangup not relayed; the slot frees at the call end');
        },
      );
    pending.add(started);
    void started.finally(() => pending.delete(started));
  };
  options.esl.on('event', onEvent);
  return async () => {
    options.esl.off('event', onEvent);
    await Promise.allSettled([...pending]);
  };
}
