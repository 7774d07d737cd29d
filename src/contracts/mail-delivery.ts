/**
 * The mail-delivery workflow's interface: one queued mail (a row of mail_outbox, committed by the
 * transaction that decided to send it) delivered through SMTP with retries, outside any transaction.
 * Keyed by the outbox row, so handing the same mail off again starts nothing new.
 */

/** The exported name of the workflow function in workflows/index.ts (its Temporal type). */
export const MAIL_DELIVERY_WORKFLOW_TYPE = 'mailDeliveryWorkflow';

export function mailDeliveryWorkflowId(outboxId: string): string {
  return `mail-delivery:${outboxId}`;
}

/** A mail committed to mail_outbox and waiting for delivery (no address: workflow histories hold none). */
export interface QueuedMail {
  tenantId: string;
  outboxId: string;
}

export type MailDeliveryWorkflow = (mail: QueuedMail) => Promise<void>;

export interface MailDeliveryActivities {
  /** Sends a queued mail through SMTP (marking it sent), or keeps it (with a warning and a metric) when SMTP_URL is unset; throws when SMTP refuses it. */
  deliverQueuedMail(mail: QueuedMail): Promise<void>;
}
