import type { Principal } from './context';
import { forbidden } from './errors';
import type { Tx } from './tenancy';

/**
 * Account-wide resources (scope empresa: SMS providers, carriers) are the account's, not the
 * tenant's: only a person holding account_admin may create or act on one. A dd_ key carries no
 * user, so it can never qualify.
 */
export async function assertAccountAdmin(tx: Tx, principal: Principal, what: string): Promise<void> {
  if (principal.kind !== 'user') throw forbidden(`${what} needs a dashboard session (ddu_) of an account_admin user`);
  const user = await tx.user.findUnique({ where: { id: principal.userId }, select: { role: true, status: true } });
  if (user?.role !== 'account_admin' || user.status !== 'active') throw forbidden(`${what} needs the account_admin role`);
}
