import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { createRouter, errorResponses, jsonContent } from '../../lib/openapi';
import { CALL_CONTROL_ACTIONS, type CallControlAction } from './call-control.switch';
import { CallControlEnvelope, CallIdParam } from './call-control.schemas';
import { controlCall } from './call-control.service';

const security = [{ bearer: [] }];

const WHAT: Record<CallControlAction, string> = {
  hold: 'Puts the AGENT leg bridged to the call on hold (uuid_hold <agent leg>); the consumer hears the hold treatment.',
  unhold: `Takes the agent leg off hold (uuid_hold off <agent leg>). Re-checks the mid-call compliance gate first: the engine
decides the call's debt and number (channel voice, initiation human, the campaign's artificial-voice profile) and the decision
is recorded evidence; a refusal keeps the hold and answers 422 compliance_blocked with gate and decision_id (zero switch
commands). When the decision cannot be recorded the hold is kept and the answer is 503 audit_unavailable.`,
  mute: 'Mutes what the AGENT leg says (uuid_audio <agent leg> start read mute 1); the agent still hears the consumer.',
  unmute: 'Unmutes the AGENT leg (uuid_audio <agent leg> stop).',
  hangup: `Hangs up the CONSUMER leg (uuid_kill <call uuid> NORMAL_CLEARING); the agent leg is released with it and the call
session writes the final CDR row. Exempt from the call-control budget: never 429. 409 when the consumer leg is no longer on
the switch.`,
};

function describe(action: CallControlAction): string {
  const toggle = action !== 'hangup';
  return `${WHAT[action]}

call_id is the switch call uuid (call_uuid of the original CDR row). Tenant credentials (\`dd_\`, \`ddu_\`) control any call
of the tenant; a \`ddw_\` widget token only its own agent's calls: the original row names the agent, a later row of the call
does, or it is the call the agent is bridged to right now (the same ownership as GET /v1/calls/{call_id}). Order:
${toggle ? `1. budget: hold, unhold, mute and unmute share one budget per tenant and principal (a widget token's is its agent's,
   shared by the agent's tokens), CALL_CONTROL_PER_MINUTE (default 120) per 60 s fixed window; over it 429 rate_limited (no Retry-After), decided before the call is looked up so a refusal does not
   reveal whether the call exists (nor whose it is);\n` : '1. no budget: hangup is never 429;\n'}2. the call: an unknown or foreign (another tenant's) call
   is 404, for a widget too; a widget on a call of its tenant that its agent does not own is 403 forbidden (decided before the call's state, nothing evidenced, nothing sent); a call with a final
   CDR row (ended_at) is 409 conflict;
3. the switch: the command runs synchronously in a one-step Temporal workflow (call-control:<tenant>:<call uuid>:<action>:<uuid>)
   whose activity finds the agent leg bridged to the call: the consumer leg's bridge_to variable (bridge_uuid as a fallback),
   accepted only when that leg carries dd_agent_id (the dial loop's agent leg).${toggle ? ' None is 409 conflict.' : ''}
4. evidence before the command: the audit row call.${action}_requested (actor = the principal, for a widget its agent; payload call_id, action,
   agent_leg_uuid, request_id, control_id) is committed BEFORE any switch command and is the answer's audit_id; when it cannot be
   written the answer is 503 audit_unavailable and nothing is sent to the switch;
5. the command; the switch link down (or lost mid-command) is 503 esl_unavailable, a switch refusal (-ERR) is 502 dial_error
   (the switch-rejected family dial_error, sbc_error, supervision_failed; call control uses dial_error);
6. evidence after: call.${action} with outcome succeeded (and at) or failed (and the switch cause, ESL_UNAVAILABLE when the
   link was down: a down link is evidenced by both rows). The command is never retried.`;
}

export function callControlRoutes(deps: AppDeps) {
  const app = createRouter();
  for (const action of CALL_CONTROL_ACTIONS) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/calls/{call_id}/${action}`,
        tags: ['Calls'],
        security,
        summary: `Live-call control: ${action}`,
        description: describe(action),
        request: { params: CallIdParam },
        responses: {
          200: jsonContent(CallControlEnvelope, 'The command the switch applied'),
          ...errorResponses(...[401, 403, 404, 409, ...(action === 'unhold' ? [422] : []), ...(action === 'hangup' ? [] : [429]), 500, 502, 503]),
        },
      }),
      async (c) => {
        const call = await controlCall(deps, c.get('principal'), c.get('requestId') ?? null, c.req.valid('param').call_id, action);
        return c.json({ call }, 200);
      },
    );
  }
  return app;
}
