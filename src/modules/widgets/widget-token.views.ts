import type { WidgetToken } from '../../../prisma/generated/client';

/** SPEC "WidgetToken", in its order; issued_via, revoked_reason and the hash stay internal. */
export function widgetTokenView(t: WidgetToken) {
  return {
    id: t.id,
    agent_id: t.agentId,
    label: t.label,
    allowed_origin_id: t.allowedOriginId,
    expires_at: t.expiresAt.toISOString(),
    session_expires_at: t.sessionExpiresAt.toISOString(),
    revoked_at: t.revokedAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}
