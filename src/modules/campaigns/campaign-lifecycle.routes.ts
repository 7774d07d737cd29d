import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent, z } from '../../lib/openapi';
import { DEFAULT_RUNNER_OPTIONS, RunnerOptionsBody } from '../dialer/runner-options';
import { acceptedStates, LIFECYCLE_VERBS, lifecycleTarget } from './campaign-lifecycle.rules';
import { campaignRunStats, transitionCampaign } from './campaign-lifecycle.service';
import { PACING_DECIMALS, RATE_PATTERN, RATIO_PATTERN } from './campaign-stats.view';
import { CampaignEnvelope } from './campaign.schemas';

const security = [{ bearer: [] }];
const tags = ['Campaigns'];
const middleware = [requireManagement];

const RunStats = z
  .object({
    dialed: z.number().int().openapi({ description: 'Calls placed by this run' }),
    blocked: z.number().int().openapi({ description: 'Leads the compliance engine refused during this run' }),
    finished: z.number().int().openapi({ description: 'Calls of this run with a final CDR row' }),
    reaped: z.number().int().openapi({ description: 'Calls closed by the reaper after call_ttl_ms' }),
    in_flight: z.number().int().openapi({ description: 'Calls placed and not yet finished' }),
    idle: z.string().nullable().openapi({
      description: `Why the last tick placed nothing more, null when it was not held back: for example no_agent_capacity, capacity_full,
no_dialable_leads, caller_id_pool_parked, switch_unavailable; an ai_voice run adds voice_ai_disabled, ai_paused (the kill switch),
ai_agent_not_live (no agent, or the campaign's agent is not live), ai_concurrency_full (10 AI calls of the campaign in flight) and ai_budget_exhausted (month-to-date metered cost reached
ai_monthly_budget_usd)`,
    }),
    pacing: z.object({
      ratio: z
        .string()
        .regex(RATIO_PATTERN)
        .openapi({ description: `Lines per available agent the predictive pacer uses now: a decimal string with ${PACING_DECIMALS} decimal places`, example: '1.0200' }),
      abandoned: z.number().int(),
      connected: z.number().int(),
      abandonment_rate: z
        .string()
        .regex(RATE_PATTERN)
        .nullable()
        .openapi({ description: `Share of the last 200 human-answered calls that were abandoned, 0 to 1: a decimal string with ${PACING_DECIMALS} decimal places; null before the first`, example: '0.0150' }),
      tokens: z.number().int().nullable().openapi({ description: 'Dials still allowed this second under max_cps; null without a ceiling' }),
    }),
  })
  .openapi('CampaignRunStats');

const StatsEnvelope = z
  .object({ campaign_id: z.string().uuid(), state: z.string(), running: z.boolean(), stats: RunStats.nullable() })
  .openapi('CampaignStats');

const DESCRIPTIONS: Record<(typeof LIFECYCLE_VERBS)[number], string> = {
  start: `Persists \`running\` (audit entry campaign.start with the runner options), then starts the campaign's run workflow
(\`campaign-run:<tenant_id>:<campaign_id>\`, search attributes TenantId and CampaignId) or, when one is open, signals it. Accepted from
${acceptedStates('start').join(', ')}; on a running campaign it changes nothing (idempotent). The optional body holds the runner options,
validated fail-closed: a wrong type, a value out of range or any other key (\`ai_disclosure_configured\` included) is 400 and nothing
changes. A 500 \`internal\` after the state was saved (the workflow service unreachable) is safe to repeat.`,
  resume: `Alias of start. On a paused campaign whose run is open, runner options sent with the call replace the run's own from its
next tick; without a body the run keeps the options it has.`,
  pause: `Persists \`paused\`, then signals the run: it stops dialing; calls in flight finish and reach the CDR. Accepted from
${acceptedStates('pause').join(', ')}.`,
  stop: `Persists \`completed\` (terminal), then signals the run to end. Accepted from ${acceptedStates('stop').join(', ')}; a draft
never ran and is archived instead.`,
  archive: `Persists \`archived\`. Accepted from ${acceptedStates('archive').join(', ')}.`,
};

export function campaignLifecycleRoutes(deps: AppDeps) {
  const app = createRouter();

  for (const verb of LIFECYCLE_VERBS) {
    const takesOptions = verb === 'start' || verb === 'resume';
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/campaigns/{id}/${verb}`,
        tags,
        security,
        middleware,
        summary: `${verb[0]!.toUpperCase()}${verb.slice(1)} the campaign (to ${lifecycleTarget(verb, acceptedStates(verb)[0]!)})`,
        description: `${DESCRIPTIONS[verb]} Any other state is 409 \`conflict\`.`,
        request: takesOptions ? { params: IdParam, body: jsonBody(RunnerOptionsBody, false) } : { params: IdParam },
        responses: {
          200: jsonContent(CampaignEnvelope, 'The campaign in its new state'),
          ...errorResponses(...(takesOptions ? [400, 401, 403, 404, 409, 413, 415, 500] : [401, 403, 404, 409, 500])),
        },
      }),
      async (c) => {
        const principal = c.get('principal');
        const { id } = c.req.valid('param');
        // Without a JSON body the validator hands over `{}` (not undefined and without the zod
        // defaults): parsing it here gives every run the full, defaulted options.
        const raw = takesOptions ? ((c.req.valid('json' as never) ?? {}) as Record<string, unknown>) : {};
        const options = takesOptions ? RunnerOptionsBody.parse(raw) : DEFAULT_RUNNER_OPTIONS;
        const given = Object.keys(raw).length > 0;
        return c.json({ campaign: await transitionCampaign(deps, principal.tenantId, actorOf(principal), id, verb, options, given) }, 200);
      },
    );
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/campaigns/{id}/stats',
      tags,
      security,
      middleware,
      summary: 'Live counters of the campaign run',
      description: `\`stats\` comes from the open run workflow (a query) while the campaign is running; it is null when the campaign is
not running, no run is open or the run does not answer within a few seconds (no worker polls its task queue). A 500 \`internal\`
means the workflow service could not be read. Counters cover calls placed since the run started (they survive continue-as-new and worker restarts:
they are read from the CDR).`,
      request: { params: IdParam },
      responses: { 200: jsonContent(StatsEnvelope, 'Run counters'), ...errorResponses(401, 403, 404, 500) },
    }),
    async (c) => c.json(await campaignRunStats(deps, c.get('principal').tenantId, c.req.valid('param').id), 200),
  );

  return app;
}
