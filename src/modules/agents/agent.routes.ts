import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { SIP_EXTENSION_RULE } from './agent.rules';
import { AgentEnvelope, AgentList, CheckinBody, CheckinEnvelope, CheckoutBody, CheckoutEnvelope, CreateAgentBody } from './agent.schemas';
import { changePresence, checkin, checkout, createAgent, getAgent, listAgents } from './agent.service';

const security = [{ bearer: [] }];
const tags = ['Agents'];
const management = [requireManagement];

const SCOPE = 'Tenant-management scope: an API key or a dashboard session; a `ddw_` widget token is 403 `forbidden`.';
const SEAT_SCOPE = `An API key or a dashboard session acts on any agent of the tenant; a \`ddw_\` widget token only on its own
agent: naming another agent of the tenant is 403 \`forbidden\` (an unknown or another tenant's agent is still 404).`;
const PRESENCE_NOTE = `Presence machine: offline → available on check-in, any → offline on check-out, available → paused on
pause, paused → available on resume, wrap_up → available on wrap-up; ringing and on_call are set by the dial loop. Leaving
wrap_up (and any check-out) clears the seat's wrap-up deadline, so a pending wrap-up timer cannot end a later wrap-up.
${SEAT_SCOPE} Every change is an audit entry (agent.checked_in, agent.checked_out, agent.paused, agent.resumed,
agent.wrap_up_ended); an idempotent repeat records no presence entry.`;
const SIP_NOTE = `SIP credentials: the switch reads its SIP directory from the service (\`POST /switch/directory\`, mod_xml_curl,
authenticated as the switch), which serves only live credentials of checked-in browser seats (SIP_CREDENTIAL_TTL_SECONDS, 24 h
autoexpiry). The agent's read-only \`registered\` follows the switch's registration events; a browser seat is dialable only while
registered (CONTRACT section 10). A teardown is the database
revocation plus a switch command (\`sofia profile internal flush_inbound_reg <extension>[@<SIP_DOMAIN>]\`) that drops the
registration, run by a one-step workflow and audited as agent.sip_teardown with its outcome.`;

export function agentRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents',
      tags,
      security,
      middleware: management,
      summary: "The tenant's agents (seats), oldest first",
      description: `Every agent, inactive ones included (no pages: a roster is small). ${SCOPE}`,
      responses: { 200: jsonContent(AgentList, 'The agents'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await listAgents(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents',
      tags,
      security,
      middleware: management,
      summary: 'Create an agent (seat)',
      description: `\`name\` and \`email\` are required; \`role\` defaults to agent; \`sip_extension\` is optional (${SIP_EXTENSION_RULE},
the set the switch dials; anything else is 422 \`unprocessable\`). Email (case-insensitive) and sip_extension are unique per
tenant, enforced by unique indexes: 409 \`conflict\`. A new agent is active, offline, device_mode browser. 400 \`bad_request\` for
malformed JSON, a wrong JSON type, an unknown role or an unknown key. ${SCOPE} Audited as agent.created.`,
      request: { body: jsonBody(CreateAgentBody) },
      responses: { 201: jsonContent(AgentEnvelope, 'Created'), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ agent: await createAgent(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/checkin',
      tags,
      security,
      summary: 'Check a seat in (offline → available)',
      description: `The agent whose \`sip_extension\` is given goes available; \`device_mode\`, when sent, is stored on it. Checking in
an available seat is an idempotent 200 for the seat (only a changed device_mode is written to it). Any other presence (ringing, on_call, wrap_up,
paused) and an inactive agent are 409 \`conflict\`. No agent of the tenant with the extension is 404; an extension outside the
alphabet is 422. The answer carries the softphone bootstrap \`{sip_extension, domain, wss_url, device_mode, sip_username,
sip_password, sip_credential_expires_at}\` (domain and wss_url from the deployment's SIP_DOMAIN and SIP_WSS_URL, null when
unset). A browser seat (device_mode browser after this check-in) gets a fresh ephemeral SIP credential on every check-in, a
repeat included: a random username unique across the platform and a random password shown only in this answer (stored
encrypted), expiring after SIP_CREDENTIAL_TTL_SECONDS (24 h); the agent's previous live credential is revoked (superseded).
Audited as agent.sip_credential_issued (never the password). An external seat gets null credential fields and keeps no
credential live. ${SIP_NOTE} ${PRESENCE_NOTE}`,
      request: { body: jsonBody(CheckinBody) },
      responses: { 200: jsonContent(CheckinEnvelope, 'The checked-in agent and its softphone bootstrap'), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
    }),
    async (c) => c.json(await checkin(deps, c.get('principal'), c.req.valid('json')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/checkout',
      tags,
      security,
      summary: 'Check a seat out (any presence → offline)',
      description: `The agent whose \`sip_extension\` is given goes offline from any presence, on_call included (the call itself is
not touched; its end no longer makes the seat available). Then its SIP endpoint is torn down: every live ephemeral SIP credential
of the agent is revoked (reason checked_out) and the registration is dropped on the switch. Answer \`{agent, sip_teardown}\`:
\`ok\`, or \`failed\` when the switch could not be reached (link down, refused, no workflow service): the revocation stands but
the switch keeps accepting the credential until its 24 h autoexpiry. Idempotent: an offline seat answers 200 and records no
presence entry, but the teardown runs again, which is how a failed one is retried. No agent of the tenant with the extension is
404; an extension outside the alphabet is 422. ${SIP_NOTE} ${PRESENCE_NOTE}`,
      request: { body: jsonBody(CheckoutBody) },
      responses: { 200: jsonContent(CheckoutEnvelope, 'The checked-out agent and the SIP teardown outcome'), ...errorResponses(400, 401, 403, 404, 413, 415, 422) },
    }),
    async (c) => c.json(await checkout(deps, c.get('principal'), c.req.valid('json')), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{id}',
      tags,
      security,
      summary: 'An agent',
      description: `Unknown, malformed or another tenant's id: 404. ${SEAT_SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(AgentEnvelope, 'The agent'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ agent: await getAgent(deps, c.get('principal'), c.req.valid('param').id) }, 200),
  );

  const moves = [
    { path: '/v1/agents/{id}/pause', action: 'pause', summary: 'Pause a seat (available → paused)' },
    { path: '/v1/agents/{id}/resume', action: 'resume', summary: 'Resume a seat (paused → available)' },
    { path: '/v1/agents/{id}/wrap-up', action: 'wrap_up', summary: 'End wrap-up (wrap_up → available)' },
  ] as const;
  for (const m of moves) {
    app.openapi(
      createRoute({
        method: 'post',
        path: m.path,
        tags,
        security,
        summary: m.summary,
        description: `No body. Any other starting presence (a repeat included) is 409 \`conflict\`; unknown, malformed or another
tenant's id is 404. ${PRESENCE_NOTE}`,
        request: { params: IdParam },
        responses: { 200: jsonContent(AgentEnvelope, 'The agent'), ...errorResponses(401, 403, 404, 409) },
      }),
      async (c) => c.json(await changePresence(deps, c.get('principal'), c.req.valid('param').id, m.action), 200),
    );
  }

  return app;
}
