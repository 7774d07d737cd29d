import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { createRouter, errorResponses, jsonBody, jsonContent } from '../../lib/openapi';
import { PENDING_STALE_SECONDS } from './supervision.repository';
import { SUPERVISION_MODES, type SupervisionMode } from './supervision.rules';
import { CallIdParam, SupervisionBody, SupervisionEnvelope } from './supervision.schemas';
import { superviseCall } from './supervision.service';
import { SUPERVISOR_RING_SECONDS } from './supervision.switch';

const security = [{ bearer: [] }];

const WHAT: Record<SupervisionMode, string> = {
  listen: `Silent monitoring: a supervisor leg eavesdrops on the CONSUMER leg (originate user/<supervisor_ext> &eavesdrop(<call
uuid>) with eavesdrop_whisper_aleg and _bleg false); nobody hears the supervisor.`,
  whisper: `Coaching: a supervisor leg eavesdrops on the AGENT leg bridged to the call with eavesdrop_whisper_aleg=true, so only the
agent hears the supervisor (the consumer does not). 409 conflict when no agent leg is bridged to the call.`,
  barge: `Three-way: a supervisor leg eavesdrops on the consumer leg with eavesdrop_whisper_aleg and _bleg true; consumer and agent
both hear the supervisor.`,
  takeover: `The consumer (debtor) is transferred to the supervisor: a supervisor leg is rung and bridged to the consumer leg
(uuid_bridge), which releases the agent leg. After a takeover the call is the supervisor's: another mode by the same supervisor on
the same call is 409 conflict.`,
};

function describe(mode: SupervisionMode): string {
  const eavesdrop = mode !== 'takeover';
  return `${WHAT[mode]}

call_id is the switch call uuid (call_uuid of the original CDR row). Body \`{supervisor_ext}\` (required; a missing or non-string
value, malformed JSON or an unknown key is 400 bad_request). Tenant scope (API key, dashboard session) or a \`ddw_\` widget token
acting as its own agent. Order:
1. a \`ddw_\` principal naming an extension that is not its own agent's is 403 \`forbidden\`, before anything else is looked up;
2. the supervisor: supervisor_ext must be an active extension of the tenant's roster (unknown or inactive is 422
   \`unprocessable\`); its agent's role must be supervisor or admin, else 403 \`role_forbidden\`, decided before the call lookup is
   acted on (so it does not reveal whether the call exists), evidenced by the audit row supervision.refused (reason
   role_forbidden, call_id as given) and no switch command;
${
  eavesdrop
    ? `3. the plan: the tenant's plan_status must be active or trialing, else 402 \`plan_inactive\`, evidenced as refused (reason
   plan_inactive) with no switch command (takeover is never refused for the plan);`
    : `3. no plan check: takeover is never 402 plan_inactive;`
}
4. the call: unknown or another tenant's is 404 \`not_found\`; a call with a final CDR row (ended_at) is 409 \`conflict\`;
5. the quota: pending and active supervision sessions of the tenant (on calls that have not ended) must stay under the deployment's
   MAX_SUPERVISION_CHANNELS (default 10), counted under a per-tenant lock; this supervisor's own live session on the same call
   does not count, since this request replaces it. Sessions whose call has ended are ended first, and pending sessions older than
   ${PENDING_STALE_SECONDS} s are failed, so the quota frees itself. Full is 429 \`supervision_capacity\` (no Retry-After), evidenced as
   refused (reason supervision_capacity) with no switch command. A request of the same supervisor on the same call still in
   progress is 409 \`conflict\`. The slot is held by a pending session from here on. This ceiling is separate from
   max_concurrent_channels: supervision legs never count as dial channels and calls never count as supervision sessions;
6. the switch, in a one-step Temporal workflow (supervision:<tenant>:<call uuid>:<supervisor agent id>:<uuid>, one attempt):
   the control link down is 503 \`esl_unavailable\` with both rows evidenced (supervision.${mode}_requested, then supervision.${mode}
   outcome failed, cause ESL_UNAVAILABLE); a consumer leg no longer on the switch is 409 \`conflict\` (nothing asked, no evidence);
   the audit row supervision.${mode}_requested (actor = the principal; payload call_id, mode, supervisor_ext, supervisor_agent_id,
   session_id, target_uuid, replaces) is committed BEFORE any switch command (the answer's audit_id), or the answer is 503 \`audit_unavailable\` and nothing
   is sent; then this supervisor's previous leg on the call is hung up (one active mode per supervisor per call: that session
   ends with end_reason replaced and is named in \`replaced\`); then the command. The supervisor leg not answering within
   ${SUPERVISOR_RING_SECONDS} s (NO_ANSWER) or the switch refusing (-ERR, e.g. USER_NOT_REGISTERED) is 502 \`supervision_failed\` with the
   outcome row failed and the switch cause; success
   makes the session active with its leg_uuid and writes the outcome row succeeded. The command is never retried.
A session stays live until its call ends (end_reason call_ended), the same supervisor's next mode on the call replaces it (replaced), or\nthe supervisor puts their phone down (supervisor_left: the slot frees at once, the call goes on).`;
}

export function supervisionRoutes(deps: AppDeps) {
  const app = createRouter();
  for (const mode of SUPERVISION_MODES) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/supervision/calls/{call_id}/${mode}`,
        tags: ['Supervision'],
        security,
        summary: `Supervise a live call: ${mode}`,
        description: describe(mode),
        request: { params: CallIdParam, body: jsonBody(SupervisionBody) },
        responses: {
          200: jsonContent(SupervisionEnvelope, 'The supervision session the switch started'),
          ...errorResponses(...[400, 401, ...(mode === 'takeover' ? [] : [402]), 403, 404, 409, 413, 415, 422, 429, 500, 502, 503]),
        },
      }),
      async (c) => {
        const supervision = await superviseCall(deps, {
          principal: c.get('principal'),
          requestId: c.get('requestId') ?? null,
          callUuid: c.req.valid('param').call_id,
          mode,
          supervisorExt: c.req.valid('json').supervisor_ext,
        });
        return c.json({ supervision }, 200);
      },
    );
  }
  return app;
}
