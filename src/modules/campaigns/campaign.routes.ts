import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CampaignEnvelope, CampaignList, CreateCampaignBody, ListCampaignsQuery, PatchCampaignBody } from './campaign.schemas';
import { createCampaign, getCampaign, listCampaigns, updateCampaign } from './campaign.service';

const security = [{ bearer: [] }];
const tags = ['Campaigns'];
const middleware = [requireManagement];

const ERRORS_NOTE = `Errors: 400 \`bad_request\` for malformed JSON, a wrong JSON type or an unknown key (named in the message; this
includes the read-only id, tenant_id, state, channel, created_at, updated_at); 400 \`invalid\` for a value that breaks a domain rule
(named in the message; nothing is stored); 409 \`conflict\` when another campaign of the tenant has the same name, compared
case-insensitively. Tenant-management scope: a \`ddw_\` widget token is 403. Every change is an audit entry
(campaign.created, campaign.updated with the changed fields and their new values).`;

export function campaignRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/campaigns',
      tags,
      security,
      middleware,
      summary: 'Campaigns of the tenant, oldest first',
      description: 'Keyset pages ordered by (created_at, id): `limit` (default 100, max 1000; above is 400) and the opaque `cursor` from `next_cursor` (null on the last page; a cursor that does not decode is 400).',
      request: { query: ListCampaignsQuery },
      responses: { 200: jsonContent(CampaignList, 'A page of campaigns'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(await listCampaigns(deps, c.get('principal').tenantId, q.limit, q.cursor), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/campaigns',
      tags,
      security,
      middleware,
      summary: 'Create a campaign (state draft)',
      description: `Only \`name\` is required; every other write field takes its default (campaign_type predictive, booleans false,
amd_enabled null, ivr_menu and consult_config {}, pools empty). \`channel\` is derived from campaign_type and \`state\` starts at
draft; neither is writable. ${ERRORS_NOTE}`,
      request: { body: jsonBody(CreateCampaignBody) },
      responses: { 201: jsonContent(CampaignEnvelope, 'Created, state draft'), ...errorResponses(400, 401, 403, 409, 413, 415) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ campaign: await createCampaign(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/campaigns/{id}',
      tags,
      security,
      middleware,
      summary: 'A campaign',
      request: { params: IdParam },
      responses: { 200: jsonContent(CampaignEnvelope, 'The campaign'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ campaign: await getCampaign(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/campaigns/{id}',
      tags,
      security,
      middleware,
      summary: 'Change campaign settings',
      description: `Absent keys are unchanged; null clears a nullable field; an empty string clears optout_digit and tts_prompt;
\`{}\` clears ivr_menu and consult_config. The rules between fields (calling window both or neither and start before end,
min_dial_ratio not above max_dial_ratio, sms_body present for sms_blast) are checked on the result, so a patch of one side is
checked against the stored other side. \`state\` is never writable (400 \`bad_request\` naming the key; use the lifecycle
routes). Any state may be patched. A patch that changes nothing writes nothing. ${ERRORS_NOTE}`,
      request: { params: IdParam, body: jsonBody(PatchCampaignBody) },
      responses: { 200: jsonContent(CampaignEnvelope, 'The updated campaign'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    }),
    async (c) => {
      const principal = c.get('principal');
      const campaign = await updateCampaign(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json'));
      return c.json({ campaign }, 200);
    },
  );

  return app;
}
