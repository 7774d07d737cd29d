import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { conflict, isUniqueViolation } from '../../lib/errors';
import { withTenant } from '../../lib/tenancy';
import { DEFAULT_POLICY, readPolicy, type CompliancePolicy } from './compliance.policy';

export async function getPolicy(deps: AppDeps, tenantId: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.compliancePolicyVersion.findFirst({ orderBy: { version: 'desc' } }));
  if (!row) return { version: 0, policy: DEFAULT_POLICY, actor: null, created_at: null };
  return { version: row.version, policy: readPolicy(row.policy), actor: row.actor, created_at: row.createdAt.toISOString() };
}

/**
 * Stores a new version (the old ones stay: decisions cite them). Two concurrent writers cannot
 * both take the same number: the loser gets 409 and retries with what the winner wrote.
 */
export async function putPolicy(deps: AppDeps, tenantId: string, actor: { type: ActorType; id: string }, policy: CompliancePolicy) {
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      const latest = await tx.compliancePolicyVersion.findFirst({ orderBy: { version: 'desc' }, select: { version: true } });
      const version = (latest?.version ?? 0) + 1;
      const row = await tx.compliancePolicyVersion.create({
        data: { tenantId, version, policy: policy, actor: `${actor.type}:${actor.id}` },
      });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'compliance_policy.updated',
        subjectType: 'compliance_policy',
        subjectId: String(version),
        payload: { version, policy },
      });
      return { version, policy, actor: row.actor, created_at: row.createdAt.toISOString() };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('the policy changed concurrently; read it again and retry');
    throw err;
  }
}
