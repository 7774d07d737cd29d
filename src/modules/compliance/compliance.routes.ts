import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CompliancePolicySchema } from './compliance.policy';
import { compliancePreflight } from './compliance-preflight.service';
import { getPolicy, putPolicy } from './compliance-policy.service';
import { PolicyEnvelope, PreflightQuery, PreflightResponse } from './compliance.schemas';

const security = [{ bearer: [] }];
const tags = ['Compliance'];
const middleware = [requireManagement];

const POLICY_DESCRIPTION = `The tenant's own rules, applied after the law under the gate \`tenant_policy\`; they can only narrow what
may be dialed or texted. Every PUT stores a new version (version 0 is the platform default); each compliance decision
records the version it applied. Unknown keys are 400. Defaults: debts in paid, settled, disputed or closed are never
contacted; no other restriction.`;

export function complianceRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/compliance-policy',
      tags,
      security,
      middleware,
      summary: 'The tenant compliance policy in force',
      description: POLICY_DESCRIPTION,
      responses: { 200: jsonContent(PolicyEnvelope, 'Current policy'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json({ compliance_policy: await getPolicy(deps, c.get('principal').tenantId) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/compliance-policy',
      tags,
      security,
      middleware,
      summary: 'Replace the tenant compliance policy (new version)',
      description: `${POLICY_DESCRIPTION} Omitted fields take their defaults. 409 when another writer stored a version at the same moment.`,
      request: { body: jsonBody(CompliancePolicySchema) },
      responses: { 200: jsonContent(PolicyEnvelope, 'Stored'), ...errorResponses(400, 401, 403, 409, 413, 415) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ compliance_policy: await putPolicy(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/campaigns/{id}/compliance-preflight',
      tags,
      security,
      middleware,
      summary: 'Dry run of the compliance engine over the campaign’s dialable leads',
      description:
        'Evaluates up to `limit` dialable leads (workable debts whose next_dialable_at has come, with their primary number) in dialing order, exactly as the dialer would now (or at `at`), without dialing and without recording evidence. Answers counts by gate and a sample.',
      request: { params: IdParam, query: PreflightQuery },
      responses: { 200: jsonContent(PreflightResponse, 'Preflight'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return c.json(await compliancePreflight(deps, c.get('principal').tenantId, id, c.req.valid('query')), 200);
    },
  );
  return app;
}
