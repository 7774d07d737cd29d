import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import type { AppEnv } from '../../lib/context';
import { badRequest } from '../../lib/errors';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { RATE_BUDGETS } from '../../lib/rate-limit';
import { bracketQueryKey } from './cdr.rules';
import {
  CallAttemptPage,
  CallEnvelope,
  CallIdParam,
  CallPage,
  DispositionBody,
  DispositionResult,
  ListCallAttemptsQuery,
  ListCallsQuery,
} from './cdr.schemas';
import { getCall, listCallAttempts, listCalls, recordDisposition } from './cdr.service';

const security = [{ bearer: [] }];

/** `name[]=v` and `name[0]=v` are not how this API takes lists: 400 instead of being ignored. */
const rejectArrayQueryForm: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = bracketQueryKey(Object.keys(c.req.queries()));
  if (key !== null) throw badRequest(`query parameter '${key}': the array form is not accepted`);
  await next();
};

const listMiddleware = [requireManagement, rejectArrayQueryForm];

const WIDGET_SCOPE = `A \`ddw_\` widget token is scoped to its own agent's calls: a call is the agent's own when its original
row names the agent (agent_id), a later row of the call does (the final row of a predictive call names the agent that was bridged
to it; a disposition the agent it was recorded for), or it is the agent's live call (the call it is bridged to right now).`;

const ORDER = `Ordered by inserted_at then id, newest first; from and to bound inserted_at (the moment the row was appended:
for an original, when the attempt was created just before dialing; for a correction, when it was recorded), from inclusive
and to exclusive, from after to is 422 unprocessable (a rule across two parameters). Filters combine with AND and apply to each row's own columns. Every query
parameter is single-valued: a repeated parameter or the array form (name[]=...) is 400. Notes are shown decrypted.`;

const budget = RATE_BUDGETS.dispositions;

export function cdrRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/call_attempts',
      tags: ['Call attempts'],
      security,
      middleware: listMiddleware,
      summary: 'The CDR: every row, originals and corrections, newest first',
      description: `Every CDR row of the tenant: originals (corrects_id null) and the corrections appended to them (corrects_id =
the original; the latest correction of an original is its final state). ${ORDER} A correction carries the agent that
recorded it and the disposition it set, so disposition=promise_to_pay finds the corrections that recorded promises.`,
      request: { query: ListCallAttemptsQuery },
      responses: { 200: jsonContent(CallAttemptPage, 'A page of CDR rows'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await listCallAttempts(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/call_attempts/{id}/disposition',
      tags: ['Call attempts'],
      security,
      middleware: [requireManagement],
      summary: 'Disposition a call: append a correction row (and, for promise_to_pay, the promise)',
      description: `The CDR is append-only: the original row is never changed. This appends a correction row (corrects_id = {id})
that copies every fact of the original (debt, campaign, numbers, times, causes, compliance snapshot, ...) with the new
disposition, the agent (agent_id, default the original's) and the note. {id} must be an original row: a correction's id, an
unknown, foreign or malformed id are 404. Several dispositions of one call are allowed; each appends a row and the latest
is the final state.

note (up to 2000 characters, separate from promise.note) is encrypted at rest on the correction row, shown decrypted in
CDR views, never logged and never written to the audit log.

promise_to_pay requires promise (else 422 unprocessable); a promise with any other disposition is 422. promised_date must be
after today (UTC) and at most 90 days out (else 422). A promise can be recorded only for a debt in open, in_collection or
promise_to_pay (else 422). The promise references the correction row (call_attempt_id). In the same transaction the debt
moves to promise_to_pay. Unknown keys inside promise are 400 and nothing is appended; unknown top-level keys are ignored.
agent_id must be an agent of this tenant (400 invalid).

Compliance facts, in the same transaction as the correction row:
- Right-party contact (promise_to_pay, refused_to_pay, dispute, callback_requested, payment, conversation) on an attempt
  that was answered (answered_at set) records a telephone conversation with the consumer (source disposition, dated at the
  attempt's answered_at): the debt's last_conversation_at follows, and Regulation F's 7-day hiatus (gate regf_post_contact)
  refuses calls about the debt through the 7th day counting that day as day 1. On an attempt nobody answered it records
  nothing. One conversation per call: a second right-party disposition of the same call adds none.
- wrong_number: the dialed number goes on the tenant's internal do-not-call list (source wrong_number, gate dnc_listed for
  every debt and channel) and every consent of that number for this debt is revoked (voice and SMS).
- revoked_consent or do_not_call: the consumer told the agent to stop calling (a revocation by any reasonable means). The
  number goes on the internal do-not-call list (source verbal_revocation) and its voice consents are revoked.
An SMS START lifts neither listing (START undoes only its own keyword's STOP). Each listing is also audited as
dnc.opted_out with the source, channel and counts.

Audited as call_attempt.dispositioned about the debt (with the ids, the disposition, the promise terms and the debt state
change; never the note). Budget: ${budget.points} dispositions per tenant per ${budget.durationSeconds} s fixed window; over it
429 rate_limited (no Retry-After), decided before the row is looked up, so it does not reveal whether {id} exists.`,
      request: { params: IdParam, body: jsonBody(DispositionBody) },
      responses: {
        201: jsonContent(DispositionResult, 'The correction row appended, and the promise when promise_to_pay'),
        ...errorResponses(400, 401, 403, 404, 413, 415, 422, 429),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const result = await recordDisposition(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json'));
      return c.json(result, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/calls',
      tags: ['Calls'],
      security,
      middleware: [rejectArrayQueryForm],
      summary: 'Calls: original CDR rows, newest first',
      description: `One row per call attempt: the original rows only (corrections are in GET /v1/call_attempts). live=true gives
the calls not ended yet (ended_at null), live=false the ended ones. disposition matches the original's own disposition (the
engine outcome), not a later correction. ${ORDER}

${WIDGET_SCOPE} For a widget the page holds only those calls: its agent_id filter is forced to its own agent (naming its own
agent changes nothing; naming another agent is 403 forbidden), the other filters combine with it as usual. Tenant credentials
(\`dd_\`, \`ddu_\`) see every call of the tenant, agent_id matching the original row's own column.`,
      request: { query: ListCallsQuery },
      responses: { 200: jsonContent(CallPage, 'A page of calls'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await listCalls(deps, c.get('principal'), c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/calls/{call_id}',
      tags: ['Calls'],
      security,
      summary: 'A call by its switch call uuid: the original row and its timeline',
      description: `call_id is the switch call uuid (call_uuid). Answers \`call\`, the original row (its corrections are in GET
/v1/call_attempts), and \`timeline\`, what happened on the call in the order it happened, recorded as it happened: each entry
\`{at, event, ...}\` with event one of originate, ringing, answered, amd (\`verdict\`), bridged (\`agent_id\`), spoken
(\`purpose\`: seller_message, consent_notice, disclosure, tts_prompt, menu, ai_turn; \`text\`, the words the switch was asked to
say, with \`engine\` and \`voice\`), digit (\`digit\`), recording_started, recording_stopped, transferred and hangup (\`cause\`).
An unknown or foreign (another tenant's) call is 404, for every principal. ${WIDGET_SCOPE} A widget reading a call of its tenant
that is not its agent's own is 403 forbidden.`,
      request: { params: CallIdParam },
      responses: { 200: jsonContent(CallEnvelope, 'The call'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json(await getCall(deps, c.get('principal'), c.req.valid('param').call_id), 200),
  );

  return app;
}
