import type { Context, MiddlewareHandler } from 'hono';
import type { AppDeps } from '../deps';
import { clientAddressOf } from './client-address';
import { CredentialCache } from './credential-cache';
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

export interface ResolvedCredential {
  principal: Principal;
  tenantStatus: string;
  /** When the credential stops being valid by itself (a session's expiry), epoch ms. */
  notAfter?: number;
}

/** The per-process cache of resolved bearers (CREDENTIAL_CACHE_TTL_MS). */
export function createCredentialCache(ttlMs: number): CredentialCache<ResolvedCredential> {
  return new CredentialCache<ResolvedCredential>({ ttlMs });
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
    const { rows } = await deps.db.pool.query<{ session_id: string; user_id: string; tenant_id: string; tenant_status: string; expires_at: Date }>(
      'SELECT session_id, user_id, tenant_id, tenant_status, expires_at FROM auth_resolve_session($1)',
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      principal: { kind: 'user', tenantId: row.tenant_id, userId: row.user_id, sessionId: row.session_id },
      tenantStatus: row.tenant_status,
      notAfter: row.expires_at.getTime(),
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
  const tokenHash = sha256Hex(token);
  // A widget token's lookup also records its use (and its seat's session may end at any moment), so
  // it is resolved every time; keys and dashboard sessions are kept for the cache's second.
  const cache = kind === 'ddw_' ? undefined : deps.credentials;
  const cached = cache?.get(tokenHash);
  if (cached) return cached;
  const resolved = await resolver(deps, tokenHash);
  if (resolved) cache?.set(tokenHash, resolved.principal.tenantId, resolved, resolved.notAfter);
  return resolved;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A write request may have revoked, suspended or disabled what a cached credential rests on (a key
 * deleted, a session logged out, a password changed, a user or agent disabled, a tenant suspended
 * by the operator) or changed a cached tenant row (a rename, the operator's settings): once it has
 * run, this process forgets the credentials and tenant rows it could have touched, so the next
 * request of any client of this process is judged by the database. `tenantId` null: the request
 * had no tenant bearer (auth and operator routes), so every tenant's are forgotten.
 */
export async function forgetCachedAfterWrite(deps: AppDeps, c: Context, tenantId: string | null, next: () => Promise<unknown>): Promise<void> {
  if (READS.has(c.req.method)) {
    await next();
    return;
  }
  try {
    await next();
  } finally {
    for (const cache of [deps.credentials, deps.tenantRows]) {
      if (tenantId) cache?.forgetTenant(tenantId);
      else cache?.clear();
    }
  }
}

/** Tenant bearer authentication for the /v1 surface. */
export function authenticate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const resolved = await resolveBearer(deps, bearerToken(c));
    if (!resolved) throw unauthorized();
    if (resolved.tenantStatus !== 'active') throw forbidden('tenant is suspended');
    c.set('principal', resolved.principal);
    c.set('logger', c.get('logger').child({ tenant_id: resolved.principal.tenantId, principal: resolved.principal.kind }));
    await forgetCachedAfterWrite(deps, c, resolved.principal.tenantId, () => widgetAllowlist(c, next));
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
