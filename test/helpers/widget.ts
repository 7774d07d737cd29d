import type { OpenAPIHono } from '@hono/zod-openapi';
import { createLogger } from '../../src/lib/logger';
import { createRouter } from '../../src/lib/openapi';
import { errorHandler } from '../../src/lib/http-middleware';
import type { AppEnv } from '../../src/lib/context';
import { withTenant } from '../../src/lib/tenancy';
import { insertWidgetToken } from '../../src/modules/widgets/widget-token.repository';
import type { TestApp } from './harness';

/**
 * The given routes behind a `ddw_` widget principal of the tenant, installed the way
 * authentication would but WITHOUT the widget allowlist in front: proves a module's own scope
 * check (defense in depth), where the allowlist alone would answer 403 first.
 */
export function widgetRouter(tenant: { tenantId: string; adminAgentId: string }, routes: OpenAPIHono<AppEnv>): OpenAPIHono<AppEnv> {
  const router = createRouter();
  router.use('*', async (ctx, next) => {
    ctx.set('logger', createLogger('silent'));
    ctx.set('principal', { kind: 'widget', tenantId: tenant.tenantId, widgetTokenId: 'w1', agentId: tenant.adminAgentId });
    await next();
  });
  router.onError(errorHandler());
  router.route('/', routes);
  return router;
}

/**
 * A real `ddw_` token of the agent written straight into the database (what POST /v1/widget_tokens
 * does, without its route): for tests of routes a widget calls.
 */
export async function insertAgentWidgetToken(app: TestApp, tenantId: string, agentId: string, ttl = { tokenSeconds: 3600, sessionSeconds: 7200 }) {
  const { row, token } = await withTenant(app.deps.db, tenantId, (tx) =>
    insertWidgetToken(tx, tenantId, { agentId, label: 'test', allowedOriginId: null, issuedVia: 'tenant' }, ttl),
  );
  return { id: row.id, token };
}
