import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { REDIAL_AFTER_MS, RING_TIMEOUT_SEC } from '../dialer/dial-tick.service';
import { DialBody, DialResultSchema } from './dial.schemas';
import { dial } from './dial.service';

const DESCRIPTION = `A call a person starts on a preview or manual campaign: the compliance engine decides it (initiation
\`human\`, recorded as the audit entry compliance.decision with the caller as actor), and when it allows the call the original CDR row
is recorded and the switch originates the call (ring timeout ${RING_TIMEOUT_SEC} s, the switch's default agent domain, through the
campaign's \`carrier\` (switch gateway \`carrier-<id>\`) or, without one, the deployment default gateway). When the
consumer answers, the named agent, or without \`agent_id\` the first available agent, is bridged to the call; its outcome arrives as a
correction row of the CDR like any other call.

Checked in this order; a request refused by any of them records nothing (no decision, no CDR row):
- the body is strict: an unknown key, a \`phone\` that is not E.164 or a malformed \`agent_id\` is 400 \`bad_request\`;
- the campaign must be one of this tenant (unknown, foreign or malformed id: 404); its type must be preview or manual and its state
  running (409 \`conflict\` otherwise);
- billing: a tenant blocked under hard_block enforcement (period cap reached or prepaid funds exhausted) is 422 \`unprocessable\`
  until funds or the cap allow again (GET /v1/billing/account);
- \`debt_id\` must be a debt of this tenant (404) of this campaign (422 \`unprocessable\`);
- \`phone\` must be a contact of the debt (422); without it the debt's primary contact is dialed (422 when it has none);
- \`agent_id\` must be an active agent of this tenant with a sip_extension (422) and dialable now (409: a busy or offline seat, a
  browser seat whose softphone is not registered on the switch, or a seat another dial reserved cannot take the call); the named
  agent is then reserved for this call (the campaign runs do not take it) until the consumer's ring timeout has passed, the call
  ends or the agent is connected; without it at least one dialable agent of the tenant (available and reachable: a browser seat
  while registered, an external seat while checked in; CONTRACT section 10) must exist (409), so an answered consumer is never left
  to the abandonment message;
- the switch control link must be up (503 \`esl_unavailable\`, retryable);
- a call to the same debt or number still in progress is 409;
- a campaign whose caller_id_pool has no active DID is 409 (caller id: an active DID of the pool, else one of the legacy caller_ids,
  else none);
- the rate brake, under the same per-tenant lock as the campaign runs, so manual dials and the runs share one ceiling: at the
  tenant's \`max_cps\` dials in the last second, or with \`max_concurrent_channels\` calls in flight, the answer is 429 \`throttled\`
  (retry with backoff and jitter).

Then the engine decides. A refusal answers 200 \`{status: "blocked", reason, decision_id}\`: \`reason\` is the first refusing gate and
\`decision_id\` the recorded decision (the refusal is kept as evidence; nothing is dialed; do not retry unchanged). An allowed call
answers 200 \`{status: "dialing", call_id, call_attempt}\`: \`call_id\` is the switch call uuid (\`GET /v1/calls/{call_id}\`),
\`call_attempt\` the original CDR row (agent_id the named agent, compliance_snapshot the decision); the debt then rests
${REDIAL_AFTER_MS / 3_600_000} h before the campaign's lead queue offers it again (next_dialable_at). When the switch refuses the
originate the answer is 502 \`dial_error\`, and when the link drops between the decision and the originate 503 \`esl_unavailable\`;
when the campaign's carrier was disabled or retired (it is read again at the placement) nothing rings and the answer is 409
\`conflict\` naming TRUNK_DISABLED or TRUNK_RETIRED; all three add \`call_id\`, and the attempt stays in the CDR with a
\`not_placed\` final row whose hangup_cause says why.`;

export function dialRoutes(deps: AppDeps) {
  const app = createRouter();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/campaigns/{id}/dial',
      tags: ['Campaigns'],
      security: [{ bearer: [] }],
      middleware: [requireManagement],
      summary: 'Dial a debt of a preview or manual campaign now (human-initiated)',
      description: DESCRIPTION,
      request: { params: IdParam, body: jsonBody(DialBody) },
      responses: {
        200: jsonContent(DialResultSchema, 'Dialing, or blocked by the compliance engine'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await dial(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json')), 200);
    },
  );
  return app;
}
