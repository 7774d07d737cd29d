import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonContent } from '../../lib/openapi';
import { PenetrationQuery, PenetrationSchema, PromiseStatsSchema, SummarySchema } from './stats.schemas';
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
        'Each debt counts once per row. attempted: at least one original attempt in [from, to). reached: an attempt whose final disposition (its latest correction) is not failed, rejected, busy, no_answer, canceled, not_placed or reaped, or a conversation in the window. effective_contact: answered by a person (answered_human, or answered with AMD verdict human) or a conversation in the window. Percentages are of unique_accounts, rounded to two decimals. Unknown or foreign campaign ids give rows of zeros. The totals row counts consumers shared by several campaigns once.',
      request: { query: PenetrationQuery },
      responses: { 200: jsonContent(PenetrationSchema, 'Penetration'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(await penetration(deps, c.get('principal').tenantId, parseCampaignIds(q.campaign_ids, q.campaign_id), q.from, q.to), 200);
    },
  );
  return app;
}
