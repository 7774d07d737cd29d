import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { PauseBody, PauseResult, ResumeResult, TakeoverBodySchema, TakeoverResult } from './ai-call.schemas';
import { pauseAi, resumeAi, takeoverConversation } from './ai-control.service';

const security = [{ bearer: [] }];
const tags = ['Voice AI'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`; a missing or bad credential is 401.';
const BODY_ERRORS = '400 `bad_request` for malformed JSON, a wrong type or an unknown key; 415 when the body is not JSON.';

export function aiCallRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ai/pause',
      tags,
      security,
      middleware,
      summary: 'Kill switch: stop every AI call of the tenant',
      description: `Sets the tenant's ai_paused_at (and reason) with the audit entry \`ai.paused\` in one transaction; from then on no dial
tick places an ai_voice call (the run reports idle \`ai_paused\`) and a call answered after it gets no AI (it goes to a free agent, else it
is hung up). Then every live AI call is told to stop: handed to an available agent when there is one, else a short goodbye and a hang-up;
its conversation ends with outcome \`paused\`. \`stopped_calls\` counts the calls told. Idempotent: a pause while paused keeps the first
\`paused_at\` and reason, writes no audit entry, and stops whatever is still live. The body is optional. ${BODY_ERRORS} ${SCOPE}`,
      request: { body: jsonBody(PauseBody, false) },
      responses: { 200: jsonContent(PauseResult, 'Paused'), ...errorResponses(400, 401, 403, 415) },
    }),
    async (c) => {
      const principal = c.get('principal');
      const body = c.req.valid('json') as { reason?: string | null } | undefined;
      return c.json(await pauseAi(deps, principal.tenantId, actorOf(principal), body?.reason ?? null), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ai/resume',
      tags,
      security,
      middleware,
      summary: 'Lift the kill switch',
      description: `Clears ai_paused_at with the audit entry \`ai.resumed\`; new AI calls start again from the next dial tick. Calls stopped by
the pause stay stopped. Idempotent: resuming a tenant that is not paused changes nothing and writes no audit entry. ${SCOPE}`,
      responses: { 200: jsonContent(ResumeResult, 'Not paused'), ...errorResponses(401, 403) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await resumeAi(deps, principal.tenantId, actorOf(principal)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ai/conversations/{id}/takeover',
      tags,
      security,
      middleware,
      summary: 'Hand a live AI call to a person',
      description: `Body: exactly one of \`agent_id\` (an agent of the tenant that is active, checked in with an extension and available) or
\`supervisor_ext\` (a SIP extension). Evidence first: the audit entry \`ai.conversation.taken_over\` commits before anything reaches the
switch. Then the call's AI stops speaking and the consumer is bridged to the person's extension (an agent is held by the call until its
final row releases it); the conversation becomes \`taken_over\` with \`taken_over_by\` (\`agent:<id>\` or \`ext:<extension>\`) and
\`taken_over_at\`. Errors: 404 \`not_found\` for an unknown, foreign or malformed id; 409 \`conflict\` for a sandbox conversation, one
that is not active, a call that has ended, or an agent that is not available; 400 \`invalid\` for an agent_id that is not an agent of the
tenant; 400 \`bad_request\` when neither or both keys are sent; 503 \`audit_unavailable\` when the evidence row cannot be written
(nothing reaches the switch, the conversation stays active). ${BODY_ERRORS} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(TakeoverBodySchema) },
      responses: { 200: jsonContent(TakeoverResult, 'Taken over'), ...errorResponses(400, 401, 403, 404, 409, 415, 503) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await takeoverConversation(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json')), 200);
    },
  );

  return app;
}
