/**
 * The password-reset workflow's interface, shared by the API that starts it, the worker that
 * registers its activities and the workflow itself (which imports only the types).
 *
 * One workflow per address at a time, keyed by the SHA-256 of the lowercased address: a repeat
 * request signals the running one instead of racing it, and the plain address stays out of
 * workflow ids and search attributes.
 */

/** The exported name of the workflow function in workflows/index.ts (its Temporal type). */
export const PASSWORD_RESET_WORKFLOW_TYPE = 'passwordResetWorkflow';

/** Sent with every request (signalWithStart): the workflow issues one more link after the one in progress. */
export const PASSWORD_RESET_REQUESTED_SIGNAL = 'requested';
export type PasswordResetRequestedSignal = typeof PASSWORD_RESET_REQUESTED_SIGNAL;

/** `emailDigest`: lowercase hex SHA-256 of the trimmed, lowercased address. */
export function passwordResetWorkflowId(emailDigest: string): string {
  return `password-reset:${emailDigest}`;
}

export interface PasswordResetInput {
  /** The normalized address, encrypted with the deployment key (workflow histories hold no plain address). */
  emailCiphertext: string;
}

/** A reset mail committed to mail_outbox and waiting for delivery. */
export interface QueuedMail {
  tenantId: string;
  outboxId: string;
}

export type PasswordResetWorkflow = (input: PasswordResetInput) => Promise<void>;

export interface PasswordResetActivities {
  /**
   * In one transaction: supersede the user's live links, store a new one, audit the request and
   * queue the mail. null (nothing written) when the address has no active user of an active tenant.
   */
  issuePasswordReset(input: PasswordResetInput): Promise<QueuedMail | null>;
  /** After commit: sends a queued mail through SMTP, or keeps it (with a warning and a metric) when SMTP_URL is unset. */
  deliverQueuedMail(mail: QueuedMail): Promise<void>;
}
