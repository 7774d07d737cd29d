import type { AppDeps } from '../../deps';
import { actorOf, appendAudit } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { conflict, notFound, unprocessable } from '../../lib/errors';
import { hashPassword, passwordPolicyError } from '../../lib/passwords';
import { withTenant } from '../../lib/tenancy';
import { agentView } from '../agents/agent.views';
import { teardownAgentSip, type SipTeardown } from '../sip-credentials/sip-teardown.service';
import { lockAgentById } from '../agents/agent.repository';
import { revokeLiveTokensOf } from './widget-token.repository';

/** widget_tokens.revoked_reason (and the SIP teardown reason) of a credential change. */
export const REVOKED_CREDENTIAL_ROTATED = 'credential_rotated';
export const REVOKED_CREDENTIAL_DISABLED = 'credential_disabled';

/**
 * Sets or rotates the agent's widget-login password. The policy is checked before anything is
 * read or written. A rotation revokes every vigent token of the agent and then tears down its SIP
 * endpoint (after the commit: the teardown runs a workflow); a first set has nothing to revoke.
 */
export async function setAgentCredential(deps: AppDeps, principal: Principal, agentId: string, password: string) {
  const policy = passwordPolicyError(password);
  if (policy) throw unprocessable(policy);
  const passwordHash = await hashPassword(password, deps.config.PASSWORD_PBKDF2_ITERATIONS);
  const { tenantId } = principal;
  const actor = actorOf(principal);
  const { agent, rotated } = await withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockAgentById(tx, agentId);
    if (!row) throw notFound();
    if (row.status !== 'active') throw conflict('the agent is inactive: its widget login cannot be set');
    const rotation = row.loginPasswordHash !== null;
    const updated = await tx.agent.update({ where: { id: agentId }, data: { loginPasswordHash: passwordHash, loginPasswordSetAt: new Date() } });
    const revoked = rotation ? await revokeLiveTokensOf(tx, agentId, REVOKED_CREDENTIAL_ROTATED) : [];
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: rotation ? 'agent.credential_rotated' : 'agent.credential_set',
      subjectType: 'agent',
      subjectId: agentId,
      payload: { widget_tokens_revoked: revoked },
    });
    return { agent: updated, rotated: rotation };
  });
  const sipTeardown: SipTeardown = rotated ? await teardownAgentSip(deps, tenantId, agentId, REVOKED_CREDENTIAL_ROTATED) : 'skipped';
  return { agent: agentView(agent), sip_teardown: sipTeardown };
}

/**
 * Disables widget login: the hash is cleared, every vigent token of the agent revoked and its SIP
 * endpoint torn down. Already disabled: 'skipped', nothing written.
 */
export async function disableAgentCredential(deps: AppDeps, principal: Principal, agentId: string) {
  const { tenantId } = principal;
  const actor = actorOf(principal);
  const { agent, disabled } = await withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockAgentById(tx, agentId);
    if (!row) throw notFound();
    if (row.loginPasswordHash === null) return { agent: row, disabled: false };
    const updated = await tx.agent.update({ where: { id: agentId }, data: { loginPasswordHash: null, loginPasswordSetAt: null } });
    const revoked = await revokeLiveTokensOf(tx, agentId, REVOKED_CREDENTIAL_DISABLED);
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'agent.credential_disabled',
      subjectType: 'agent',
      subjectId: agentId,
      payload: { widget_tokens_revoked: revoked },
    });
    return { agent: updated, disabled: true };
  });
  const sipTeardown: SipTeardown = disabled ? await teardownAgentSip(deps, tenantId, agentId, REVOKED_CREDENTIAL_DISABLED) : 'skipped';
  return { agent: agentView(agent), sip_teardown: sipTeardown };
}
