import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { AiAgentEnvelope, AiAgentList, CreateAiAgentBody, PatchAiAgentBody } from './ai-agent.schemas';
import { createAiAgent, getAiAgent, listAiAgents, retireAiAgent, updateAiAgent } from './ai-agent.service';

const security = [{ bearer: [] }];
const tags = ['Voice AI'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`, as is a suspended tenant; a missing or bad credential is 401.';
const ID_NOTE = 'An unknown id, an id of another tenant and a non-UUID id are the same 404 `not_found`.';
const BODY_ERRORS = `400 \`bad_request\` for malformed JSON, a wrong JSON type, a value outside an enum or an unknown key (named in the
message, nested objects included); 413 over 8 MiB; 415 when the body is not JSON.`;

const LIFECYCLE = `The lifecycle (draft → live, live → paused, paused → live, any → retired by DELETE only) is owned by one Temporal
workflow per agent (\`ai-agent:<tenant>:<agent id>\`, started at creation, or by the first move when missing): each move is its
\`transition\` update, refused by its validator when the lifecycle does not allow it, and written with its audit entry
(\`ai_agent.live\`, \`ai_agent.paused\`, \`ai_agent.retired\`) only while the row is still in the state the workflow expects, so of two
concurrent moves one wins and the other is 409. The first move to live locks the disclosure (\`disclosure.locked\` true, for good).
Going live needs the tenant's \`voice_ai_enabled\` (otherwise 409 \`conflict\`: a state of the tenant, not of the request) and a
disclosure that passes the content check (otherwise 422). Without a configured workflow service, a status move is 500 \`internal\`
(retry with backoff) and nothing is written.`;

export function aiAgentRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ai/agents',
      tags,
      security,
      middleware,
      summary: 'AI agents of the tenant, oldest first (retired ones included)',
      description: `Every agent in one answer, no paging (a tenant has a handful), oldest first: retired agents stay listed because
conversations and campaigns keep pointing at them. ${SCOPE}`,
      responses: { 200: jsonContent(AiAgentList, 'All AI agents'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await listAiAgents(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ai/agents',
      tags,
      security,
      middleware,
      summary: 'Create an AI agent (draft, policy_version 1)',
      description: `Everything is optional except, in effect, \`disclosure.text\`: an agent without the artificial-voice disclosure is
422 \`unprocessable\`, as is a text over 10000 UTF-8 bytes or one that does not clearly identify the voice as automated (English or
Spanish; the message says why). \`status\` may only be \`draft\` (anything else is 422): agents go live through PATCH.

Defaults: name "AI agent N" (N one more than the agents the tenant has had, skipping names in use); voice
\`{language: "en-US", voice_id: "default", pace: 0.5}\` (absent keys of a sent voice take these too); the conservative policy
\`{max_settlement_pct: 0, min_payment_cents: 2500, max_plan_months: 6, take_payments: "none", prohibited: []}\` (likewise per key);
handoff_rules: only the locked \`human_requested\` rule \`{trigger: human_requested, params: {}, action: transfer, severity: hard,
locked: true}\`, which every agent has whatever is sent. Rules get server ids. Domain rules on values (ranges, BCP-47 language,
lengths, per-trigger params, the locked rule) are 422 \`unprocessable\` naming the field.

The name is unique among the tenant's agents not retired, case-insensitively: a duplicate is 409 \`conflict\` (a retired agent's name
can be reused). Writes the version-1 snapshot (ai_agent_versions) and the audit entry \`ai_agent.created\` in the same transaction,
then starts the agent's lifecycle workflow. ${BODY_ERRORS} ${SCOPE}`,
      request: { body: jsonBody(CreateAiAgentBody) },
      responses: {
        201: jsonContent(AiAgentEnvelope, 'The new agent, in draft at policy_version 1'),
        ...errorResponses(400, 401, 403, 409, 413, 415, 422),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ ai_agent: await createAiAgent(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ai/agents/{id}',
      tags,
      security,
      middleware,
      summary: 'An AI agent (retired or not)',
      description: `${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(AiAgentEnvelope, 'The agent'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ ai_agent: await getAiAgent(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/ai/agents/{id}',
      tags,
      security,
      middleware,
      summary: 'Change an AI agent; versioned changes bump policy_version',
      description: `Optional \`name\`, \`voice\`, \`disclosure\`, \`policy\`, \`handoff_rules\`, \`status\`. \`voice\` and \`policy\` merge key by
key into the current values; \`handoff_rules\` replaces the list (the locked \`human_requested\` rule stays, see POST). The versioned
fields are voice, disclosure, policy and handoff_rules: a PATCH that changes any of them bumps \`policy_version\` by exactly 1 (however
many it changes) and writes that version's snapshot; a PATCH whose values equal the current ones (rules compared without their ids)
and a name-only PATCH keep the version. Audit entry \`ai_agent.updated\` (the changed field names) when something changed.

The disclosure is immutable once the agent has been live (\`disclosure.locked\`): a different text is then 409 \`conflict\`, also
after a pause (the database refuses the change too). A retired agent refuses every PATCH with 409. A duplicate name is 409.

\`status\`: ${LIFECYCLE} The same status as now is no move. The move is decided before anything is written (an impossible move
writes nothing); field changes commit first, then the move runs. ${ID_NOTE} ${BODY_ERRORS} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(PatchAiAgentBody) },
      responses: {
        200: jsonContent(AiAgentEnvelope, 'The agent after the change'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 500),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ ai_agent: await updateAiAgent(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json')) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/ai/agents/{id}',
      tags,
      security,
      middleware,
      summary: 'Retire an AI agent (idempotent; never deleted)',
      description: `Moves the agent to \`retired\` through its lifecycle workflow (audit entry \`ai_agent.retired\`), which then ends. The
row is kept as evidence and stays readable; its name can be reused. Retiring a retired agent answers it unchanged and records nothing.
${LIFECYCLE} ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(AiAgentEnvelope, 'The retired agent'), ...errorResponses(401, 403, 404, 409, 500) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ ai_agent: await retireAiAgent(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );

  return app;
}
