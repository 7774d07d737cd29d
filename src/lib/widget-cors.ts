import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { AppDeps } from '../deps';
import type { AppEnv } from './context';

/**
 * CORS for the embedded widget: a browser page on an origin that some tenant has ENABLED as a
 * widget origin may call the API (its agent-login, widget-config and ddw_ routes); any other
 * origin gets no CORS headers, so the browser keeps the answer from the page. Credentials travel
 * as bearer headers, never cookies, so Allow-Credentials stays off. Which tenant the origin
 * belongs to does not matter here: the bearer (or, for the auth routes, the origin itself) decides.
 */
/** One `Origin` in Vary even when a route says it too (the widget auth routes do). */
function dedupeVary(headers: Headers): void {
  const vary = headers.get('Vary');
  if (!vary) return;
  const seen = new Map<string, string>();
  for (const v of vary.split(',').map((x) => x.trim()).filter(Boolean)) if (!seen.has(v.toLowerCase())) seen.set(v.toLowerCase(), v);
  headers.set('Vary', [...seen.values()].join(', '));
}

export function widgetCors(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const inner = cors({
    origin: async (origin) => {
      if (!origin) return null;
      const { rows } = await deps.db.pool.query('SELECT 1 FROM auth_tenant_by_widget_origin($1) LIMIT 1', [origin]);
      return rows.length ? origin : null;
    },
    allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: ['Authorization', 'Content-Type', 'X-Request-ID'],
    exposeHeaders: ['X-Request-ID'],
    maxAge: 600,
  });
  return async (c, next) => {
    const preflight = await inner(c, next);
    if (preflight) {
      dedupeVary(preflight.headers);
      return preflight;
    }
    dedupeVary(c.res.headers);
  };
}
