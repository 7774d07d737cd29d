import { proxyActivities } from '@temporalio/workflow';
import type { MailDeliveryActivities, QueuedMail } from '../src/contracts/mail-delivery';

const { deliverQueuedMail } = proxyActivities<MailDeliveryActivities>({
  // An SMTP conversation. A notice stays worth sending for hours: refusals are retried for about four
  // of them, after which the mail stays in mail_outbox, undelivered (the operator's queue).
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes', backoffCoefficient: 2, maximumAttempts: 30 },
});

/** Delivers one mail its caller committed to mail_outbox (activity deliverQueuedMail, shared with the password reset). */
export async function mailDeliveryWorkflow(mail: QueuedMail): Promise<void> {
  await deliverQueuedMail(mail);
}
