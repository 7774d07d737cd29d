import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context';
import { forbidden } from './errors';

/**
 * The routes a `ddw_` widget token may call (SPEC Authentication item 3): everything else is 403
 * `forbidden`, decided before the route runs, so a new route is closed to widgets until it is
 * listed here. Each listed route scopes the widget to its own agent (own calls, own extension,
 * own seat, own token) in its own module.
 */
export const WIDGET_ALLOWLIST: ReadonlyArray<{ method: 'GET' | 'POST'; path: string }> = [
  { method: 'GET', path: '/v1/me' },
  { method: 'GET', path: '/v1/calls' },
  { method: 'GET', path: '/v1/calls/{call_id}' },
  ...(['hold', 'unhold', 'mute', 'unmute', 'hangup'] as const).map((verb) => ({ method: 'POST' as const, path: `/v1/calls/{call_id}/${verb}` })),
  ...(['listen', 'whisper', 'barge', 'takeover'] as const).map((mode) => ({ method: 'POST' as const, path: `/v1/supervision/calls/{call_id}/${mode}` })),
  { method: 'POST', path: '/v1/agents/checkin' },
  { method: 'POST', path: '/v1/agents/checkout' },
  { method: 'GET', path: '/v1/agents/{id}' },
  ...(['pause', 'resume', 'wrap-up'] as const).map((move) => ({ method: 'POST' as const, path: `/v1/agents/{id}/${move}` })),
  { method: 'POST', path: '/v1/widget_tokens/renew' },
  { method: 'POST', path: '/v1/widget_tokens/introspect' },
  { method: 'POST', path: '/v1/ws/ticket' },
];

const compiled = WIDGET_ALLOWLIST.map((r) => ({
  method: r.method,
  re: new RegExp(`^${r.path.replace(/\{[a-z_]+\}/g, '[^/]+')}$`),
}));

export function widgetMayCall(method: string, path: string): boolean {
  return compiled.some((r) => r.method === method && r.re.test(path));
}

/** Default-deny for widget principals; other principals pass. Runs after authentication. */
export const widgetAllowlist: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get('principal').kind === 'widget' && !widgetMayCall(c.req.method, c.req.path)) {
    throw forbidden('a widget token (ddw_) cannot call this route');
  }
  await next();
};
