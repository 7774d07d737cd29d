import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { RewindBody, RewindFilterBody, RewindPreviewQuery, RewindPreviewResponse, RewindResponse } from './rewind.schemas';
import { rewind, rewindPreview } from './rewind.service';

const security = [{ bearer: [] }];
const tags = ['Campaigns'];
const middleware = [requireManagement];

const FILTERS = `Filters (all optional, combined with AND): \`dispositions\` matches the debt's latest disposition (the final state,
latest correction included, of its most recent placed attempt); \`max_attempts\` keeps debts with at most that many placed
original attempts; \`last_attempt_older_than_days\` keeps debts whose latest attempt is older (never-attempted debts match).
Debts in paid, settled or disputed are never rewound. \`amd_verdicts\` is reserved: 422 unprocessable. Bad filter types are 400.`;

export function rewindRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/campaigns/{id}/rewind/preview',
      tags,
      security,
      middleware,
      summary: 'Which debts a rewind would requeue (filters in the query)',
      description: FILTERS,
      request: { params: IdParam, query: RewindPreviewQuery },
      responses: { 200: jsonContent(RewindPreviewResponse, 'Preview'), ...errorResponses(400, 401, 403, 404, 422) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const filter = {
        dispositions: q.dispositions?.split(',').map((s) => s.trim()).filter(Boolean),
        max_attempts: q.max_attempts,
        last_attempt_older_than_days: q.last_attempt_older_than_days,
        amd_verdicts: q.amd_verdicts,
      };
      return c.json(await rewindPreview(deps, c.get('principal').tenantId, c.req.valid('param').id, filter), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/campaigns/{id}/rewind/preview',
      tags,
      security,
      middleware,
      summary: 'Which debts a rewind would requeue (filters in the body)',
      description: FILTERS,
      request: { params: IdParam, body: jsonBody(RewindFilterBody, false) },
      responses: { 200: jsonContent(RewindPreviewResponse, 'Preview'), ...errorResponses(400, 401, 403, 404, 413, 415, 422) },
    }),
    async (c) => c.json(await rewindPreview(deps, c.get('principal').tenantId, c.req.valid('param').id, c.req.valid('json') ?? {}), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/campaigns/{id}/rewind',
      tags,
      security,
      middleware,
      summary: 'Requeue a campaign’s debts',
      description: `${FILTERS} Sets each matching debt's requeued_at watermark, makes it dialable now and brings closed debts back to
open; the CDR is untouched. \`keep_scheduled_callbacks: false\` cancels the campaign's pending callbacks of the rewound debts.`,
      request: { params: IdParam, body: jsonBody(RewindBody) },
      responses: { 200: jsonContent(RewindResponse, 'Rewound'), ...errorResponses(400, 401, 403, 404, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await rewind(deps, principal.tenantId, c.req.valid('param').id, actorOf(principal), c.req.valid('json')), 200);
    },
  );
  return app;
}
