import type { UserSession } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { appendAudit } from '../../lib/audit';
import {
  PASSWORD_RESET_REQUESTED_SIGNAL,
  PASSWORD_RESET_WORKFLOW_TYPE,
  passwordResetWorkflowId,
  type PasswordResetWorkflow,
  type QueuedMail,
} from '../../contracts/password-reset';
import { forbidden, unauthorized, unprocessable } from '../../lib/errors';
import { hashPassword, passwordPolicyError, verifyPassword } from '../../lib/passwords';
import { withTenant } from '../../lib/tenancy';
import { classifyBearer, mintToken, sha256Hex } from '../../lib/tokens';
import { tenantView } from '../tenants/tenant.views';
import { userView } from '../users/user.views';
import { spendPasswordAttempt } from './password-attempts';

/** Fixed at login, never renewed: the spec's 24 h engine ceiling. */
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;
/** A reset link is redeemable for one hour (and only until a newer one is requested). */
export const RESET_TOKEN_TTL_MS = 60 * 60 * 1000;

export const PASSWORD_RESET_ACCEPTED = {
  status: 'accepted' as const,
  message: 'If an account exists for this address, a password reset link has been sent.',
};

const INVALID_LOGIN = 'invalid email or password';

function sessionView(s: UserSession) {
  return {
    id: s.id,
    user_id: s.userId,
    expires_at: s.expiresAt.toISOString(),
    revoked_at: s.revokedAt?.toISOString() ?? null,
    created_at: s.createdAt.toISOString(),
  };
}

interface UserByEmail {
  user_id: string;
  tenant_id: string;
  password_hash: string;
  user_status: string;
  tenant_status: string;
}

async function findUserByEmail(deps: AppDeps, email: string): Promise<UserByEmail | null> {
  const { rows } = await deps.db.pool.query<UserByEmail>(
    'SELECT user_id, tenant_id, password_hash, user_status, tenant_status FROM auth_user_by_email($1)',
    [email.trim().toLowerCase()],
  );
  return rows[0] ?? null;
}

/**
 * Unknown email, wrong password and disabled user are one identical 401 after the same PBKDF2
 * work; a suspended tenant is 403 only once the credentials are proven. Before any of that the
 * attempt spends the client address's, the email's and the deployment's budgets (429 with no hash).
 */
export async function login(deps: AppDeps, email: string, password: string, clientAddress: string) {
  const normalized = email.trim().toLowerCase();
  const attempt = await spendPasswordAttempt(deps, clientAddress, { budget: 'login', key: normalized });
  const account = await findUserByEmail(deps, normalized);
  const passwordOk = await verifyPassword(password, account?.password_hash ?? deps.decoyPasswordHash);
  if (!account || !passwordOk || account.user_status !== 'active') throw unauthorized(INVALID_LOGIN);
  await attempt.succeeded();
  if (account.tenant_status !== 'active') throw forbidden('tenant is suspended');

  const token = mintToken('ddu_');
  return withTenant(deps.db, account.tenant_id, async (tx) => {
    const now = new Date();
    // The password was checked against a hash read before this transaction. Only open the session
    // if that hash is still the user's (row-locked from here to commit): a password change or
    // reset that commits while the login is in flight would otherwise miss the new session, and
    // the old password would keep a live session after "every session was revoked".
    const current = await tx.user.updateMany({
      where: { id: account.user_id, passwordHash: account.password_hash, status: 'active' },
      data: { lastLoginAt: now },
    });
    if (current.count !== 1) throw unauthorized(INVALID_LOGIN);
    const session = await tx.userSession.create({
      data: {
        tenantId: account.tenant_id,
        userId: account.user_id,
        tokenHash: sha256Hex(token),
        expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
      },
    });
    const user = await tx.user.findUniqueOrThrow({ where: { id: account.user_id } });
    const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: account.tenant_id } });
    await appendAudit(tx, account.tenant_id, {
      actorType: 'user',
      actorId: account.user_id,
      action: 'session.created',
      subjectType: 'user_session',
      subjectId: session.id,
    });
    return {
      token,
      session: sessionView(session),
      user: userView(user),
      tenant: tenantView(tenant, deps.config.AI_MAX_CALL_SECONDS_DEFAULT),
    };
  });
}

/** Revokes the presented session if it is live; anything else well-formed is a silent no-op. */
export async function logout(deps: AppDeps, token: string): Promise<void> {
  if (classifyBearer(token) !== 'ddu_') return;
  const { rows } = await deps.db.pool.query<{ session_id: string; user_id: string; tenant_id: string }>(
    'SELECT session_id, user_id, tenant_id FROM auth_resolve_session($1)',
    [sha256Hex(token)],
  );
  const live = rows[0];
  if (!live) return;
  await withTenant(deps.db, live.tenant_id, async (tx) => {
    const { count } = await tx.userSession.updateMany({ where: { id: live.session_id, revokedAt: null }, data: { revokedAt: new Date() } });
    if (count > 0) {
      await appendAudit(tx, live.tenant_id, {
        actorType: 'user',
        actorId: live.user_id,
        action: 'session.revoked',
        subjectType: 'user_session',
        subjectId: live.session_id,
        payload: { reason: 'logout' },
      });
    }
  });
}

/**
 * The whole of the request's own work, identical for every address: the per-email budget. The
 * address's password-reset workflow is then signalled (started if none runs) without the answer
 * waiting for it: whether the address has an account is first looked at by that workflow, so
 * neither the body nor the time of the 202 depends on it, nor on how long Temporal takes to
 * accept the hand-off. Over budget nothing is started and no mail is sent.
 */
export async function requestPasswordReset(deps: AppDeps, email: string): Promise<void> {
  const normalized = email.trim().toLowerCase();
  if (!normalized || normalized.length > 254) return;
  if (!(await deps.rateLimits.consume('passwordReset', normalized))) return;
  const handOff = handOffPasswordReset(deps, normalized).finally(() => handOffs.delete(handOff));
  handOffs.add(handOff);
}

const handOffs = new Set<Promise<void>>();

/** Resolves once every hand-off begun so far has reached Temporal (or failed and been logged). */
export async function passwordResetHandOffsSettled(): Promise<void> {
  await Promise.all([...handOffs]);
}

async function handOffPasswordReset(deps: AppDeps, normalized: string): Promise<void> {
  if (!deps.temporal) {
    deps.logger.error('password reset requested but Temporal is not configured (TEMPORAL_ADDRESS): no link is issued');
    return;
  }
  try {
    await deps.temporal.workflow.signalWithStart<PasswordResetWorkflow, []>(PASSWORD_RESET_WORKFLOW_TYPE, {
      workflowId: passwordResetWorkflowId(sha256Hex(normalized)),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [{ emailCiphertext: deps.box.encrypt(normalized) }],
      signal: PASSWORD_RESET_REQUESTED_SIGNAL,
      signalArgs: [],
    });
  } catch (err) {
    // The caller's answer never depends on delivery; the failure is only logged.
    deps.logger.error({ err: (err as Error).message }, 'password reset could not be handed to its workflow');
  }
}

/**
 * The password-reset workflow's first step (activity issuePasswordReset). Mails only an active
 * user of an active tenant; a new link supersedes every earlier live one. Token, audit entry and
 * the queued mail commit together; the mail leaves afterwards (deliverQueuedMail).
 */
export async function issuePasswordReset(deps: AppDeps, emailCiphertext: string): Promise<QueuedMail | null> {
  const normalized = deps.box.decrypt(emailCiphertext);
  const account = await findUserByEmail(deps, normalized);
  if (!account || account.user_status !== 'active' || account.tenant_status !== 'active') return null;
  const token = mintToken('ddr_');
  const link = `${deps.config.publicBaseUrl}/reset-password?token=${encodeURIComponent(token)}`;
  const outboxId = await withTenant(deps.db, account.tenant_id, async (tx) => {
    // One issuer per user at a time: concurrent requests would otherwise each find nothing to
    // supersede and leave several live links.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`password_reset:${account.user_id}`}, 0))`;
    const now = new Date();
    await tx.passwordResetToken.updateMany({
      where: { userId: account.user_id, usedAt: null, supersededAt: null },
      data: { supersededAt: now },
    });
    const reset = await tx.passwordResetToken.create({
      data: {
        tenantId: account.tenant_id,
        userId: account.user_id,
        tokenHash: sha256Hex(token),
        expiresAt: new Date(now.getTime() + RESET_TOKEN_TTL_MS),
      },
    });
    await appendAudit(tx, account.tenant_id, {
      actorType: 'user',
      actorId: account.user_id,
      action: 'password_reset.requested',
      subjectType: 'password_reset',
      subjectId: reset.id,
    });
    return deps.mailer.enqueue(tx, account.tenant_id, {
      to: normalized,
      subject: 'Reset your password',
      kind: 'password_reset',
      text: `A password reset was requested for your account.\n\nOpen this link within one hour to choose a new password:\n${link}\n\nIf you did not ask for this, ignore this message.`,
    });
  });
  return { tenantId: account.tenant_id, outboxId };
}

interface ResetTokenRow {
  token_id: string;
  user_id: string;
  tenant_id: string;
}

/**
 * The password policy is checked before the token is touched (a bad password leaves the link
 * redeemable). Then, in one transaction: burn the token, write the password, revoke every live
 * session of the user.
 */
export async function confirmPasswordReset(deps: AppDeps, token: string, password: string): Promise<void> {
  const policy = passwordPolicyError(password);
  if (policy) throw unprocessable(policy);
  const { rows } = await deps.db.pool.query<ResetTokenRow>(
    'SELECT token_id, user_id, tenant_id FROM auth_resolve_reset_token($1)',
    [sha256Hex(token)],
  );
  const reset = rows[0];
  if (!reset) throw unauthorized('reset token is not valid');
  const passwordHash = await hashPassword(password, deps.config.PASSWORD_PBKDF2_ITERATIONS);
  await withTenant(deps.db, reset.tenant_id, async (tx) => {
    const now = new Date();
    const burned = await tx.passwordResetToken.updateMany({
      where: { id: reset.token_id, usedAt: null, supersededAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    // Lost a race with another redemption or a newer request: same 401 as any bad token.
    if (burned.count !== 1) throw unauthorized('reset token is not valid');
    // A link issued before the user was disabled is as dead as any other bad token.
    const written = await tx.user.updateMany({ where: { id: reset.user_id, status: 'active' }, data: { passwordHash, passwordUpdatedAt: now } });
    if (written.count !== 1) throw unauthorized('reset token is not valid');
    const sessions = await tx.userSession.updateMany({ where: { userId: reset.user_id, revokedAt: null }, data: { revokedAt: now } });
    await appendAudit(tx, reset.tenant_id, {
      actorType: 'user',
      actorId: reset.user_id,
      action: 'password_reset.completed',
      subjectType: 'user',
      subjectId: reset.user_id,
      payload: { sessions_revoked: sessions.count },
    });
  });
}

/**
 * Rotates the caller's own password. The current password must be proven (401 otherwise); every
 * other live session of the user is revoked, the calling one stays.
 */
export async function changeOwnPassword(
  deps: AppDeps,
  principal: { tenantId: string; userId: string; sessionId: string },
  currentPassword: string,
  newPassword: string,
  clientAddress: string,
) {
  const policy = passwordPolicyError(newPassword);
  if (policy) throw unprocessable(policy);
  const attempt = await spendPasswordAttempt(deps, clientAddress, { budget: 'passwordChange', key: principal.userId });
  const user = await withTenant(deps.db, principal.tenantId, (tx) => tx.user.findUniqueOrThrow({ where: { id: principal.userId } }));
  if (!(await verifyPassword(currentPassword, user.passwordHash))) throw unauthorized('current password is not correct');
  await attempt.succeeded();
  const passwordHash = await hashPassword(newPassword, deps.config.PASSWORD_PBKDF2_ITERATIONS);
  return withTenant(deps.db, principal.tenantId, async (tx) => {
    const now = new Date();
    // Write only over the hash the current password was proven against (row-locked to commit): a
    // concurrent change, reset or disable that committed first makes this one a 401 instead of
    // silently overwriting it.
    const written = await tx.user.updateMany({
      where: { id: principal.userId, passwordHash: user.passwordHash, status: 'active' },
      data: { passwordHash, passwordUpdatedAt: now },
    });
    if (written.count !== 1) throw unauthorized('current password is not correct');
    // The calling session stays; if it was revoked meanwhile there is no caller left to keep.
    const calling = await tx.userSession.count({ where: { id: principal.sessionId, revokedAt: null } });
    if (calling !== 1) throw unauthorized();
    const updated = await tx.user.findUniqueOrThrow({ where: { id: principal.userId } });
    const sessions = await tx.userSession.updateMany({
      where: { userId: principal.userId, revokedAt: null, id: { not: principal.sessionId } },
      data: { revokedAt: now },
    });
    await appendAudit(tx, principal.tenantId, {
      actorType: 'user',
      actorId: principal.userId,
      action: 'password.changed',
      subjectType: 'user',
      subjectId: principal.userId,
      payload: { other_sessions_revoked: sessions.count },
    });
    return userView(updated);
  });
}
