import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonBody, jsonContent } from '../../lib/openapi';
import { RecordingPolicyBody, RecordingPolicyEnvelope } from './recording-policy.schemas';
import { getRecordingPolicy, putRecordingPolicy } from './recording-policy.service';

const security = [{ bearer: [] }];
const tags = ['Recordings'];
const middleware = [requireManagement];

const POLICY_DESCRIPTION = `How the tenant's calls are recorded and how long signed recording URLs live (SPEC leaves the fields
open; this is the design). A call is recorded when its campaign has \`record_calls\`, from the agent bridge (the start of the
conversation). Both parties' states are evaluated (the consumer's by the number's area code, the contact's state and postal code;
the caller's by the DID's state and the caller id's area code) against the all-party rules of REGULATIONS.md §3; where one applies,
\`all_party_mode\` decides. A tenant that never stored a policy has the defaults (\`updated_at\` null). Tenant-management scope: an API
key or a dashboard session; a \`ddw_\` widget token is 403 \`forbidden\`.`;

export function recordingPolicyRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/recording-policy',
      tags,
      security,
      middleware,
      summary: "The tenant's recording policy",
      description: POLICY_DESCRIPTION,
      responses: { 200: jsonContent(RecordingPolicyEnvelope, 'The policy in force'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json({ recording_policy: await getRecordingPolicy(deps, c.get('principal').tenantId) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/recording-policy',
      tags,
      security,
      middleware,
      summary: "Replace the tenant's recording policy",
      description: `${POLICY_DESCRIPTION} A full replacement: every field is required. 400 \`bad_request\` for malformed JSON, a missing
field, a wrong JSON type, an unknown all_party_mode or an unknown key; 422 \`unprocessable\` for a value outside its range. Applies
to calls bridged after it; a recording's consent fields are frozen when it starts. Audited as recording_policy.updated with the
new values.`,
      request: { body: jsonBody(RecordingPolicyBody) },
      responses: { 200: jsonContent(RecordingPolicyEnvelope, 'The stored policy'), ...errorResponses(400, 401, 403, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ recording_policy: await putRecordingPolicy(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 200);
    },
  );

  return app;
}
