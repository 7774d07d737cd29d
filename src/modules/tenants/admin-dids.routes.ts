import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { adminAuth } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { AdminProvisionDidsBody, AdminProvisionDidsResult } from './admin-dids.schemas';
import { provisionHouseDids } from './admin-dids.service';

/**
 * The operator's DID provisioning. It carries adminAuth on the route itself, so it holds whether or
 * not it is mounted behind the admin tenant router's `/v1/admin/*` middleware.
 */
export function adminDidRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/admin/tenants/{id}/dids',
      tags: ['Admin'],
      security: [{ operatorBearer: [] }],
      middleware: [adminAuth(deps)],
      summary: 'Provision house DIDs to a tenant',
      description: `Body \`{e164s}\` required: 1 to 1000 E.164 numbers; \`attestation\` (A, B, C, unknown; default unknown), \`us_state\` (two
letters) and \`labels\` optional, applied to the numbers added. Adds each number the tenant does not hold yet as a DID with origin
\`house\` (the tenant API can only register customer numbers), status active, npa derived from a +1 number. Idempotent per number: a
number the tenant already holds, whatever its origin or status, is counted in \`existing\` and left unchanged; a number listed twice
counts once. Answers 201 \`{dids, created, existing}\` with every requested number as the tenant now holds it. Each added DID is an audit
entry did.created with actor operator. A house DID needs no verification (\`verification\` null): the operator vouches for it. A
number is an active DID of at most one tenant: a number active in another tenant is 409 \`conflict\` naming the number, never the
tenant, and nothing is added. Errors: 400 \`bad_request\` for malformed JSON, wrong types or an unknown key; 422
\`unprocessable\` for a count outside 1-1000 or a rule on a number, attestation, us_state or labels (named in the message; nothing is
added); 404 \`not_found\` for an unknown or malformed tenant id; 401 without the operator bearer; 429 \`rate_limited\` after too many
failed operator authentications from the address (10 per 60 s).`,
      request: { params: IdParam, body: jsonBody(AdminProvisionDidsBody) },
      responses: {
        201: jsonContent(AdminProvisionDidsResult, 'Provisioned (new and existing numbers)'),
        ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429),
      },
    }),
    async (c) => c.json(await provisionHouseDids(deps, c.req.valid('param').id, c.req.valid('json')), 201),
  );

  return app;
}
