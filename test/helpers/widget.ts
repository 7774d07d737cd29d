import type { OpenAPIHono } from '@hono/zod-openapi';
import { createLogger } from '../../src/lib/logger';
import { createRouter } from '../../src/lib/openapi';
import { errorHandler } from '../../src/lib/http-middleware';
import type { AppEnv } from '../../src/lib/context';

/**
 * The given routes behind a `ddw_` widget principal of the tenant: the harness cannot mint a
 * widget token yet, so the principal is installed the way authentication would.
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
