import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CarrierEdgeResult, CarrierEnvelope, CarrierList, CreateCarrierBody, UpdateCarrierBody } from './carrier.schemas';
import { createCarrier, getCarrier, listCarriers, provisionCarrier, revokeCarrier, updateCarrier } from './carrier.service';

const security = [{ bearer: [] }];
const tags = ['Carriers'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`, as is a suspended tenant; a missing or bad credential is 401.';
const ID_NOTE = "An unknown id, an id of another tenant (or of another account's account-wide trunk) and a non-UUID id are the same 404 `not_found`.";
const EMPRESA_RULE = `An account-wide trunk (scope \`empresa\`, tenant_id null) belongs to the account: every tenant of the account
sees it, but only a \`ddu_\` session of an \`account_admin\` user may create, provision or revoke it (403 \`forbidden\` for a member,
and for a \`dd_\` key, which carries no user).`;
const EDGE = `The SIP edge is the SBC API at SBC_API_URL. Unset: this environment has no edge, the route answers \`sbc_disabled\` and
records the intent only. Set: one HTTPS request through the egress check (SBC_API_URL must pass it like any outbound URL; origins in
EGRESS_ALLOWLIST are exempt), bearer SBC_API_TOKEN: \`POST {SBC_API_URL}/trunks/{id}\` with \`{account_id, tenant_id, name, sip_proxy,
source_ips}\` to provision (an upsert), \`POST {SBC_API_URL}/trunks/{id}/revoke\` with \`{}\` to revoke; any 2xx is acceptance. A non-2xx
answer, a refused egress check and a network failure or timeout (15 s) are all 502 \`sbc_error\`: nothing is recorded and the trunk's
edge state is unchanged, so the call is safe to retry. Every accepted or recorded request is an audit entry (carrier.provisioned,
carrier.revoked).`;

export function carrierRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/carriers',
      tags,
      security,
      middleware,
      summary: "The tenant's SIP trunks and its account's account-wide ones, oldest first",
      description: `Every status. ${SCOPE}`,
      responses: { 200: jsonContent(CarrierList, 'Own and inherited trunks'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await listCarriers(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/carriers',
      tags,
      security,
      middleware,
      summary: 'Register a SIP trunk for the tenant (sede) or its whole account (empresa)',
      description: `Body \`{kind, name}\` required; \`sip_proxy\`, \`source_ips\`, \`status\` (active by default, or disabled) and \`scope\`
(sede by default) optional; \`account_id\` is accepted and ignored. ${EMPRESA_RULE} Registering does not touch the SIP edge: use
provision. Errors: 400 \`bad_request\` for malformed JSON, a wrong JSON type, a value outside an enum or an unknown key (\`tenant_id\`
included); 400 \`invalid\` for a rule on name, sip_proxy, source_ips or status (named in the message), including the public-address
rules of the egress check: a sip_proxy address, every address its host name resolves to, and every address of each source_ips block
must be public (loopback, private, CGNAT, link-local, reserved and cloud metadata ranges, internal names such as \`localhost\` or
\`*.internal\`, and a name that does not resolve are refused) unless the operator lists it in SIP_EDGE_ALLOWLIST; 403 for scope empresa without
account_admin; 413 over 8 MiB; 415 when the body is not JSON. Audited as carrier.created. ${SCOPE}`,
      request: { body: jsonBody(CreateCarrierBody) },
      responses: { 201: jsonContent(CarrierEnvelope, 'Registered'), ...errorResponses(400, 401, 403, 413, 415, 422) },
    }),
    async (c) => c.json({ carrier: await createCarrier(deps, c.get('principal'), c.req.valid('json')) }, 201),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/carriers/{id}',
      tags,
      security,
      middleware,
      summary: 'A SIP trunk (own or inherited)',
      description: `${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(CarrierEnvelope, 'The trunk'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ carrier: await getCarrier(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/carriers/{id}',
      tags,
      security,
      middleware,
      summary: 'Rename a SIP trunk or change its status (active, disabled, retired)',
      description: `Body \`{name?, status?}\`. A trunk that is not active carries no call: every campaign and run that names it (campaign
\`carrier\`, run option \`gateway\`) reads it again at each dial, records each call it would have sent as \`not_placed\` with hangup_cause
TRUNK_DISABLED or TRUNK_RETIRED (its gateway is removed from the switch), and the runs stop claiming leads meanwhile (tick idle
\`trunk_disabled\` / \`trunk_retired\`). Retired is final: changing a retired trunk's status is 409 \`conflict\`. A patch that changes
nothing answers the trunk as it is and records nothing; a change is audited as carrier.updated. Errors: 400 \`bad_request\` for
malformed JSON, a wrong type, a status outside the enum or any other key; 400 \`invalid\` for a name rule. ${EMPRESA_RULE.replace('create, provision or revoke', 'change')}
${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(UpdateCarrierBody) },
      responses: { 200: jsonContent(CarrierEnvelope, 'The trunk'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    }),
    async (c) => c.json({ carrier: await updateCarrier(deps, c.get('principal'), c.req.valid('param').id, c.req.valid('json')) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/carriers/{id}/provision',
      tags,
      security,
      middleware,
      summary: 'Push a BYOC trunk to the SIP edge',
      description: `Answers \`{status: provisioned}\` when the edge accepted, \`{status: sbc_disabled}\` without an edge. 422
\`unprocessable\` for a house trunk (the platform's own, never pushed), a trunk that is not active, one without sip_proxy, or one whose
sip_proxy or source_ips no longer pass the public-address rules of POST (judged again at the push, the host name resolved again). ${EDGE}
${EMPRESA_RULE} ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(CarrierEdgeResult, 'Provisioned, or intent recorded'), ...errorResponses(401, 403, 404, 422, 502) },
    }),
    async (c) => c.json(await provisionCarrier(deps, c.get('principal'), c.req.valid('param').id), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/carriers/{id}/revoke',
      tags,
      security,
      middleware,
      summary: 'Remove a BYOC trunk from the SIP edge',
      description: `Answers \`{status: revoked}\` when the edge accepted, \`{status: sbc_disabled}\` without an edge. Idempotent; any
status may be revoked, and the trunk's own status is unchanged. 422 \`unprocessable\` for a house trunk. ${EDGE} ${EMPRESA_RULE}
${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(CarrierEdgeResult, 'Revoked, or intent recorded'), ...errorResponses(401, 403, 404, 422, 502) },
    }),
    async (c) => c.json(await revokeCarrier(deps, c.get('principal'), c.req.valid('param').id), 200),
  );

  return app;
}
