import type { AppDeps } from '../../deps';
import { actorOf, appendAudit } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { conflict, notFound, unauthorized } from '../../lib/errors';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenant } from '../../lib/tenancy';
import { agentView } from '../agents/agent.views';
import { teardownAgentSip, type SipTeardown } from '../sip-credentials/sip-teardown.service';
import {
  insertWidgetToken,
  liveTokensOf,
  lockAgentForTokens,
  pageWidgetTokens,
  remainingSeconds,
  renewWidgetToken,
  revokeWidgetToken,
  type WidgetTokenTtl,
} from './widget-token.repository';
import type { CreateWidgetTokenInput, ListWidgetTokensFilters } from './widget-token.schemas';
import { widgetTokenView } from './widget-token.views';

/** widget_tokens.revoked_reason of a DELETE /v1/widget_tokens/{id}. */
export const REVOKED_BY_API = 'revoked_by_api';
/** agent_sip_credentials.revoked_reason when the agent's last vigent token was revoked. */
export const SIP_REVOKED_TOKEN_REVOKED = 'widget_token_revoked';

const SUBJECT = 'widget_token';

export const widgetTokenTtl = (deps: AppDeps): WidgetTokenTtl => ({
  tokenSeconds: deps.config.WIDGET_TOKEN_TTL_SECONDS,
  sessionSeconds: deps.config.WIDGET_SESSION_CAP_SECONDS,
});

/**
 * Mints a token for one agent. Under the agent's row lock: 404 for an unknown agent or an unknown,
 * foreign or disabled origin, then 409 for an inactive agent or one that already has a vigent
 * token (one vigent token per agent; revoke it first).
 */
export function mintWidgetToken(deps: AppDeps, principal: Principal, body: CreateWidgetTokenInput) {
  const { tenantId } = principal;
  const actor = actorOf(principal);
  return withTenant(deps.db, tenantId, async (tx) => {
    const agent = await lockAgentForTokens(tx, body.agent_id);
    if (!agent) throw notFound('agent_id: no agent of the tenant has this id');
    const originId = body.allowed_origin_id ?? null;
    if (originId !== null && !(await tx.widgetOrigin.findFirst({ where: { id: originId, enabled: true }, select: { id: true } }))) {
      throw notFound('allowed_origin_id: no enabled widget origin of the tenant has this id');
    }
    if (agent.status !== 'active') throw conflict('the agent is inactive');
    if ((await liveTokensOf(tx, agent.id)).length > 0) throw conflict('the agent already has a vigent widget token; revoke it first');
    const { row, token } = await insertWidgetToken(
      tx,
      tenantId,
      { agentId: agent.id, label: body.label ?? '', allowedOriginId: originId, issuedVia: 'tenant' },
      widgetTokenTtl(deps),
    );
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'widget_token.minted',
      subjectType: SUBJECT,
      subjectId: row.id,
      payload: {
        agent_id: agent.id,
        allowed_origin_id: originId,
        issued_via: 'tenant',
        expires_at: row.expiresAt.toISOString(),
        session_expires_at: row.sessionExpiresAt.toISOString(),
      },
    });
    return { widget_token: widgetTokenView(row), token };
  });
}

/** The tenant's tokens (revoked and expired included), newest first. */
export async function listWidgetTokens(deps: AppDeps, tenantId: string, q: ListWidgetTokensFilters) {
  const after = q.cursor ? decodeTimestampIdCursor(q.cursor) : null;
  const rows = await withTenant(deps.db, tenantId, (tx) => pageWidgetTokens(tx, { agentId: q.agent_id, after, limit: q.limit }));
  const { page, nextCursor } = paginate(rows, q.limit, (r) => [r.createdAt.toISOString(), r.id]);
  return { widget_tokens: page.map(widgetTokenView), next_cursor: nextCursor };
}

/**
 * Revokes a token (idempotent), then, after the commit, tears down the agent's SIP endpoint only
 * when no vigent token of the agent is left; a successor keeps it ('skipped').
 */
export async function revokeWidgetTokenById(deps: AppDeps, principal: Principal, id: string) {
  const { tenantId } = principal;
  const actor = actorOf(principal);
  const { row, successors } = await withTenant(deps.db, tenantId, async (tx) => {
    const found = await tx.widgetToken.findUnique({ where: { id } });
    if (!found) throw notFound();
    await lockAgentForTokens(tx, found.agentId);
    if (await revokeWidgetToken(tx, id, REVOKED_BY_API)) {
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'widget_token.revoked',
        subjectType: SUBJECT,
        subjectId: id,
        payload: { agent_id: found.agentId, reason: REVOKED_BY_API },
      });
    }
    const current = await tx.widgetToken.findUniqueOrThrow({ where: { id } });
    return { row: current, successors: (await liveTokensOf(tx, found.agentId)).length };
  });
  const sipTeardown: SipTeardown = successors > 0 ? 'skipped' : await teardownAgentSip(deps, tenantId, row.agentId, SIP_REVOKED_TOKEN_REVOKED);
  return { widget_token: widgetTokenView(row), sip_teardown: sipTeardown };
}

type WidgetPrincipal = Extract<Principal, { kind: 'widget' }>;

/** Slides the caller's own token: expires_at = min(now + TTL, session cap). 401 when it was revoked meanwhile. */
export function renewOwnWidgetToken(deps: AppDeps, principal: WidgetPrincipal) {
  const { tenantId, widgetTokenId } = principal;
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await renewWidgetToken(tx, widgetTokenId, deps.config.WIDGET_TOKEN_TTL_SECONDS);
    if (!row) throw unauthorized();
    await appendAudit(tx, tenantId, {
      actorType: 'agent',
      actorId: principal.agentId,
      action: 'widget_token.renewed',
      subjectType: SUBJECT,
      subjectId: widgetTokenId,
      payload: { expires_at: row.expiresAt.toISOString() },
    });
    return { widget_token: widgetTokenView(row) };
  });
}

/** The caller's widget session: its token, agent, tenant, surfaced origins and remaining lifetimes. */
export function introspectWidgetToken(deps: AppDeps, principal: WidgetPrincipal) {
  const { tenantId, widgetTokenId } = principal;
  return withTenant(deps.db, tenantId, async (tx) => {
    const token = await tx.widgetToken.findUnique({ where: { id: widgetTokenId } });
    const agent = await tx.agent.findUnique({ where: { id: principal.agentId } });
    const tenant = await tx.tenant.findUnique({ where: { id: tenantId }, select: { id: true, name: true } });
    if (!token || !agent || !tenant) throw unauthorized();
    const origins = await tx.widgetOrigin.findMany({
      where: { enabled: true, ...(token.allowedOriginId ? { id: token.allowedOriginId } : {}) },
      select: { id: true, origin: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    const left = await remainingSeconds(tx, token.id);
    return {
      widget_token: widgetTokenView(token),
      agent: agentView(agent),
      tenant,
      origins,
      expires_in: left.expiresIn,
      session_expires_in: left.sessionExpiresIn,
    };
  });
}
