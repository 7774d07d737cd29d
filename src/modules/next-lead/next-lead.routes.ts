import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonContent, z } from '../../lib/openapi';
import { NEXT_LEAD_SCAN, nextLead } from './next-lead.service';

export const NextLeadSchema = z
  .object({
    campaign_id: z.string().uuid(),
    evaluated_at: z.string().openapi({ format: 'date-time' }),
    lead: z
      .object({
        source: z.enum(['callback', 'lead']).openapi({ description: 'A due callback, or a fresh lead' }),
        callback_id: z.string().uuid().nullable(),
        debt_id: z.string().uuid(),
        external_ref: z.string(),
        consumer_ref: z.string(),
        debt_state: z.string(),
        amount_cents: z.number().int(),
        currency: z.string(),
        phone_masked: z.string(),
        zones: z.array(z.string()).openapi({ description: 'The zones the call would be judged in' }),
      })
      .nullable()
      .openapi({ description: 'null when nothing is dialable now' }),
    candidates_checked: z.number().int(),
    skipped_by_gate: z.record(z.string(), z.number().int()).openapi({ description: 'Candidates before the chosen one that the engine would refuse, by gate' }),
  })
  .openapi('NextLead');

export function nextLeadRoutes(deps: AppDeps) {
  const app = createRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/campaigns/{id}/next-lead',
      tags: ['Campaigns'],
      security: [{ bearer: [] }],
      middleware: [requireManagement],
      summary: 'The next lead the campaign would dial now, without dialing',
      description: `Due callbacks of the campaign first (priority, then time; as the campaign claims them: not one that names its
agent, which its own timer dials, nor one resting after a refusal until its retry time), then dialable leads in dialing
order; the first candidate the compliance engine would allow now (a dry run: nothing is recorded and nothing is reserved, so the dialer may
take a different lead). Looks through at most ${NEXT_LEAD_SCAN} candidates; \`lead\` is null when none is dialable.
\`at\` evaluates as of another instant (default now).`,
      request: {
        params: IdParam,
        query: z.object({ at: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Evaluate as of this instant (default now)' }) }),
      },
      responses: { 200: jsonContent(NextLeadSchema, 'Preview'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const { at } = c.req.valid('query');
      return c.json(await nextLead(deps, c.get('principal').tenantId, c.req.valid('param').id, at ? new Date(at) : new Date()), 200);
    },
  );
  return app;
}
