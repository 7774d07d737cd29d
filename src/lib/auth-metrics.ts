import { Counter, type Metric } from 'prom-client';

/*
 * Process-wide like the work metrics in metrics.ts (which registers these in every scrape registry):
 * what password hashing costs, what the budgets refuse, and what becomes of outgoing mail.
 */

const passwordHashes = new Counter({
  name: 'auth_password_hashes_total',
  help: 'PBKDF2 computations by operation: verify (login, agent login, password change) or hash (a new password)',
  labelNames: ['operation'] as const,
  registers: [],
});
const budgetRefusals = new Counter({
  name: 'auth_budget_refusals_total',
  help: 'Password attempts refused before any hash (429 rate_limited), by the budget that refused',
  labelNames: ['budget'] as const,
  registers: [],
});
const mailOutcomes = new Counter({
  name: 'mail_outbox_deliveries_total',
  help: 'Mail leaving mail_outbox by kind and outcome: sent (SMTP accepted it), kept (SMTP_URL unset: the mail stays undelivered in mail_outbox), failed (SMTP refused; retried)',
  labelNames: ['kind', 'outcome'] as const,
  registers: [],
});
for (const operation of ['verify', 'hash']) passwordHashes.inc({ operation }, 0);

export const AUTH_METRICS: Metric[] = [passwordHashes, budgetRefusals, mailOutcomes];

export type MailOutcome = 'sent' | 'kept' | 'failed';

export const authMetrics = {
  hashed(operation: 'verify' | 'hash'): void {
    passwordHashes.inc({ operation });
  },
  refused(budget: string): void {
    budgetRefusals.inc({ budget });
  },
  mail(kind: string, outcome: MailOutcome): void {
    mailOutcomes.inc({ kind, outcome });
  },
  /** PBKDF2 computations of this process so far (all operations). */
  async hashCount(): Promise<number> {
    const { values } = await passwordHashes.get();
    return values.reduce((sum, v) => sum + v.value, 0);
  },
  async mailCount(kind: string, outcome: MailOutcome): Promise<number> {
    const { values } = await mailOutcomes.get();
    return values.find((v) => v.labels.kind === kind && v.labels.outcome === outcome)?.value ?? 0;
  },
};
