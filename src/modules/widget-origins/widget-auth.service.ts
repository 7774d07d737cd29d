import type { AppDeps } from '../../deps';
import { appendAudit } from '../../lib/audit';
import { forbidden, notFound, unauthorized } from '../../lib/errors';
import { verifyPassword } from '../../lib/passwords';
import { withTenant } from '../../lib/tenancy';
import { agentView } from '../agents/agent.views';
import { spendPasswordAttempt } from '../auth/password-attempts';
import { insertWidgetToken, revokeLiveTokensOf } from '../widgets/widget-token.repository';
import { widgetTokenTtl } from '../widgets/widget-token.service';
import { widgetTokenView } from '../widgets/widget-token.views';
import { agentByEmail } from './widget-auth.repository';
import { lockAgentById } from '../agents/agent.repository';
import { AGENT_LOGIN_PATH } from './widget-auth.schemas';
import { enabledOriginNamed, enabledOrigins, tenantByOrigin, type OriginTenant } from './widget-origin.repository';
import { normalizeOrigin } from './widget-origin.rules';

/** widget_tokens.revoked_reason of the tokens a new agent login replaces. */
export const REVOKED_SUPERSEDED_BY_LOGIN = 'superseded_by_login';
export const AGENT_LOGIN_LABEL = 'agent-login';

const INVALID_LOGIN = 'invalid email or password';
const NO_WIDGET = 'no widget is configured for this origin';

interface ResolvedOrigin {
  origin: string;
  tenant: OriginTenant;
}

/** The enabled origin and its tenant for a request's Origin header; null for missing, malformed or unknown. */
async function resolveOrigin(deps: AppDeps, header: string | undefined): Promise<ResolvedOrigin | null> {
  const origin = header === undefined ? null : normalizeOrigin(header);
  if (origin === null) return null;
  const tenant = await tenantByOrigin(deps.db, origin);
  return tenant ? { origin, tenant } : null;
}

/**
 * No, malformed, unknown and disabled Origin are one 404; a suspended tenant is 403 (the origin
 * already names it publicly, so saying so leaks nothing).
 */
export async function widgetConfig(deps: AppDeps, originHeader: string | undefined) {
  const resolved = await resolveOrigin(deps, originHeader);
  if (!resolved) throw notFound(NO_WIDGET);
  if (resolved.tenant.tenant_status !== 'active') throw forbidden('tenant is suspended');
  return withTenant(deps.db, resolved.tenant.tenant_id, async (tx) => {
    const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: resolved.tenant.tenant_id }, select: { name: true } });
    const origins = await enabledOrigins(tx);
    return {
      tenant: { name: tenant.name },
      origins: origins.map((o) => o.origin),
      agent_login: { path: AGENT_LOGIN_PATH },
      token_ttl_seconds: deps.config.WIDGET_TOKEN_TTL_SECONDS,
      session_cap_seconds: deps.config.WIDGET_SESSION_CAP_SECONDS,
    };
  });
}

/**
 * Email and password login of a widget agent; the tenant is the owner of the enabled origin the
 * request comes from. A missing, malformed, unknown or disabled Origin is the same 401 as a bad
 * credential, answered at once without hashing: the equal-cost rule hides which accounts exist, and
 * an origin is no secret (it is public configuration, served by GET /v1/auth/widget-config and seen
 * in every page that embeds the widget), so its fast answer tells nothing an attacker could not read
 * anyway, while hashing for it would let anyone buy PBKDF2 work with made-up origins. With a known
 * origin, unknown email, wrong password, login not enabled and inactive agent are one identical 401
 * after the same PBKDF2 work, and the budgets (client address, {tenant, email}, deployment) are spent
 * before it; a suspended tenant is 403 only once the credentials are proven.
 */
export async function agentLogin(deps: AppDeps, originHeader: string | undefined, email: string, password: string, clientAddress: string) {
  const normalized = email.trim().toLowerCase();
  const resolved = await resolveOrigin(deps, originHeader);
  if (!resolved) throw unauthorized(INVALID_LOGIN);
  const attempt = await spendPasswordAttempt(deps, clientAddress, { budget: 'agentLogin', key: `${resolved.tenant.tenant_id}:${normalized}` });
  const agent = await withTenant(deps.db, resolved.tenant.tenant_id, (tx) => agentByEmail(tx, normalized));
  const hash = agent?.loginPasswordHash ?? null;
  const passwordOk = await verifyPassword(password, hash ?? deps.decoyPasswordHash);
  if (!agent || hash === null || !passwordOk || agent.status !== 'active') throw unauthorized(INVALID_LOGIN);
  await attempt.succeeded();
  if (resolved.tenant.tenant_status !== 'active') throw forbidden('tenant is suspended');

  const tenantId = resolved.tenant.tenant_id;
  return withTenant(deps.db, tenantId, async (tx) => {
    // The password was proven against a hash read before this transaction: issue only if it is
    // still the agent's (a rotation or disable committed meanwhile would otherwise be outlived by
    // this token) and the origin is still enabled.
    const locked = await lockAgentById(tx, agent.id);
    if (!locked || locked.loginPasswordHash !== hash || locked.status !== 'active') throw unauthorized(INVALID_LOGIN);
    const origin = await enabledOriginNamed(tx, resolved.origin);
    if (!origin) throw unauthorized(INVALID_LOGIN);
    // The agent keeps a vigent token (the new one), so its SIP endpoint is not torn down.
    const superseded = await revokeLiveTokensOf(tx, agent.id, REVOKED_SUPERSEDED_BY_LOGIN);
    const { row, token } = await insertWidgetToken(
      tx,
      tenantId,
      { agentId: agent.id, label: AGENT_LOGIN_LABEL, allowedOriginId: origin.id, issuedVia: 'agent_login' },
      widgetTokenTtl(deps),
    );
    await appendAudit(tx, tenantId, {
      actorType: 'agent',
      actorId: agent.id,
      action: 'agent.widget_login',
      subjectType: 'agent',
      subjectId: agent.id,
      payload: { widget_token_id: row.id, origin_id: origin.id, origin: origin.origin, superseded_tokens: superseded },
    });
    return { token, widget_token: widgetTokenView(row), agent: agentView(locked) };
  });
}
