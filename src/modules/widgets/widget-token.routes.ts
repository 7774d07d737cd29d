import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import type { AppEnv, Principal } from '../../lib/context';
import { forbidden, rateLimited } from '../../lib/errors';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { RATE_BUDGETS } from '../../lib/rate-limit';
import {
  CreateWidgetTokenBody,
  ListWidgetTokensQuery,
  MintedWidgetToken,
  RevokedWidgetToken,
  WIDGET_TOKEN_LABEL_MAX_CHARS,
  WidgetIntrospection,
  WidgetTokenEnvelope,
  WidgetTokenList,
} from './widget-token.schemas';
import { introspectWidgetToken, listWidgetTokens, mintWidgetToken, renewOwnWidgetToken, revokeWidgetTokenById } from './widget-token.service';

const security = [{ bearer: [] }];
const tags = ['Widgets'];

const SCOPE = 'Tenant-management scope: an API key or a dashboard session; a `ddw_` widget token is 403 `forbidden`.';
const OWN_TOKEN = `Authenticated by the \`ddw_\` token itself and acting only on it; any other credential (API key, dashboard
session) is 403 \`forbidden\`. A revoked or expired token is 401 \`unauthorized\`.`;
const MINT = RATE_BUDGETS.widgetTokenMint;
const RENEW = RATE_BUDGETS.widgetTokenRenew;

type WidgetPrincipal = Extract<Principal, { kind: 'widget' }>;

/** The caller as a widget principal; 403 for any other credential. */
function widgetPrincipal(p: Principal): WidgetPrincipal {
  if (p.kind !== 'widget') throw forbidden('this route is for a widget token (ddw_) acting on itself');
  return p;
}

const requireWidget: MiddlewareHandler<AppEnv> = async (c, next) => {
  widgetPrincipal(c.get('principal'));
  await next();
};

/**
 * Rate brakes run as route middleware, ahead of body validation, so an exhausted budget answers
 * 429 whatever the body holds.
 */
function mintBudget(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!(await deps.rateLimits.consume('widgetTokenMint', c.get('principal').tenantId))) {
      throw rateLimited('the widget token mint budget of the tenant is used up; retry with backoff');
    }
    await next();
  };
}

function renewBudget(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!(await deps.rateLimits.consume('widgetTokenRenew', widgetPrincipal(c.get('principal')).widgetTokenId))) {
      throw rateLimited('the renew budget of this token is used up; retry with backoff');
    }
    await next();
  };
}

export function widgetTokenRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget_tokens',
      tags,
      security,
      middleware: [requireManagement, mintBudget(deps)],
      summary: 'Mint a widget token (ddw_) for an agent; the plaintext is shown once',
      description: `Body \`{agent_id (required), label (default empty, at most ${WIDGET_TOKEN_LABEL_MAX_CHARS} characters), allowed_origin_id}\`.
The plaintext \`ddw_\` bearer is in \`token\` of this answer only (its sha256 is stored). Lifetimes are server-set: \`expires_at\` =
now + WIDGET_TOKEN_TTL_SECONDS (1 h), \`session_expires_at\` = now + WIDGET_SESSION_CAP_SECONDS (12 h, at most the 24 h
ceiling); renew slides \`expires_at\` up to the cap. One vigent (unrevoked, unexpired) token per agent: minting while one exists
is 409 \`conflict\` (revoke it first; agent login supersedes instead). Mints for one agent are serialized on the agent's row.

Checks in this order: 429 \`rate_limited\` when the tenant's budget (${MINT.points} mints per ${MINT.durationSeconds} s, fixed
window) is used up, before anything else; 400 \`bad_request\` for malformed JSON, a wrong type, a non-UUID id, a label over
${WIDGET_TOKEN_LABEL_MAX_CHARS} characters or an unknown key (named); 404 \`not_found\` for an agent_id that is unknown or another
tenant's, and for an allowed_origin_id that is unknown, another tenant's or disabled; 409 \`conflict\` for an inactive agent or
one that already has a vigent token. Audited as widget_token.minted (never the token). ${SCOPE}`,
      request: { body: jsonBody(CreateWidgetTokenBody) },
      responses: {
        201: jsonContent(MintedWidgetToken, 'Minted; `token` is shown only here'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429),
      },
    }),
    async (c) => c.json(await mintWidgetToken(deps, c.get('principal'), c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widget_tokens',
      tags,
      security,
      middleware: [requireManagement],
      summary: "The tenant's widget tokens, newest first",
      description: `Revoked and expired tokens included. Optional \`agent_id\` filter. Keyset pages: \`limit\` (default 100, max 1000;
above, zero or not an integer is 400 \`bad_request\`) and the opaque \`cursor\` from \`next_cursor\` (null on the last page; a
cursor that does not decode is 400). A non-UUID agent_id is 400. Neither a plaintext nor a hash is ever listed. ${SCOPE}`,
      request: { query: ListWidgetTokensQuery },
      responses: { 200: jsonContent(WidgetTokenList, 'A page of tokens'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await listWidgetTokens(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/widget_tokens/{id}',
      tags,
      security,
      middleware: [requireManagement],
      summary: 'Revoke a widget token (idempotent) and tear down the SIP endpoint it leaves unused',
      description: `Sets \`revoked_at\` (the token is 401 from its next request) unless already set; tokens are never deleted.
Audited as widget_token.revoked the first time. Then \`sip_teardown\`: when the agent is left with no vigent token, its SIP
endpoint is torn down (every live ephemeral SIP credential revoked in the database, then the registration dropped on the switch,
audited as agent.sip_teardown): \`ok\`, or \`failed\` when the switch could not be reached (the revocation stands but the switch
keeps accepting the credential until its 24 h autoexpiry; repeating the DELETE retries). When the agent still has a vigent token
(a successor) nothing is torn down: \`skipped\`. An unknown, malformed or another tenant's id is 404 \`not_found\`. ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(RevokedWidgetToken, 'The revoked token and the SIP teardown outcome'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json(await revokeWidgetTokenById(deps, c.get('principal'), c.req.valid('param').id), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget_tokens/renew',
      tags,
      security,
      middleware: [requireWidget, renewBudget(deps)],
      summary: "Slide the caller's own widget token forward",
      description: `No body. Sets \`expires_at\` = min(now + WIDGET_TOKEN_TTL_SECONDS, \`session_expires_at\`): it slides forward but
never past the session cap fixed at mint; past the cap the token expires and a new one is needed. 429 \`rate_limited\` when the
token's budget (${RENEW.points} renewals per ${RENEW.durationSeconds} s, fixed window, counted per token) is used up. Audited as
widget_token.renewed. ${OWN_TOKEN}`,
      responses: { 200: jsonContent(WidgetTokenEnvelope, 'The renewed token'), ...errorResponses(401, 403, 429) },
    }),
    async (c) => c.json(await renewOwnWidgetToken(deps, widgetPrincipal(c.get('principal'))), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget_tokens/introspect',
      tags,
      security,
      middleware: [requireWidget],
      summary: "The caller's own widget session context",
      description: `No body. Answers \`{widget_token, agent, tenant: {id, name}, origins: [{id, origin}], expires_in,
session_expires_in}\`: the token (WidgetToken), its agent (Agent), the tenant, the tenant's enabled embed origins narrowed to the
token's \`allowed_origin_id\` when it has one (empty when that origin is disabled), and the whole seconds left until
\`expires_at\` and until \`session_expires_at\`. Changes nothing. ${OWN_TOKEN}`,
      responses: { 200: jsonContent(WidgetIntrospection, 'The widget session'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await introspectWidgetToken(deps, widgetPrincipal(c.get('principal'))), 200),
  );

  return app;
}
