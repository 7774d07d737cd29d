import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../lib/passwords';
import { AgentCredentialResult, SetAgentCredentialBody } from './agent-credential.schemas';
import { disableAgentCredential, setAgentCredential } from './agent-credential.service';

const security = [{ bearer: [] }];
const tags = ['Agents'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: an API key or a dashboard session; a `ddw_` widget token is 403 `forbidden`.';
const ID_NOTE = "Unknown, malformed or another tenant's agent id: 404 `not_found`.";
const TEARDOWN = `The SIP teardown revokes the agent's live ephemeral SIP credentials and drops its registration on the switch
after the database change commits; \`failed\` (switch not reached) leaves the revocations standing and the SIP credential usable
on the switch until its 24 h autoexpiry.`;

export function agentCredentialRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/agents/{id}/credential',
      tags,
      security,
      middleware,
      summary: "Set or rotate the agent's widget-login password",
      description: `Enables widget login (\`POST /v1/auth/agent-login\`) for the agent, or rotates its password. The password policy
(${PASSWORD_MIN} to ${PASSWORD_MAX} characters) is checked before anything is written: 422 \`unprocessable\`. The password is stored
only as a PBKDF2-SHA512 hash and never echoed or logged. A first set answers \`sip_teardown: skipped\` (nothing to revoke). A
rotation revokes every vigent \`ddw_\` token of the agent (reason credential_rotated; they stop working on the next request) and
tears down its SIP endpoint: \`ok\` or \`failed\`. ${TEARDOWN} An inactive agent is 409 \`conflict\`. ${ID_NOTE} 400 \`bad_request\`
for malformed JSON, a missing or non-string password or an unknown key. ${SCOPE} Audited as agent.credential_set or
agent.credential_rotated (never the password).`,
      request: { params: IdParam, body: jsonBody(SetAgentCredentialBody) },
      responses: {
        200: jsonContent(AgentCredentialResult, 'The agent (login_enabled true) and the SIP teardown outcome'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422),
      },
    }),
    async (c) => c.json(await setAgentCredential(deps, c.get('principal'), c.req.valid('param').id, c.req.valid('json').password), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/agents/{id}/credential',
      tags,
      security,
      middleware,
      summary: "Disable the agent's widget login",
      description: `Clears the widget-login password (\`login_enabled\` false: agent login answers 401), revokes every vigent
\`ddw_\` token of the agent (reason credential_disabled) and tears down its SIP endpoint: \`sip_teardown\` \`ok\` or \`failed\`.
${TEARDOWN} Idempotent: when widget login is already disabled the answer is 200 with \`sip_teardown: skipped\` and nothing is
written. Allowed for an inactive agent too. ${ID_NOTE} ${SCOPE} Audited as agent.credential_disabled.`,
      request: { params: IdParam },
      responses: { 200: jsonContent(AgentCredentialResult, 'The agent (login_enabled false) and the SIP teardown outcome'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json(await disableAgentCredential(deps, c.get('principal'), c.req.valid('param').id), 200),
  );

  return app;
}
