import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { adminAuth } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { AdminCreateTenantBody, AdminCreateTenantResponse, AdminPatchTenantBody, TenantEnvelope } from './tenant.schemas';
import { createTenant, getTenant, patchTenantAsOperator, setTenantStatus } from './tenant.service';

const security = [{ operatorBearer: [] }];
const tags = ['Admin'];
const RATE_NOTE =
  'Failed operator authentications are counted per calling address (10 per 60 s fixed window) before the token is compared; over budget every request is 429 rate_limited until the window ends.';

export function adminTenantRoutes(deps: AppDeps) {
  const app = createRouter();
  app.use('/v1/admin/*', adminAuth(deps));

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/admin/tenants',
      tags,
      security,
      summary: 'Provision a tenant with its admin agent and first API key',
      description: `Optional \`agent_wrap_up_seconds\` (0 to 3600, default 0: the wrap-up cap a seat spends in wrap_up after a bridged call) and \`plan_status\` (active, trialing, past_due, suspended, cancelled; default active). Types and unknown keys are 400; semantic problems (tier vocabulary, voice-AI eligibility, email, extension, wrap-up cap range, plan_status vocabulary) are 422 and no tenant is created. Tenant names are unique platform-wide (409). ${RATE_NOTE}`,
      request: { body: jsonBody(AdminCreateTenantBody) },
      responses: {
        201: jsonContent(AdminCreateTenantResponse, 'Tenant created; the dd_ token is shown once'),
        ...errorResponses(400, 401, 409, 413, 415, 422, 429),
      },
    }),
    async (c) => c.json(await createTenant(deps, c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/admin/tenants/{id}',
      tags,
      security,
      summary: 'Read any tenant',
      request: { params: IdParam },
      responses: { 200: jsonContent(TenantEnvelope, 'The tenant'), ...errorResponses(401, 404, 429) },
    }),
    async (c) => c.json({ tenant: await getTenant(deps, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/admin/tenants/{id}',
      tags,
      security,
      summary: 'Change a tenant’s plan, limits and seller identification',
      description:
        'Every field is optional. Retired tiers (compliance_pro, audit_shield) cannot be newly assigned; voice_ai_enabled needs a tier with a voice-AI allowance. `ai_max_call_seconds: null` restores the platform default. `agent_wrap_up_seconds` (0 to 3600, else 422) is the wrap-up cap: above 0 a seat whose bridged call ends spends that long in wrap_up before a durable timer makes it available; 0 sends it straight back to available; a change applies from the next call end (a running wrap-up keeps its end). `plan_status` (active, trialing, past_due, suspended, cancelled, else 422) is the billing plan state the supervision eavesdrop modes read. Non-integer or non-string types are 400. Answers `{tenant}`.',
      request: { params: IdParam, body: jsonBody(AdminPatchTenantBody) },
      responses: { 200: jsonContent(TenantEnvelope, 'The updated tenant'), ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429) },
    }),
    async (c) => c.json({ tenant: await patchTenantAsOperator(deps, c.req.valid('param').id, c.req.valid('json')) }, 200),
  );

  for (const [verb, status] of [
    ['suspend', 'suspended'],
    ['reactivate', 'active'],
  ] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/admin/tenants/{id}/${verb}`,
        tags,
        security,
        summary: verb === 'suspend' ? 'Suspend a tenant' : 'Reactivate a suspended tenant',
        description:
          verb === 'suspend'
            ? 'Every credential of a suspended tenant (API keys, sessions, widget tokens) is answered 403 forbidden until reactivation; nothing is revoked. Idempotent.'
            : 'Credentials that were valid before the suspension work again. Idempotent.',
        request: { params: IdParam },
        responses: { 200: jsonContent(TenantEnvelope, 'The tenant'), ...errorResponses(401, 404, 429) },
      }),
      async (c) => c.json({ tenant: await setTenantStatus(deps, c.req.valid('param').id, status) }, 200),
    );
  }
  return app;
}
