import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { conflict, isUniqueViolation, notFound, unprocessable } from '../../lib/errors';
import { createdAtKey, createdAtPageArgs, paginate } from '../../lib/pagination';
import { hashPassword, passwordPolicyError } from '../../lib/passwords';
import { withTenant } from '../../lib/tenancy';
import { isEmail } from '../tenants/tenant.rules';
import { userView } from './user.views';

type Actor = { type: ActorType; id: string | null };

export async function getCurrentUser(deps: AppDeps, tenantId: string, userId: string) {
  const user = await withTenant(deps.db, tenantId, (tx) => tx.user.findUnique({ where: { id: userId } }));
  if (!user) throw notFound();
  return userView(user);
}

export async function listUsers(deps: AppDeps, tenantId: string, limit: number, cursor?: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.user.findMany(createdAtPageArgs(cursor, limit)));
  const { page, nextCursor } = paginate(rows, limit, createdAtKey);
  return { users: page.map(userView), next_cursor: nextCursor };
}

/**
 * The first user of a tenant is its account_admin (the person who bootstrapped it with the dd_
 * key); later users are members.
 */
export async function createUser(
  deps: AppDeps,
  tenantId: string,
  actor: Actor,
  input: { email: string; name?: string; password: string },
) {
  const email = input.email.trim().toLowerCase();
  if (!isEmail(email)) throw unprocessable('email is not a valid email address');
  const policy = passwordPolicyError(input.password);
  if (policy) throw unprocessable(policy);
  const passwordHash = await hashPassword(input.password, deps.config.PASSWORD_PBKDF2_ITERATIONS);
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      // Serializes user creation per tenant: two concurrent "first" users must not both see zero.
      await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
      const existing = await tx.user.count();
      const user = await tx.user.create({
        data: { tenantId, email, name: (input.name ?? '').trim(), passwordHash, role: existing === 0 ? 'account_admin' : 'member' },
      });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'user.created',
        subjectType: 'user',
        subjectId: user.id,
        payload: { role: user.role },
      });
      return userView(user);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('a user with this email already exists');
    throw err;
  }
}

/** Disable: every live session of the user is revoked in the same transaction. Idempotent. */
export function disableUser(deps: AppDeps, tenantId: string, actor: Actor, userId: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const user = await tx.user.findUnique({ where: { id: userId } });
    if (!user) throw notFound();
    if (user.status === 'disabled') return userView(user);
    const now = new Date();
    const updated = await tx.user.update({ where: { id: userId }, data: { status: 'disabled' } });
    const revoked = await tx.userSession.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now } });
    await tx.passwordResetToken.updateMany({ where: { userId, usedAt: null, supersededAt: null }, data: { supersededAt: now } });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'user.disabled',
      subjectType: 'user',
      subjectId: userId,
      payload: { sessions_revoked: revoked.count },
    });
    return userView(updated);
  });
}

/** Re-enable; sessions revoked by the disable stay revoked. Idempotent. */
export function enableUser(deps: AppDeps, tenantId: string, actor: Actor, userId: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const user = await tx.user.findUnique({ where: { id: userId } });
    if (!user) throw notFound();
    if (user.status === 'active') return userView(user);
    const updated = await tx.user.update({ where: { id: userId }, data: { status: 'active' } });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'user.enabled',
      subjectType: 'user',
      subjectId: userId,
    });
    return userView(updated);
  });
}
