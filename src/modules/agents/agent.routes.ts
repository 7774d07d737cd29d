import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { SIP_EXTENSION_RULE } from './agent.rules';
import { AgentEnvelope, AgentList, CheckinBody, CheckinEnvelope, CheckoutBody, CreateAgentBody } from './agent.schemas';
import { changePresence, checkin, checkout, createAgent, getAgent, listAgents } from './agent.service';

const security = [{ bearer: [] }];
const tags = ['Agents'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: an API key or a dashboard session (a `ddw_` widget token is 403 for now).';
const PRESENCE_NOTE = `Presence machine: offline → available on check-in, any → offline on check-out, available → paused on
pause, paused → available on resume, wrap_up → available on wrap-up; ringing and on_call are set by the dial loop. ${SCOPE}
Every change is an audit entry (agent.checked_in, agent.checked_out, agent.paused, agent.resumed, agent.wrap_up_ended); an
idempotent repeat records nothing.`;

export function agentRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents',
      tags,
      security,
      middleware,
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
      middleware,
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
      middleware,
      summary: 'Check a seat in (offline → available)',
      description: `The agent whose \`sip_extension\` is given goes available; \`device_mode\`, when sent, is stored on it. Checking in
an available seat is an idempotent 200 (only a changed device_mode is written). Any other presence (ringing, on_call, wrap_up,
paused) and an inactive agent are 409 \`conflict\`. No agent of the tenant with the extension is 404; an extension outside the
alphabet is 422. The answer carries the softphone bootstrap \`{sip_extension, domain, device_mode}\` (domain null: the deployment
default); it holds no secret: the ephemeral SIP credential comes with the widget token issue. ${PRESENCE_NOTE}`,
      request: { body: jsonBody(CheckinBody) },
      responses: { 200: jsonContent(CheckinEnvelope, 'The checked-in agent and its softphone bootstrap'), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await checkin(deps, principal.tenantId, actorOf(principal), c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/checkout',
      tags,
      security,
      middleware,
      summary: 'Check a seat out (any presence → offline)',
      description: `The agent whose \`sip_extension\` is given goes offline from any presence, on_call included (the call itself is
not touched; its end no longer makes the seat available). Idempotent: an offline seat answers the same 200 and records nothing.
No agent of the tenant with the extension is 404; an extension outside the alphabet is 422. No ephemeral SIP credential exists
before widget tokens, so there is none to revoke yet. ${PRESENCE_NOTE}`,
      request: { body: jsonBody(CheckoutBody) },
      responses: { 200: jsonContent(AgentEnvelope, 'The checked-out agent'), ...errorResponses(400, 401, 403, 404, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await checkout(deps, principal.tenantId, actorOf(principal), c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents/{id}',
      tags,
      security,
      middleware,
      summary: 'An agent',
      description: `Unknown, malformed or another tenant's id: 404. ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(AgentEnvelope, 'The agent'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ agent: await getAgent(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
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
        middleware,
        summary: m.summary,
        description: `No body. Any other starting presence (a repeat included) is 409 \`conflict\`; unknown, malformed or another
tenant's id is 404. ${PRESENCE_NOTE}`,
        request: { params: IdParam },
        responses: { 200: jsonContent(AgentEnvelope, 'The agent'), ...errorResponses(401, 403, 404, 409) },
      }),
      async (c) => {
        const principal = c.get('principal');
        return c.json(await changePresence(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, m.action), 200);
      },
    );
  }

  return app;
}
