import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { ListPromisesQuery, PatchPromiseBody, PromiseEnvelope, PromiseList } from './promise.schemas';
import { listPromises, resolvePromiseStatus } from './promise.service';

const security = [{ bearer: [] }];
const tags = ['Promises'];
const middleware = [requireManagement];

export function promiseRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/promises',
      tags,
      security,
      middleware,
      summary: 'Promises to pay of the tenant, newest first',
      description:
        'Promises are created by a promise_to_pay disposition (POST /v1/call_attempts/{id}/disposition). Ordered by created_at then id, newest first; filters combine with AND. An unknown or foreign debt_id gives an empty page, never 404; a malformed one is 400.',
      request: { query: ListPromisesQuery },
      responses: { 200: jsonContent(PromiseList, 'A page of promises'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await listPromises(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/promises/{id}',
      tags,
      security,
      middleware,
      summary: 'Resolve a pending promise: kept, broken or cancelled',
      description: `Moves a pending promise to kept, broken or cancelled; all three are terminal, so any further PATCH is 409
conflict. Body {status} only (an unknown key is 400 naming it; status pending or anything else is 400). When the debt is in
promise_to_pay and this was its last pending promise, the debt returns to in_collection in the same transaction (a paid or
settled debt is marked through the debt import). Audited as promise.kept, promise.broken or promise.cancelled about the debt.`,
      request: { params: IdParam, body: jsonBody(PatchPromiseBody) },
      responses: {
        200: jsonContent(PromiseEnvelope, 'The promise in its new status'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const promise = await resolvePromiseStatus(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json').status);
      return c.json({ promise }, 200);
    },
  );

  return app;
}
