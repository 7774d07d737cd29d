import type { AppDeps } from '../../deps';
import { authMetrics } from '../../lib/auth-metrics';
import { rateLimited } from '../../lib/errors';
import type { BudgetName } from '../../lib/rate-limit';

/** The one key of the deployment-wide hashing budget. */
const GLOBAL_KEY = 'all';

export interface PasswordAttempt {
  /** The password proved right: the client address gets its point back (its budget counts failures). */
  succeeded(): Promise<void>;
}

/**
 * Spends the budgets of one password attempt before any PBKDF2 work, in this order: the client
 * address's failed attempts, the subject's own budget (the email, the {tenant, email} pair, the
 * user), then one slot of the deployment-wide hashing budget. Each is an atomic count in
 * PostgreSQL, so parallel requests cannot slip past it, and the global slot is only taken by an
 * attempt that will hash. The first budget used up is a 429 `rate_limited` and nothing is hashed,
 * whether or not the subject exists, so the refusal says nothing about accounts.
 */
export async function spendPasswordAttempt(
  deps: AppDeps,
  clientAddress: string,
  subject: { budget: BudgetName; key: string },
): Promise<PasswordAttempt> {
  const refuse = (budget: string) => {
    authMetrics.refused(budget);
    return rateLimited();
  };
  if (!(await deps.rateLimits.consume('passwordAttemptsPerAddress', clientAddress))) throw refuse('passwordAttemptsPerAddress');
  if (!(await deps.rateLimits.consume(subject.budget, subject.key))) throw refuse(subject.budget);
  if (!(await deps.rateLimits.consume('passwordHashesGlobal', GLOBAL_KEY, deps.config.loginHashesPerSecond))) {
    throw refuse('passwordHashesGlobal');
  }
  return { succeeded: () => deps.rateLimits.refund('passwordAttemptsPerAddress', clientAddress) };
}
