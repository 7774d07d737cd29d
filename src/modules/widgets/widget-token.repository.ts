import type { WidgetToken } from '../../../prisma/generated/client';
import { mintToken, sha256Hex } from '../../lib/tokens';
import type { Tx } from '../../lib/tenancy';

export type WidgetTokenIssuer = 'tenant' | 'agent_login';

export interface WidgetTokenTtl {
  /** Life of the token from mint or renew (WIDGET_TOKEN_TTL_SECONDS). */
  tokenSeconds: number;
  /** Hard cap counted from the mint (WIDGET_SESSION_CAP_SECONDS, at most the 24 h ceiling). */
  sessionSeconds: number;
}

export interface NewWidgetToken {
  agentId: string;
  label: string;
  allowedOriginId: string | null;
  issuedVia: WidgetTokenIssuer;
}

/**
 * Inserts one widget token and returns its row with the plaintext `ddw_` bearer (shown once; only
 * the sha256 is stored). Expiry is min(now + token TTL, session cap); both are computed by the
 * database clock so every API process agrees.
 */
export async function insertWidgetToken(tx: Tx, tenantId: string, input: NewWidgetToken, ttl: WidgetTokenTtl): Promise<{ row: WidgetToken; token: string }> {
  const token = mintToken('ddw_');
  const [inserted] = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO widget_tokens (tenant_id, agent_id, label, allowed_origin_id, token_hash, issued_via, expires_at, session_expires_at)
    VALUES (${tenantId}::uuid, ${input.agentId}::uuid, ${input.label}, ${input.allowedOriginId}::uuid, ${sha256Hex(token)}, ${input.issuedVia},
            least(now() + make_interval(secs => ${ttl.tokenSeconds}), now() + make_interval(secs => ${ttl.sessionSeconds})),
            now() + make_interval(secs => ${ttl.sessionSeconds}))
    RETURNING id`;
  const row = await tx.widgetToken.findUniqueOrThrow({ where: { id: inserted!.id } });
  return { row, token };
}

/** The agent's vigent tokens: not revoked, not expired. */
export function liveTokensOf(tx: Tx, agentId: string): Promise<WidgetToken[]> {
  return tx.$queryRaw<WidgetToken[]>`
    SELECT id FROM widget_tokens
     WHERE agent_id = ${agentId}::uuid AND revoked_at IS NULL AND expires_at > now() AND session_expires_at > now()`.then((rows) =>
    rows.length ? tx.widgetToken.findMany({ where: { id: { in: rows.map((r) => r.id) } } }) : [],
  );
}

/** Revokes every vigent token of the agent (reason recorded); returns the ids revoked. */
export async function revokeLiveTokensOf(tx: Tx, agentId: string, reason: string): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    UPDATE widget_tokens SET revoked_at = now(), revoked_reason = ${reason}
     WHERE agent_id = ${agentId}::uuid AND revoked_at IS NULL
    RETURNING id`;
  return rows.map((r) => r.id);
}

/**
 * Locks the agent's row for the rest of the transaction: every mint and revoke of the agent's
 * tokens takes it first, so "no vigent token" is decided by one writer at a time. null when the
 * tenant has no such agent.
 */
export async function lockAgentForTokens(tx: Tx, agentId: string): Promise<{ id: string; status: string } | null> {
  const rows = await tx.$queryRaw<{ id: string; status: string }[]>`SELECT id, status FROM agents WHERE id = ${agentId}::uuid FOR UPDATE`;
  return rows[0] ?? null;
}

/** Revokes one token unless it already is; true when this call revoked it. */
export async function revokeWidgetToken(tx: Tx, id: string, reason: string): Promise<boolean> {
  const changed = await tx.$executeRaw`
    UPDATE widget_tokens SET revoked_at = now(), revoked_reason = ${reason} WHERE id = ${id}::uuid AND revoked_at IS NULL`;
  return changed > 0;
}

/**
 * Slides a live token's expiry to min(now + TTL, session cap) by the database clock; null when the
 * token was revoked (or ran out) since its bearer was resolved.
 */
export async function renewWidgetToken(tx: Tx, id: string, tokenSeconds: number): Promise<WidgetToken | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    UPDATE widget_tokens SET expires_at = least(now() + make_interval(secs => ${tokenSeconds}), session_expires_at)
     WHERE id = ${id}::uuid AND revoked_at IS NULL AND expires_at > now() AND session_expires_at > now()
    RETURNING id`;
  return rows.length ? tx.widgetToken.findUnique({ where: { id } }) : null;
}

/** Whole seconds the token has left, to expires_at and to the session cap, by the database clock (0 once past). */
export async function remainingSeconds(tx: Tx, id: string): Promise<{ expiresIn: number; sessionExpiresIn: number }> {
  const [row] = await tx.$queryRaw<{ expires_in: number; session_expires_in: number }[]>`
    SELECT greatest(0, floor(extract(epoch FROM expires_at - now())))::int AS expires_in,
           greatest(0, floor(extract(epoch FROM session_expires_at - now())))::int AS session_expires_in
      FROM widget_tokens WHERE id = ${id}::uuid`;
  return { expiresIn: row?.expires_in ?? 0, sessionExpiresIn: row?.session_expires_in ?? 0 };
}

/** A page of the tenant's tokens, newest first, keyset on (created_at, id) descending. */
export function pageWidgetTokens(tx: Tx, filters: { agentId?: string; after: { at: Date; id: string } | null; limit: number }): Promise<WidgetToken[]> {
  const { after } = filters;
  return tx.widgetToken.findMany({
    where: {
      ...(filters.agentId ? { agentId: filters.agentId } : {}),
      ...(after ? { OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { lt: after.id } }] } : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: filters.limit + 1,
  });
}
