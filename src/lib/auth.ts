import type { Context, MiddlewareHandler } from 'hono';
import type { AppDeps } from '../deps';
import { clientAddressOf } from './client-address';
import type { AppEnv, Principal } from './context';
import { forbidden, rateLimited, unauthorized } from './errors';
import { classifyBearer, safeEqual, sha256Hex } from './tokens';
import { widgetAllowlist } from './widget-allowlist';

export function bearerToken(c: Context): string | null {
  const header = c.req.header('authorization');
  if (!header) return null;
  // The scheme name is case-insensitive (RFC 7235).
  const match = /^Bearer ([^\s]+)$/i.exec(header);
  return match?.[1] ?? null;
}

interface ResolvedCredential {
  principal: Principal;
  tenantStatus: string;
}

type Resolver = (deps: AppDeps, tokenHash: string) => Promise<ResolvedCredential | null>;

const resolvers: Partial<Record<'dd_' | 'ddu_' | 'ddw_', Resolver>> = {
  async dd_(deps, tokenHash) {
    const { rows } = await deps.db.pool.query<{ api_key_id: string; tenant_id: string; tenant_status: string }>(
      'SELECT api_key_id, tenant_id, tenant_status FROM auth_resolve_api_key($1)',
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return { principal: { kind: 'api_key', tenantId: row.tenant_id, apiKeyId: row.api_key_id }, tenantStatus: row.tenant_status };
  },
  async ddu_(deps, tokenHash) {
    const { rows } = await deps.db.pool.query<{ session_id: string; user_id: string; tenant_id: string; tenant_status: string }>(
      'SELECT session_id, user_id, tenant_id, tenant_status FROM auth_resolve_session($1)',
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      principal: { kind: 'user', tenantId: row.tenant_id, userId: row.user_id, sessionId: row.session_id },
      tenantStatus: row.tenant_status,
    };
  },
  async ddw_(deps, tokenHash) {
    const { rows } = await deps.db.pool.query<{ widget_token_id: string; agent_id: string; tenant_id: string; tenant_status: string }>(
      'SELECT widget_token_id, agent_id, tenant_id, tenant_status FROM auth_resolve_widget_token($1)',
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      principal: { kind: 'widget', tenantId: row.tenant_id, widgetTokenId: row.widget_token_id, agentId: row.agent_id },
      tenantStatus: row.tenant_status,
    };
  },
};

/** Resolves a bearer to its principal; null for anything missing, malformed, unknown or revoked. */
export async function resolveBearer(deps: AppDeps, token: string | null): Promise<ResolvedCredential | null> {
  if (!token) return null;
  const kind = classifyBearer(token);
  const resolver = kind ? resolvers[kind] : undefined;
  if (!resolver) return null;
  // Every lookup hits the database: revocation is effective on the very next request.
  return resolver(deps, sha256Hex(token));
}

/** Tenant bearer authentication for the /v1 surface. */
export function authenticate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const resolved = await resolveBearer(deps, bearerToken(c));
    if (!resolved) throw unauthorized();
    if (resolved.tenantStatus !== 'active') throw forbidden('tenant is suspended');
    c.set('principal', resolved.principal);
    c.set('logger', c.get('logger').child({ tenant_id: resolved.principal.tenantId, principal: resolved.principal.kind }));
    await widgetAllowlist(c, next);
  };
}

/** Tenant-management routes: API keys and dashboard sessions; a widget token is 403. */
export const requireManagement: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('principal').kind === 'widget') throw forbidden('widget tokens cannot use management routes');
  await next();
};

/** Routes that act on the calling dashboard user (a ddu_ session). */
export const requireUserSession: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('principal').kind !== 'user') throw forbidden('this route needs a dashboard session (ddu_)');
  await next();
};

/** The request's client address under the deployment's TRUSTED_PROXIES (the key of per-address budgets). */
export function clientAddress(c: Context, deps: AppDeps): string {
  return clientAddressOf(c, deps.config.trustedProxies);
}

/**
 * Operator bearer for /v1/admin/*. Fails closed when ADMIN_API_TOKEN is unset. Every attempt is
 * counted per client address before the token is compared, in one atomic step in PostgreSQL, so
 * parallel guesses cannot all pass a check made before any of them was counted; a correct token gets
 * its point back, so only failures use up the budget. The address comes from TRUSTED_PROXIES: behind a
 * proxy a guesser is counted under its own address, never under the proxy's (which would lock out
 * the operator).
 */
export function adminAuth(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const presented = bearerToken(c);
    // No credential is no guess: a missing bearer is 401 and uses up nothing of the brake.
    if (!presented) throw unauthorized('operator credential required');
    const origin = clientAddress(c, deps);
    if (!(await deps.rateLimits.consume('adminAuthFailures', origin))) throw rateLimited();
    const expected = deps.config.ADMIN_API_TOKEN;
    if (!expected || !presented || !safeEqual(presented, expected)) throw unauthorized('operator credential required');
    await deps.rateLimits.refund('adminAuthFailures', origin);
    c.set('logger', c.get('logger').child({ principal: 'operator' }));
    await next();
  };
}
