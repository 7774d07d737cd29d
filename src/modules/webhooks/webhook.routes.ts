import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { EVENT_CATALOG } from '../../lib/events';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { DISABLED_BY_API, URL_MAX_CHARS } from './webhook.rules';
import { CreateWebhookBody, ListWebhooksQuery, PatchWebhookBody, WebhookEnvelope, WebhookList, WebhookWithSecret } from './webhook.schemas';
import { createWebhook, disableWebhook, getWebhook, listWebhooks, rotateWebhookSecret, updateWebhook } from './webhook.service';

const security = [{ bearer: [] }];
const tags = ['Webhooks'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`, as is a suspended tenant; a missing or bad credential is 401.';
const ID_NOTE = 'An unknown id, an id of another tenant and a non-UUID id are the same 404 `not_found`.';

const URL_RULES = `\`url\` passes the egress check: https on port 443, no user or password in it, a host name (an IP literal,
\`localhost\`, a single-label name, an internal suffix such as .local/.internal/.lan/.corp/.home.arpa, or a cloud-metadata name is
refused) that resolves, and only to public addresses (loopback, RFC 1918, CGNAT 100.64/10, link-local, unique-local, multicast,
0.0.0.0/8, documentation, reserved and metadata addresses, IPv4-mapped forms included, are refused; a name with one public and one
private address is refused). A refusal is 400 \`invalid\` with a message naming \`url\` and the rule (never the resolved
addresses). At most ${URL_MAX_CHARS} characters. The stored url is the normalized form (lowercase host, path at least \`/\`).
The check runs again on every delivery against the address actually connected to, so a name re-pointed at a private address later
gets nothing. Origins listed in the deployment setting EGRESS_ALLOWLIST (development and tests) skip the https, port and address rules.`;

const EVENTS_RULES = `\`events\` is a non-empty, duplicate-free subset of the v1 catalog (${EVENT_CATALOG.join(', ')}); an empty
list, an unknown name or a repeated name is 400 \`invalid\` naming it.`;

const BODY_ERRORS = `Errors: 400 \`bad_request\` for malformed JSON, a wrong JSON type or an unknown key (named in the message:
\`tenant_id\` and \`secret\` included); 400 \`invalid\` for a rule on url or events; 413 over 8 MiB; 415 when the body is not JSON.`;

const SECRET_NOTE = `The signing secret (\`whsec_\` then 256 random bits, base64url) is in \`secret\` of this response and nowhere
else: it is stored encrypted, and every other answer shows only \`secret_hint\` (its last 4 characters). Each delivery carries
\`X-DD-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">\` keyed with the whole \`whsec_…\` string.`;

export function webhookRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/webhooks',
      tags,
      security,
      middleware,
      summary: 'Outbound webhook endpoints of the tenant (disabled ones included), oldest first',
      description: `Keyset pages: \`limit\` (default 100, max 1000; above, zero or not an integer is 400 \`bad_request\`) and the
opaque \`cursor\` from \`next_cursor\` (null on the last page; a cursor that does not decode is 400 \`bad_request\`). Secrets are
never listed. ${SCOPE}`,
      request: { query: ListWebhooksQuery },
      responses: { 200: jsonContent(WebhookList, 'A page of endpoints'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await listWebhooks(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/webhooks',
      tags,
      security,
      middleware,
      summary: 'Register an outbound webhook endpoint (its signing secret is shown once)',
      description: `Body \`{url, events}\`, both required. The endpoint starts enabled; deliveries of the subscribed events start
with the next fact announced. ${URL_RULES}

${EVENTS_RULES}

${SECRET_NOTE}

Audit entry \`webhook.created\` (url, events, secret_hint; never the secret). ${BODY_ERRORS} ${SCOPE}`,
      request: { body: jsonBody(CreateWebhookBody) },
      responses: { 201: jsonContent(WebhookWithSecret, 'Registered; `secret` is shown only here'), ...errorResponses(400, 401, 403, 413, 415) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await createWebhook(deps, principal.tenantId, actorOf(principal), c.req.valid('json')), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/webhooks/{id}',
      tags,
      security,
      middleware,
      summary: 'An outbound webhook endpoint (enabled or not)',
      description: `${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(WebhookEnvelope, 'The endpoint'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ webhook: await getWebhook(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/webhooks/{id}',
      tags,
      security,
      middleware,
      summary: 'Change the url, the events or the enabled flag of an endpoint',
      description: `Optional \`url\`, \`events\`, \`enabled\`; absent keys are unchanged, and a patch that changes nothing writes
nothing. The same rules as the registration: ${URL_RULES}

${EVENTS_RULES}

\`enabled: true\` re-enables the endpoint and clears \`disabled_reason\` (whatever disabled it: the API or a receiver's 410);
deliveries cancelled while it was disabled stay cancelled. \`enabled: false\` disables it with \`disabled_reason\`
\`${DISABLED_BY_API}\` and, in the same transaction, cancels its pending deliveries: nothing more is sent to it. A new url applies
to deliveries still pending. The secret cannot be set (400 \`bad_request\`): use rotate-secret.

Audit entry \`webhook.updated\` (the changed fields, and the number of cancelled deliveries when it disables). ${ID_NOTE}
${BODY_ERRORS} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(PatchWebhookBody) },
      responses: { 200: jsonContent(WebhookEnvelope, 'The updated endpoint'), ...errorResponses(400, 401, 403, 404, 413, 415) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ webhook: await updateWebhook(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json')) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/webhooks/{id}',
      tags,
      security,
      middleware,
      summary: 'Disable an endpoint (idempotent; the row is kept)',
      description: `Sets \`enabled: false\` with \`disabled_reason\` \`${DISABLED_BY_API}\` (over a receiver's 410 reason too) and,
in the same transaction, cancels its pending deliveries. The endpoint stays readable and can be re-enabled with PATCH
\`enabled: true\`; endpoints are never deleted (their deliveries are evidence of what was sent where). Disabling an endpoint already
disabled by the API answers the same 200 and records nothing new. Audit entry \`webhook.disabled\`. ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(WebhookEnvelope, 'The disabled endpoint'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ webhook: await disableWebhook(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{id}/rotate-secret',
      tags,
      security,
      middleware,
      summary: 'Mint a new signing secret (shown once); the old one keeps signing for the rotation window',
      description: `No body. The new secret signs every delivery from now on (\`X-DD-Signature\`); the secret it replaces keeps
signing alongside it (\`X-DD-Signature-Previous\`, same construction) until \`previous_secret_expires_at\`: now plus the deployment
setting WEBHOOK_ROTATION_WINDOW_HOURS (24 hours by default). Only one previous secret is kept: a second rotation inside the window
retires the secret it replaces with a fresh window and drops the older previous secret at once, so deploy each new secret before
rotating again. Allowed on a disabled endpoint. ${SECRET_NOTE}

Audit entry \`webhook.secret_rotated\` (the new and previous secret hints and the expiry; never a secret). ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(WebhookWithSecret, 'Rotated; `secret` is shown only here'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await rotateWebhookSecret(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id), 200);
    },
  );

  return app;
}
