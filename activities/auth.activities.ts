import type { PasswordResetActivities } from '../src/contracts/password-reset';
import type { RateLimitPruneActivities } from '../src/contracts/rate-limit-prune';
import type { AppDeps } from '../src/deps';
import { deliverQueuedMail } from '../src/lib/mailer';
import { PRUNE_BATCH, pruneExpiredRateLimits } from '../src/lib/rate-limit';
import { issuePasswordReset } from '../src/modules/auth/auth.service';

/** The password-reset workflow's steps and the rate_limits prune loop. */
export function createAuthActivities(deps: AppDeps): PasswordResetActivities & RateLimitPruneActivities {
  return {
    issuePasswordReset: (input) => issuePasswordReset(deps, input.emailCiphertext),
    async deliverQueuedMail(mail) {
      await deliverQueuedMail(deps, mail.tenantId, mail.outboxId);
    },
    async pruneExpiredRateLimits() {
      const deleted = await pruneExpiredRateLimits(deps.db.pool, Date.now(), PRUNE_BATCH);
      return { deleted, more: deleted === PRUNE_BATCH };
    },
  };
}

export type AuthActivities = ReturnType<typeof createAuthActivities>;
