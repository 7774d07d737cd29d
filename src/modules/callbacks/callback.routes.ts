import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { unprocessable } from '../../lib/errors';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CALLBACK_VERBS, type CallbackVerb } from './callback.rules';
import { CallbackEnvelope, CallbackList, CreateCallbackBody, ListCallbacksQuery } from './callback.schemas';
import { createCallback, listCallbacks, transitionCallback } from './callback.service';

const security = [{ bearer: [] }];
const tags = ['Callbacks'];
const middleware = [requireManagement];

const VERB_SUMMARY: Record<CallbackVerb, string> = {
  complete: 'Mark a pending callback done',
  cancel: 'Cancel a pending callback',
  miss: 'Mark a pending callback missed',
};

export function callbackRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/callbacks',
      tags,
      security,
      middleware,
      summary: 'Callbacks of the tenant, or the due queue',
      description: `Without due: the callbacks in status (default pending), by scheduled_at then id, at most limit of them (narrow
with campaign_id and debt_id; there is no cursor). With due=now (or true or 1): the due queue, pending callbacks with
scheduled_at at or before now, ordered by priority (highest first), then scheduled_at, then id; the runner dials these
before fresh leads. Unknown or foreign campaign and debt ids give an empty list; malformed ones are 400. due with a status
other than pending is 422 \`unprocessable\` (the queue holds pending callbacks only; a rule across two fields).`,
      request: { query: ListCallbacksQuery },
      responses: { 200: jsonContent(CallbackList, 'Callbacks'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => {
      const query = c.req.valid('query');
      if (query.due && query.status !== undefined && query.status !== 'pending') throw unprocessable("'due' lists pending callbacks only: drop 'status' or set it to pending");
      return c.json(await listCallbacks(deps, c.get('principal').tenantId, query), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/callbacks',
      tags,
      security,
      middleware,
      summary: 'Schedule a callback',
      description: `Creates a pending callback. Unknown keys are 400 naming the key. An unknown, foreign or malformed debt_id is
404. agent_id and campaign_id (default the debt's campaign; null for none) must belong to this tenant (400 invalid).
422 unprocessable when scheduled_at is less than 10 minutes ahead, when contact_phone is not a contact of the debt, or when
the number is in quarantine: it is one of the tenant's DIDs in status quarantine, or it has an active entry on the tenant's
do-not-call list (a callback to it could never be placed). The compliance gate chain still decides at dial time.
Audited as callback.scheduled about the debt. A timer (Temporal workflow callback:<tenant_id>:<callback_id>) acts at
scheduled_at. A callback of a campaign that names no agent is the campaign run's: the timer wakes the run, which dials due
callbacks before fresh leads and bridges any reachable seat. Any other callback is dialed by the timer itself: one naming
agent_id rings and bridges that agent's seat only (never another), and one without a campaign is dialed as an agent call
of no campaign. It is dialed once the named agent is dialable (active, available, its browser softphone registered or its
external seat checked in, not reserved by a manual dial; with no agent named, any such seat), a caller id is at hand (the
campaign's caller_id_pool or caller_ids when its calls are agent calls, otherwise one of the tenant's active DIDs, in the
destination's area code when there is one), no call to the debt or number is in flight, the tenant's max_cps and channels
allow it, and the compliance engine allows it as an automated voice call (every refusal is recorded evidence). Until then
the timer tries again every 15 seconds (5 minutes after a compliance refusal): there is no fallback to another agent, since
the consumer was promised that person. Dialed, the callback becomes done (audited callback.dialed with the call attempt,
agent and campaign) and the call attempt carries the agent. A callback still pending CALLBACK_MISS_AFTER_MS (default 30
minutes) after scheduled_at becomes missed, audited as callback.missed with actor type workflow. The callback is created
even when the timer cannot be started.`,
      request: { body: jsonBody(CreateCallbackBody) },
      responses: { 201: jsonContent(CallbackEnvelope, 'Scheduled'), ...errorResponses(400, 401, 403, 404, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ callback: await createCallback(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 201);
    },
  );

  for (const verb of Object.keys(CALLBACK_VERBS) as CallbackVerb[]) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/callbacks/{id}/${verb}`,
        tags,
        security,
        middleware,
        summary: VERB_SUMMARY[verb],
        description: `pending to ${CALLBACK_VERBS[verb]}. done, cancelled and missed are terminal: any further transition is 409 conflict. No body is needed (a JSON one is ignored). Audited as callback.${CALLBACK_VERBS[verb]} about the debt.`,
        request: { params: IdParam },
        responses: { 200: jsonContent(CallbackEnvelope, `The callback, now ${CALLBACK_VERBS[verb]}`), ...errorResponses(401, 403, 404, 409, 413, 415) },
      }),
      async (c) => {
        const principal = c.get('principal');
        return c.json({ callback: await transitionCallback(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, verb) }, 200);
      },
    );
  }

  return app;
}
