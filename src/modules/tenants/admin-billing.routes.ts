import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { adminAuth } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import {
  AdminAccountEnvelope,
  AdminCreditBody,
  AdminCreditResult,
  AdminEnforcementBody,
  AdminPlanBody,
  AdminThresholdsBody,
} from '../billing/billing.schemas';
import { addCredit, putAlertThresholds, putEnforcementMode, putPlan } from './admin-billing.service';

const tags = ['Admin'];
const security = [{ operatorBearer: [] }];

const COMMON = `Answers the tenant's billing account exactly as GET /v1/billing/account shows it, after enforcement has run: the
write is audited (actor operator), then the cap and funds are re-evaluated, so a raise, a credit or billing turned off moves the
tenant's suspended_balance campaigns back to running, and a lowered cap or exhausted funds move running ones to suspended_balance.
Errors: 400 \`bad_request\` for malformed JSON, wrong types or an unknown key; 422 \`unprocessable\` for a rule (named in the message);
404 \`not_found\` for an unknown or malformed tenant id; 401 without the operator bearer; 429 \`rate_limited\` after too many failed
operator authentications from the address (10 per 60 s).`;

const AMOUNTS = 'Amounts are decimal USD sent as a string or a number, not negative, at most 4 decimal places and 10 integer digits.';

/** The operator's billing plan routes; adminAuth sits on each route, as on the DID provisioning routes. */
export function adminBillingRoutes(deps: AppDeps) {
  const app = createRouter();
  const middleware = [adminAuth(deps)];

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/admin/tenants/{id}/plan',
      tags,
      security,
      middleware,
      summary: 'Set a tenant’s billing scheme, cap and credit limit',
      description: `Body \`{scheme}\` required: prepaid, postpaid, subscription, or null to turn billing off (settings and the ledger are
kept). Optional \`cap_usd\` (the monthly spend cap; null removes it) and \`credit_limit_usd\`; omitted fields keep their values. A new
account starts with alert thresholds [50, 80, 100] and no enforcement mode (read as hard_block). ${AMOUNTS} ${COMMON}`,
      request: { params: IdParam, body: jsonBody(AdminPlanBody) },
      responses: { 200: jsonContent(AdminAccountEnvelope, 'The account'), ...errorResponses(400, 401, 404, 413, 415, 422, 429) },
    }),
    async (c) => c.json(await putPlan(deps, c.req.valid('param').id, c.req.valid('json')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/admin/tenants/{id}/plan/credits',
      tags,
      security,
      middleware,
      summary: 'Add an entry to a tenant’s billing ledger',
      description: `Body \`{kind, amount_usd}\` required, \`note\` (up to 500 characters) optional. kind: cash, grant or deposit (credits),
hold (reserves funds: lowers available) or hold_release (releases a hold). The ledger is append-only: a correction is a new entry.
amount_usd must be above 0. ${AMOUNTS} Answers 201 \`{entry, account}\`. ${COMMON}`,
      request: { params: IdParam, body: jsonBody(AdminCreditBody) },
      responses: { 201: jsonContent(AdminCreditResult, 'The entry and the account'), ...errorResponses(400, 401, 404, 413, 415, 422, 429) },
    }),
    async (c) => c.json(await addCredit(deps, c.req.valid('param').id, c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/admin/tenants/{id}/plan/enforcement-mode',
      tags,
      security,
      middleware,
      summary: 'Set how a tenant’s cap is enforced',
      description: `Body \`{mode}\`: graduated, hard_block, or null (reads as hard_block: enforcement is unconditional). Both modes
record the alert thresholds as spend crosses them and suspend running campaigns when the cap is reached or prepaid funds are
exhausted; hard_block also refuses new one-off dials and sends while blocked. ${COMMON}`,
      request: { params: IdParam, body: jsonBody(AdminEnforcementBody) },
      responses: { 200: jsonContent(AdminAccountEnvelope, 'The account'), ...errorResponses(400, 401, 404, 413, 415, 422, 429) },
    }),
    async (c) => c.json(await putEnforcementMode(deps, c.req.valid('param').id, c.req.valid('json').mode), 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/admin/tenants/{id}/plan/alert-thresholds',
      tags,
      security,
      middleware,
      summary: 'Set a tenant’s spend-alert thresholds',
      description: `Body \`{thresholds}\`: distinct integer percentages of the cap from 1 to 100, at most 10 (an empty list records no
alerts). Crossings already recorded for the period stay; a threshold the period spend has already reached is recorded at once and
announced to the tenant like a crossing the billing pass finds: a \`billing.threshold_crossed\` frame on its live floor and an email to
its active account admins (\`GET /v1/billing/alerts\` describes both; it is not a webhook event). ${COMMON}`,
      request: { params: IdParam, body: jsonBody(AdminThresholdsBody) },
      responses: { 200: jsonContent(AdminAccountEnvelope, 'The account'), ...errorResponses(400, 401, 404, 413, 415, 422, 429) },
    }),
    async (c) => c.json(await putAlertThresholds(deps, c.req.valid('param').id, c.req.valid('json').thresholds), 200),
  );

  return app;
}
