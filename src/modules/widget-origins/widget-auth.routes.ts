import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppDeps } from '../../deps';
import { clientAddress } from '../../lib/auth';
import type { AppEnv } from '../../lib/context';
import { RATE_BUDGETS } from '../../lib/rate-limit';
import { createRouter, errorResponses, jsonBody, jsonContent } from '../../lib/openapi';
import { AgentLoginBody, AgentLoginResponse, OriginHeader, WidgetConfigSchema } from './widget-auth.schemas';
import { agentLogin, widgetConfig } from './widget-auth.service';

const tags = ['Auth'];
const budget = RATE_BUDGETS.agentLogin;
const perAddress = RATE_BUDGETS.passwordAttemptsPerAddress;

/**
 * The answer depends on the Origin header and may carry a bearer: no shared cache may keep it or
 * serve it to another origin. Set before the route runs, so error answers carry it too.
 */
const perOriginNoStore: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.header('Cache-Control', 'no-store');
  c.header('Vary', 'Origin');
  await next();
};

const ORIGIN_NOTE = `No bearer: the tenant is the one whose enabled widget origin (GET /v1/widget_origins) equals the request's
\`Origin\` header, normalized the same way (lowercase scheme and host, default port dropped).`;

export function widgetAuthRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/auth/widget-config',
      tags,
      middleware: [perOriginNoStore],
      summary: 'Bootstrap configuration of the agent widget (public)',
      description: `${ORIGIN_NOTE} 200 \`{tenant: {name}, origins, agent_login: {path}, token_ttl_seconds, session_cap_seconds}\`:
the tenant's name, its enabled origins, where to log an agent in, and the widget token lifetimes; nothing secret and no ids.
A missing, malformed, unknown or disabled Origin is one identical 404 \`not_found\`; an origin of a suspended tenant is 403
\`forbidden\`. Every answer carries \`Vary: Origin\` and \`Cache-Control: no-store\`.`,
      request: { headers: OriginHeader },
      responses: { 200: jsonContent(WidgetConfigSchema, 'The widget configuration of the Origin'), ...errorResponses(403, 404) },
    }),
    async (c) => c.json(await widgetConfig(deps, c.req.valid('header').origin), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/agent-login',
      tags,
      middleware: [perOriginNoStore],
      summary: 'Agent (widget) login: returns a ddw_ widget token',
      description: `${ORIGIN_NOTE} The agent is the tenant's agent with \`email\` (case-insensitive); its widget-login password is set
by \`POST /v1/agents/{id}/credential\`. 200 \`{token, widget_token, agent}\`: \`token\` is the plaintext \`ddw_\` bearer, shown once;
\`widget_token.allowed_origin_id\` is the matched origin; the token lives WIDGET_TOKEN_TTL_SECONDS, renewable up to the
WIDGET_SESSION_CAP_SECONDS session cap. A login supersedes the agent's previous vigent widget tokens (revoked, reason
superseded_by_login); the agent's SIP endpoint is left alone since it keeps a vigent token. Unknown email, wrong password, an
agent without widget login and an inactive agent are one identical 401 \`unauthorized\` at equal hashing cost. A missing, unknown
or disabled Origin is the same 401 body, answered without hashing (origins are public configuration, not a secret). Correct
credentials of a suspended tenant are 403 \`forbidden\`. Before the password is hashed the attempt spends, across all API
processes, ${perAddress.points} failed attempts per client address per ${perAddress.durationSeconds} s (shared with dashboard login; a right password
gives its attempt back), ${budget.points} attempts per {tenant, email} per ${budget.durationSeconds / 60}-minute fixed window and the deployment's
LOGIN_HASHES_PER_SECOND; the first used up is 429 \`rate_limited\` with no hash. 400 \`bad_request\` for malformed
JSON, a missing or non-string email or password, or an unknown key. Audited as agent.widget_login (actor: the agent).
Every answer carries \`Vary: Origin\` and \`Cache-Control: no-store\`.`,
      request: { headers: OriginHeader, body: jsonBody(AgentLoginBody) },
      responses: { 200: jsonContent(AgentLoginResponse, 'Logged in'), ...errorResponses(400, 401, 403, 413, 415, 429) },
    }),
    async (c) => {
      const { email, password } = c.req.valid('json');
      return c.json(await agentLogin(deps, c.req.valid('header').origin, email, password, clientAddress(c, deps)), 200);
    },
  );

  return app;
}
