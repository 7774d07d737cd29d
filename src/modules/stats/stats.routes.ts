import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonContent } from '../../lib/openapi';
import { capacity } from './capacity.service';
import { CapacityQuery, CapacitySchema, PenetrationQuery, PenetrationSchema, PromiseStatsSchema, SummarySchema } from './stats.schemas';
import { parseCampaignIds, penetration, promiseStats, statsSummary } from './stats.service';

const security = [{ bearer: [] }];
const tags = ['Stats'];
const middleware = [requireManagement];

export function statsRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/summary',
      tags,
      security,
      middleware,
      summary: 'Today’s calls, connects, seats and running campaigns (UTC day)',
      responses: { 200: jsonContent(SummarySchema, 'Summary'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await statsSummary(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/promises',
      tags,
      security,
      middleware,
      summary: 'Open promises per currency and the 30-day kept rate',
      responses: { 200: jsonContent(PromiseStatsSchema, 'Promise stats'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await promiseStats(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/penetration',
      tags,
      security,
      middleware,
      summary: 'How much of campaigns’ debt base was attempted, reached and effectively contacted',
      description:
        'Each debt counts once per row. attempted: at least one original attempt in [from, to). reached: an attempt whose final disposition (its latest correction) is not failed, rejected, busy, no_answer, canceled, not_placed or reaped, or a conversation in the window. effective_contact: answered by a person (answered_human, or answered with AMD verdict human) or a conversation in the window. Percentages are of unique_accounts, rounded to two decimals. Unknown or foreign campaign ids give rows of zeros. The totals row counts consumers shared by several campaigns once. Neither campaign_ids nor campaign_id, or from after to, is 422 unprocessable (rules across parameters); a malformed value is 400.',
      request: { query: PenetrationQuery },
      responses: { 200: jsonContent(PenetrationSchema, 'Penetration'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(await penetration(deps, c.get('principal').tenantId, parseCampaignIds(q.campaign_ids, q.campaign_id), q.from, q.to), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/capacity',
      tags,
      security,
      middleware,
      summary: 'The tenant’s dial ceilings and what uses them now',
      description:
        'limits: the tenant’s max_cps and max_concurrent_channels (each null when unset). channels_in_use: calls in flight, that is original call rows started in the last 24 h with no end of their own, no correction carrying ended_at and not marked not_placed. dials_last_second: original call rows started in the second before the request, the window max_cps is held to. Limits and counts are read in one transaction. supervision is its own lane: limit is the deployment setting MAX_SUPERVISION_CHANNELS (max_supervision_channels), in_use the tenant’s live supervision sessions (pending or active, one per (call, supervisor), on calls that have not ended). Supervisor legs are never counted in channels_in_use and calls are never counted as supervision sessions, so neither lane can exhaust the other. agents (beyond the SPEC fields) sets the planned shifts (GET/POST /v1/planned-shifts) against the agents present: `now` is the floor at the request instant as the dial loop reads it (dialable seats, the ones leaving before a line dialed now would be done with them, the ones arriving before it would be answered, and the lead and handle times those edges are measured with; see docs/dial-loop.md, Planned shifts), and `intervals` counts the planned agents per interval of interval_minutes from the UTC boundary at or before now, with the agents present on the current one. A bad interval_minutes or intervals is 400 bad_request.',
      request: { query: CapacityQuery },
      responses: { 200: jsonContent(CapacitySchema, 'Capacity'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(await capacity(deps, c.get('principal').tenantId, new Date(), { intervalMinutes: q.interval_minutes, intervals: q.intervals }), 200);
    },
  );
  return app;
}
