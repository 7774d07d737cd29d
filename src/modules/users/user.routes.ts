import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CreateUserBody, ListUsersQuery, UserEnvelope, UserList } from './user.schemas';
import { createUser, disableUser, enableUser, listUsers } from './user.service';

const security = [{ bearer: [] }];
const tags = ['Users'];
const middleware = [requireManagement];

export function userRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/users',
      tags,
      security,
      middleware,
      summary: 'Dashboard users of the tenant, oldest first',
      request: { query: ListUsersQuery },
      responses: { 200: jsonContent(UserList, 'A page of users'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(await listUsers(deps, c.get('principal').tenantId, q.limit, q.cursor), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/users',
      tags,
      security,
      middleware,
      summary: 'Create a dashboard user',
      description:
        'Allowed to a dd_ key (how the first user is created) and to any ddu_ session. The first user of a tenant gets role account_admin, later ones member. Email is the global login identifier, stored lowercase: 409 when any tenant already uses it. Password 12 to 128 characters (422).',
      request: { body: jsonBody(CreateUserBody) },
      responses: { 201: jsonContent(UserEnvelope, 'Created'), ...errorResponses(400, 401, 403, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ user: await createUser(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/users/{id}',
      tags,
      security,
      middleware,
      summary: 'Disable a user and revoke all of its sessions (idempotent)',
      request: { params: IdParam },
      responses: { 200: jsonContent(UserEnvelope, 'Disabled'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ user: await disableUser(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/users/{id}/enable',
      tags,
      security,
      middleware,
      summary: 'Re-enable a disabled user (revoked sessions stay revoked)',
      request: { params: IdParam },
      responses: { 200: jsonContent(UserEnvelope, 'Enabled'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ user: await enableUser(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );
  return app;
}
