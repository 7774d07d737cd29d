import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { PasswordResetActivities, PasswordResetInput, PasswordResetRequestedSignal } from '../src/contracts/password-reset';

const { issuePasswordReset } = proxyActivities<PasswordResetActivities>({
  // One short transaction; a database outage only delays the link.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

const { deliverQueuedMail } = proxyActivities<PasswordResetActivities>({
  // An SMTP conversation. The link lives an hour, so delivery gives up after about ten minutes of
  // refusals (the mail stays in mail_outbox, undelivered).
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', backoffCoefficient: 2, maximumAttempts: 7 },
});

export const passwordResetRequestedSignal = defineSignal('requested' satisfies PasswordResetRequestedSignal);

/**
 * The work behind a 202 from POST /v1/auth/password-reset, after the answer: issue the link (token,
 * audit and queued mail, committed together), then deliver the mail, outside any transaction.
 * Requests that arrive meanwhile are signals; however many there were, one more link is issued
 * once the current one is done, and it supersedes every earlier one.
 */
export async function passwordResetWorkflow(input: PasswordResetInput): Promise<void> {
  let pending = 0;
  setHandler(passwordResetRequestedSignal, () => {
    pending += 1;
  });
  // Started by signalWithStart: the first request's signal comes with the start.
  await condition(() => pending > 0);
  while (pending > 0) {
    pending = 0;
    const queued = await issuePasswordReset(input);
    if (queued) await deliverQueuedMail(queued);
  }
}
