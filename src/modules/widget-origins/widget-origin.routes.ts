import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CreateWidgetOriginBody, WidgetOriginEnvelope, WidgetOriginList } from './widget-origin.schemas';
import { createWidgetOrigin, disableWidgetOrigin, enableWidgetOrigin, listWidgetOrigins } from './widget-origin.service';

const security = [{ bearer: [] }];
const tags = ['Widgets'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: an API key or a dashboard session; a `ddw_` widget token is 403 `forbidden`.';
const ID_NOTE = "Unknown, malformed or another tenant's id: 404 `not_found`.";
const ROLE = `Embed origins are where the agent widget may be embedded. An enabled origin belongs to one tenant platform-wide:
\`GET /v1/auth/widget-config\` and \`POST /v1/auth/agent-login\` resolve the tenant from the request's \`Origin\` header by it.
Disabling an origin stops both at once for that origin; widget tokens already minted stay valid (an origin narrows what the frame
is shown, it is not the token's auth boundary).`;

export function widgetOriginRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widget_origins',
      tags,
      security,
      middleware,
      summary: "The tenant's widget embed origins, oldest first",
      description: `Every origin, disabled ones included, in creation order (no pages: a tenant has a handful). ${SCOPE}`,
      responses: { 200: jsonContent(WidgetOriginList, 'The origins'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await listWidgetOrigins(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget_origins',
      tags,
      security,
      middleware,
      summary: 'Register a widget embed origin (enabled)',
      description: `\`origin\` is parsed as a WHATWG URL and must be exactly scheme://host[:port]: no path other than \`/\`, no query,
fragment or credentials; https, or http only for localhost and 127.0.0.1 (local development). It is stored canonical: lowercase
host, default port dropped, no trailing slash (\`HTTPS://CRM.Acme.example:443/\` is stored as \`https://crm.acme.example\`).
Anything else, and a label over 200 characters, is 422 \`unprocessable\`. 409 \`conflict\` when the tenant already has the origin
(enabled or disabled: enable it instead) or another tenant has it enabled. 400 \`bad_request\` for malformed JSON, a wrong type, a
missing origin or an unknown key. ${ROLE} ${SCOPE} Audited as widget_origin.created.`,
      request: { body: jsonBody(CreateWidgetOriginBody) },
      responses: { 201: jsonContent(WidgetOriginEnvelope, 'Registered'), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
    }),
    async (c) => c.json({ widget_origin: await createWidgetOrigin(deps, c.get('principal'), c.req.valid('json')) }, 201),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/widget_origins/{id}',
      tags,
      security,
      middleware,
      summary: 'Disable a widget embed origin (never deleted)',
      description: `Sets \`enabled\` false and \`disabled_at\`; the row stays. Idempotent: an already disabled origin answers 200
unchanged and records nothing. Once disabled, another tenant may register and enable the same origin. ${ROLE} ${ID_NOTE} ${SCOPE}
Audited as widget_origin.disabled.`,
      request: { params: IdParam },
      responses: { 200: jsonContent(WidgetOriginEnvelope, 'The disabled origin'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ widget_origin: await disableWidgetOrigin(deps, c.get('principal'), c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget_origins/{id}/enable',
      tags,
      security,
      middleware,
      summary: 'Enable a disabled widget embed origin again',
      description: `Sets \`enabled\` true and clears \`disabled_at\`. Idempotent: an enabled origin answers 200 unchanged and records
nothing. 409 \`conflict\` when another tenant has the same origin enabled meanwhile. ${ID_NOTE} ${SCOPE} Audited as
widget_origin.enabled.`,
      request: { params: IdParam },
      responses: { 200: jsonContent(WidgetOriginEnvelope, 'The enabled origin'), ...errorResponses(401, 403, 404, 409) },
    }),
    async (c) => c.json({ widget_origin: await enableWidgetOrigin(deps, c.get('principal'), c.req.valid('param').id) }, 200),
  );

  return app;
}
