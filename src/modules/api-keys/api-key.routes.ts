import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { ApiKeyEnvelope, ApiKeyList, CreateApiKeyBody, CreatedApiKey, ListApiKeysQuery } from './api-key.schemas';
import { createApiKey, listApiKeys, revokeApiKey } from './api-key.service';

const security = [{ bearer: [] }];
const tags = ['API keys'];
const middleware = [requireManagement];

export function apiKeyRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/api_keys',
      tags,
      security,
      middleware,
      summary: 'API keys of the tenant (revoked ones included), oldest first',
      request: { query: ListApiKeysQuery },
      responses: { 200: jsonContent(ApiKeyList, 'A page of keys'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(await listApiKeys(deps, c.get('principal').tenantId, q.limit, q.cursor), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/api_keys',
      tags,
      security,
      middleware,
      summary: 'Mint a dd_ key (shown once)',
      request: { body: jsonBody(CreateApiKeyBody, false) },
      responses: { 201: jsonContent(CreatedApiKey, 'Minted'), ...errorResponses(400, 401, 403, 413, 415) },
    }),
    async (c) => {
      const principal = c.get('principal');
      const body = c.req.valid('json') ?? {};
      return c.json(await createApiKey(deps, principal.tenantId, actorOf(principal), body.label ?? ''), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/api_keys/{id}',
      tags,
      security,
      middleware,
      summary: 'Revoke a key; effective on the next request (idempotent)',
      request: { params: IdParam },
      responses: { 200: jsonContent(ApiKeyEnvelope, 'Revoked'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ api_key: await revokeApiKey(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );
  return app;
}
