import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { notFound } from '../../lib/errors';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent, z } from '../../lib/openapi';
import { UserSchema } from '../users/user.schemas';
import { getCurrentUser } from '../users/user.service';
import { PatchTenantBody, PutRetentionBody, RetentionResult, TenantEnvelope, TenantSchema } from './tenant.schemas';
import { getOwnTenant, getTenant, renameTenant, setRetentionMonths } from './tenant.service';

const security = [{ bearer: [] }];
const tags = ['Tenant'];

export function tenantRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me',
      tags,
      security,
      summary: 'The calling tenant, and the user for a dashboard session',
      description:
        'The Tenant view includes `agent_wrap_up_seconds` (the wrap-up cap a seat spends in wrap_up after a bridged call; 0 = straight back to available) and `plan_status` (active, trialing, past_due, suspended, cancelled); both are read-only here and set by the platform operator. Each API process answers from a copy of the tenant kept for at most a second (CREDENTIAL_CACHE_TTL_MS, as credentials are): a change made through the same process shows on the next request, one made elsewhere (another API process, a billing run setting plan_status) within that second.',
      responses: {
        200: jsonContent(z.object({ tenant: TenantSchema, user: UserSchema.optional() }), 'Caller context'),
        ...errorResponses(401, 403),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const tenant = await getOwnTenant(deps, principal.tenantId);
      if (principal.kind !== 'user') return c.json({ tenant }, 200);
      return c.json({ tenant, user: await getCurrentUser(deps, principal.tenantId, principal.userId) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/tenant',
      tags,
      security,
      middleware: [requireManagement],
      summary: 'Rename the tenant',
      description: 'Only `name` is editable; other keys (agent_wrap_up_seconds and plan_status included: the operator sets those) are ignored.',
      request: { body: jsonBody(PatchTenantBody) },
      responses: { 200: jsonContent(TenantEnvelope, 'The tenant'), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ tenant: await renameTenant(deps, principal.tenantId, actorOf(principal), c.req.valid('json').name) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/tenant/retention',
      tags,
      security,
      middleware: [requireManagement],
      summary: 'Set how long call recordings are kept',
      description:
        'Sets `retention_months`, 36 to 240: Regulation F keeps the records that evidence compliance, call recordings included, three years after the last collection activity (12 CFR 1006.100(a)), so a value below 36, above 240 or not an integer is 400 `bad_request` naming the field. Every recording whose audio is still kept is re-dated in the same transaction to its creation date (UTC) plus the new value, so the hourly retention sweep purges by the new horizon (a longer retention keeps audio a shorter one would have purged); a recording under legal hold keeps its audio whatever its date. A `dd_` key or a `ddu_` session of an `account_admin` user may change it: a member is 403 `forbidden`, as is a widget token. Audited as `tenant.retention_changed` with the old and new value and the count re-dated; repeating the current value changes and records nothing. Unknown body keys are 400.',
      request: { body: jsonBody(PutRetentionBody) },
      responses: {
        200: jsonContent(RetentionResult, 'The tenant with its new retention, and how many recordings were re-dated'),
        ...errorResponses(400, 401, 403, 413, 415),
      },
    }),
    async (c) => c.json(await setRetentionMonths(deps, c.get('principal'), c.req.valid('json').retention_months), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/tenants',
      tags,
      security,
      summary: 'The tenants this credential can see (exactly one)',
      responses: { 200: jsonContent(z.object({ tenants: z.array(TenantSchema) }), 'One tenant'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json({ tenants: [await getTenant(deps, c.get('principal').tenantId)] }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/tenants/{id}',
      tags,
      security,
      summary: 'The own tenant by id; any other id is 404',
      request: { params: IdParam },
      responses: { 200: jsonContent(TenantEnvelope, 'The tenant'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const tenantId = c.get('principal').tenantId;
      if (id.toLowerCase() !== tenantId) throw notFound();
      return c.json({ tenant: await getTenant(deps, tenantId) }, 200);
    },
  );
  return app;
}
