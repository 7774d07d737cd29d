import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CreateInboundRouteBody, InboundRouteEnvelope, InboundRouteList, InboundRouteProvisioned, PatchInboundRouteBody } from './inbound-route.schemas';
import { createInboundRoute, disableInboundRoute, getInboundRoute, listInboundRoutes, provisionInboundRoute, updateInboundRoute } from './inbound-route.service';

const security = [{ bearer: [] }];
const tags = ['Inbound routes'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`, as is a suspended tenant; a missing or bad credential is 401.';
const ID_NOTE = 'An unknown id, an id of another tenant and a non-UUID id are the same 404 `not_found`.';
const RULES = `Destination rules (422 \`unprocessable\` when broken): \`agent\` bridges to the registered agent, and \`dest_ref\` must be the
sip_extension of an active agent of the tenant; \`ivr\` runs the IVR engine on the \`ivr_menu\` of the campaign whose id is \`dest_ref\`
(a campaign of the tenant with a non-empty ivr_menu), or on the default menu when \`dest_ref\` is null; \`queue\` anchors the leg, which is
admitted to a queue only while the tenant flag \`inbound_queue_stream_enabled\` is on: otherwise the leg ends unanswered (the switch may
hang it up as unallocated), so a queue route is accepted but answers no caller until the flag is on. \`ai_enabled: true\` needs the
tenant's \`voice_ai_enabled\`. The number must be an ACTIVE DID of the tenant (422 otherwise): a tenant routes only numbers it holds.
While active, a number has one route platform-wide (409 \`conflict\`, whichever tenant holds the other route).`;
const BODY_ERRORS = `400 \`bad_request\` for malformed JSON, a wrong JSON type, a value outside an enum or an unknown key (named in the
message); 400 \`invalid\` for a rule on e164, dest_ref or notes; 413 over 8 MiB; 415 when the body is not JSON.`;
const EDGE = `The SIP edge is the SBC API at SBC_API_URL; unset means no edge in this environment (intent recorded only). Set: one HTTPS
request through the egress check (SBC_API_URL must pass it; EGRESS_ALLOWLIST origins are exempt) with bearer SBC_API_TOKEN; any 2xx is
acceptance; a non-2xx answer, a refused egress check and a network failure or timeout (15 s) are 502 \`sbc_error\`.`;

export function inboundRouteRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inbound-routes',
      tags,
      security,
      middleware,
      summary: "The tenant's inbound routes, oldest first",
      description: `Every status. ${SCOPE}`,
      responses: { 200: jsonContent(InboundRouteList, 'The routes'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await listInboundRoutes(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/inbound-routes',
      tags,
      security,
      middleware,
      summary: 'Route an inbound number',
      description: `Body \`{e164, dest_type}\` required; \`dest_ref\`, \`recording\`, \`ai_enabled\`, \`notes\` optional. A route is created
active; it reaches the SIP edge on provision. ${RULES} Errors: ${BODY_ERRORS} Audited as inbound_route.created. ${SCOPE}`,
      request: { body: jsonBody(CreateInboundRouteBody) },
      responses: { 201: jsonContent(InboundRouteEnvelope, 'Created'), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ inbound_route: await createInboundRoute(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inbound-routes/{id}',
      tags,
      security,
      middleware,
      summary: 'An inbound route',
      description: `${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(InboundRouteEnvelope, 'The route'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ inbound_route: await getInboundRoute(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/inbound-routes/{id}',
      tags,
      security,
      middleware,
      summary: 'Change an inbound route',
      description: `Fields dest_type, dest_ref, recording, ai_enabled, notes and status (active or disabled); \`e164\` is immutable (400
\`bad_request\` naming it). Absent keys are unchanged; a patch that changes nothing writes nothing. The destination rules run again when
dest_type, dest_ref or ai_enabled change, and the number rules (DID held, one active route per number: 409) when status goes back to
active. A change is local: it reaches the SIP edge on the next provision. ${RULES} Errors: ${BODY_ERRORS} Audited as
inbound_route.updated. ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(PatchInboundRouteBody) },
      responses: { 200: jsonContent(InboundRouteEnvelope, 'The updated route'), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ inbound_route: await updateInboundRoute(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json')) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/inbound-routes/{id}/provision',
      tags,
      security,
      middleware,
      summary: 'Push an inbound route to the SIP edge',
      description: `200 \`{inbound_route, status}\`: \`provisioned\` when the edge accepted \`POST {SBC_API_URL}/inbound-routes/{id}\` with
\`{tenant_id, e164, dest_type, dest_ref, recording, ai_enabled}\` (an upsert, so provisioning again pushes the current settings),
\`sbc_disabled\` without an edge. 422 \`unprocessable\` for a disabled route. ${EDGE} On 502 nothing is recorded; safe to retry. Audited
as inbound_route.provisioned. ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(InboundRouteProvisioned, 'Provisioned, or intent recorded'), ...errorResponses(401, 403, 404, 422, 502) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await provisionInboundRoute(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/inbound-routes/{id}/disable',
      tags,
      security,
      middleware,
      summary: 'Disable an inbound route (idempotent)',
      description: `Sets status disabled at once, which frees the number for another route, whatever the edge says. When the SIP edge
carries the route (it was provisioned there), the edge is then told \`POST {SBC_API_URL}/inbound-routes/{id}/disable\`. ${EDGE} A 502
here means the route IS disabled in the platform but the edge still carries it: repeat the call, which tells the edge again until it
accepts. Disabling a disabled route that the edge no longer carries writes nothing. Audited as inbound_route.disabled (and
inbound_route.edge_revoked when the edge accepted). ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(InboundRouteEnvelope, 'The disabled route'), ...errorResponses(401, 403, 404, 502) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ inbound_route: await disableInboundRoute(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );

  return app;
}
