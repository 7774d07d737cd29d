import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, z } from '../../lib/openapi';
import { acceptsOver, ARTIFACT_HASH_HEADER, sha256Hex } from '../compliance-reports/artifact';
import { AiUsageQuery, AiUsageSchema } from './ai-usage.schemas';
import { AI_USAGE_CSV_COLUMNS, AI_USAGE_MAX_DAYS, aiUsage, aiUsageCsv } from './ai-usage.service';

export function aiUsageRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/ai-usage',
      tags: ['Stats'],
      security: [{ bearer: [] }],
      middleware: [requireManagement],
      summary: 'Metered voice-AI usage of a window, with a daily series (JSON or CSV)',
      description: `One metered row exists per answered AI call, billed once per call uuid: billable_seconds are the answer-to-end seconds
capped at the call's ceiling (ai_max_call_seconds_effective), billed per started minute (ceil(seconds / 60)) at the rate in force when
the call was metered, which the row keeps. The window is half-open, \`[from, to)\` by answer time; the defaults are the current UTC month.
\`from\` must be before \`to\` and the window at most ${AI_USAGE_MAX_DAYS} days (422 \`unprocessable\` otherwise: a rule across both
fields; a malformed date or campaign_id, or an unknown query key, is 400 \`bad_request\`). Totals are sums of the rows: \`billable_minutes\` sums each call's started minutes and
\`estimated_cost_usd\` each row's own cost; \`minute_rate_usd\` is the rate new calls are metered at now. Decimals are strings with 4
places. \`daily\` has one entry per UTC date the window touches, dates without calls included.

CSV (format=csv, or an Accept header preferring text/csv when format is absent): header \`${AI_USAGE_CSV_COLUMNS.join(',')}\`, then one
line per entry of \`daily\`, CRLF line ends. Both formats carry X-Artifact-SHA256, the SHA-256 of the exact body bytes. Tenant-management
scope: a \`ddw_\` widget token is 403.`,
      request: { query: AiUsageQuery },
      responses: {
        200: {
          description: 'Usage',
          headers: { [ARTIFACT_HASH_HEADER]: { description: 'Lowercase hex SHA-256 of the body bytes', schema: { type: 'string' as const, pattern: '^[0-9a-f]{64}$' } } },
          content: {
            'application/json': { schema: AiUsageSchema },
            'text/csv': { schema: z.string().openapi({ description: `Header ${AI_USAGE_CSV_COLUMNS.join(',')}, then one line per date` }) },
          },
        },
        ...errorResponses(400, 401, 403, 422),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const format = query.format ?? (acceptsOver(c.req.header('accept'), 'text/csv') ? 'csv' : 'json');
      const usage = await aiUsage(deps, c.get('principal').tenantId, query);
      const csv = format === 'csv';
      const body = Buffer.from(csv ? aiUsageCsv(usage) : JSON.stringify(usage), 'utf8');
      return c.body(new Uint8Array(body), 200, {
        'content-type': csv ? 'text/csv; charset=utf-8' : 'application/json',
        [ARTIFACT_HASH_HEADER]: sha256Hex(body),
        'cache-control': 'no-store',
        vary: 'Accept',
      });
    },
  );

  return app;
}
