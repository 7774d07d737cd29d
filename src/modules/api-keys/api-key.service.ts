import type { ApiKey } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { notFound } from '../../lib/errors';
import { createdAtKey, createdAtPageArgs, paginate } from '../../lib/pagination';
import { withTenant } from '../../lib/tenancy';
import { mintToken, sha256Hex } from '../../lib/tokens';

type Actor = { type: ActorType; id: string | null };

export function apiKeyView(k: ApiKey) {
  return { id: k.id, label: k.label, revoked_at: k.revokedAt?.toISOString() ?? null, created_at: k.createdAt.toISOString() };
}

export async function listApiKeys(deps: AppDeps, tenantId: string, limit: number, cursor?: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.apiKey.findMany(createdAtPageArgs(cursor, limit)));
  const { page, nextCursor } = paginate(rows, limit, createdAtKey);
  return { api_keys: page.map(apiKeyView), next_cursor: nextCursor };
}

export function createApiKey(deps: AppDeps, tenantId: string, actor: Actor, label: string) {
  const token = mintToken('dd_');
  return withTenant(deps.db, tenantId, async (tx) => {
    const key = await tx.apiKey.create({ data: { tenantId, label, tokenHash: sha256Hex(token) } });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'api_key.created',
      subjectType: 'api_key',
      subjectId: key.id,
    });
    return { api_key: apiKeyView(key), token };
  });
}

/** Sets revoked_at (idempotent); the next request with the key is 401. */
export function revokeApiKey(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  return withTenant(deps.db, tenantId, async (tx) => {
    const key = await tx.apiKey.findUnique({ where: { id } });
    if (!key) throw notFound();
    if (key.revokedAt) return apiKeyView(key);
    const revoked = await tx.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'api_key.revoked',
      subjectType: 'api_key',
      subjectId: id,
    });
    return apiKeyView(revoked);
  });
}
