import { WorkflowExecutionAlreadyStartedError, type Client as TemporalClient } from '@temporalio/client';
import { MAIL_DELIVERY_WORKFLOW_TYPE, mailDeliveryWorkflowId, type MailDeliveryWorkflow, type QueuedMail } from '../contracts/mail-delivery';
import type { Logger } from './logger';

/**
 * Hands committed mail_outbox rows to their delivery workflows (one per row, keyed by it). A row
 * already handed off starts nothing: REJECT_DUPLICATE keeps even a finished delivery from running
 * twice. A failed hand-off is logged, not thrown: the row stays undelivered in mail_outbox for the
 * caller's sweep to hand off again.
 */
export async function handOffQueuedMail(
  deps: { temporal: TemporalClient | null; config: { TEMPORAL_TASK_QUEUE: string }; logger: Logger },
  mails: QueuedMail[],
): Promise<void> {
  if (!mails.length) return;
  if (!deps.temporal) {
    deps.logger.error({ mails: mails.length }, 'mail queued but Temporal is not configured (TEMPORAL_ADDRESS): it stays undelivered in mail_outbox');
    return;
  }
  for (const mail of mails) {
    try {
      await deps.temporal.workflow.start<MailDeliveryWorkflow>(MAIL_DELIVERY_WORKFLOW_TYPE, {
        workflowId: mailDeliveryWorkflowId(mail.outboxId),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [mail],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) continue;
      deps.logger.error({ err: (err as Error).message, tenant_id: mail.tenantId, mail_id: mail.outboxId }, 'queued mail could not be handed to its delivery workflow');
    }
  }
}
