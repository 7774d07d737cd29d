import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { unprocessable } from '../../lib/errors';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { importDebts } from './debt-import.service';
import {
  CallAttemptList,
  CeaseAndDesistBody,
  DebtCallAttemptsQuery,
  DebtEnvelope,
  DebtImportItemSchema,
  DebtList,
  ImportDebtsBody,
  ImportDebtsResult,
  ListDebtsQuery,
} from './debt.schemas';
import { getDebt, listDebtCallAttempts, listDebts, recordCeaseAndDesist } from './debt.service';

const security = [{ bearer: [] }];
const tags = ['Debts'];
const middleware = [requireManagement];

const IMPORT_DESCRIPTION = `Upserts debts by external_ref and their contacts by phone_e164, at most 10000 items per request
(more is 400 bad_request) and 100 contacts per debt.

Per-item fail-soft: each item is validated on its own and a bad one is reported in \`failed\` as {index, error}, the error
naming the field; the others are imported. An item fails on: a missing or empty external_ref or consumer_ref (at most
200 characters); an unknown field in the item or in a contact; null for any field; a value outside its enum
(debt_type, state, line_type); amount_cents or prior_attempts_7d not an integer >= 0; currency not three uppercase
letters; campaign_id not a campaign of this tenant; more than 100 contacts; a phone that is not valid E.164; a timezone
that is not an IANA zone; us_state not a two-letter code; two contacts with the same phone; more than one contact with
is_primary true; an external_ref already taken by an earlier accepted item of the same request; dob not a real past date
YYYY-MM-DD; ssn_last4 not a string of exactly 4 digits; pin not a string of 4 to 8 digits; a contact's consent_given_on
not a date YYYY-MM-DD or in the future.

Fields are tri-state: omitted or empty string leaves the stored value unchanged (an import can correct but never
clear a value). A contact with is_primary true demotes the debt's previous primary, which stays a contact; a debt
without a primary gets the first contact of the item. postal_code resolves nyc_borough and the state it lies in (kept
beside us_state for the state caps; us_state too when none is given). A line_type is the number's: every contact of
that number on any debt of the tenant takes it. Every imported contact carries prior express consent for the debt's
collection, voice and SMS (source import), dated by consent_given_on when given; an existing consent, including a
revoked one, keeps its grant and revocation (an import never re-grants a revocation) and only takes a given
consent_given_on.

dob, ssn_last4 and pin are right-party verification data for AI calls: write-only, encrypted at rest, never returned
by any route, never logged and never echoed in an error (the error names the field and the rule).
prior_attempts_7d is a total over the last 7 days, not a delta: only what stored history of the last 7 days lacks is
added (values above 7 count as 7), so a replay adds nothing and a lower value never removes history.

Idempotent: replaying a request gives the same stored state and the same answer. The whole import is one transaction
with one audit entry (debts.imported).`;

export function debtRoutes(deps: AppDeps) {
  const app = createRouter();
  app.openAPIRegistry.register('DebtImportItem', DebtImportItemSchema);

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/debts/import',
      tags,
      security,
      middleware,
      summary: 'Import debts and leads (upsert, per-item fail-soft)',
      description: IMPORT_DESCRIPTION,
      request: { body: jsonBody(ImportDebtsBody) },
      responses: {
        200: jsonContent(ImportDebtsResult, 'Imported; failed items listed by index'),
        ...errorResponses(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await importDebts(deps, principal.tenantId, actorOf(principal), c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/debts',
      tags,
      security,
      middleware,
      summary: 'Debts of the tenant (summary projection), oldest first',
      description:
        'Filters combine with AND. phone takes a normalized E.164 number only, its leading plus percent-encoded (%2B); anything else is 400. An unknown state is 400. min_amount_cents above max_amount_cents is 422 unprocessable (a rule across two parameters). Foreign or unknown campaign ids, refs and phones give an empty page, never 404.',
      request: { query: ListDebtsQuery },
      responses: { 200: jsonContent(DebtList, 'A page of debts'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => {
      const query = c.req.valid('query');
      if (query.min_amount_cents !== undefined && query.max_amount_cents !== undefined && query.min_amount_cents > query.max_amount_cents) {
        throw unprocessable("'min_amount_cents' must not exceed 'max_amount_cents'");
      }
      return c.json(await listDebts(deps, c.get('principal').tenantId, query), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/debts/{id}',
      tags,
      security,
      middleware,
      summary: 'A debt with its contacts (phones in full) and their consent',
      request: { params: IdParam },
      responses: { 200: jsonContent(DebtEnvelope, 'The debt'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ debt: await getDebt(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/debts/{id}/call_attempts',
      tags,
      security,
      middleware,
      summary: "The debt's durable CDR history",
      description:
        'Originals and their corrections (corrects_id set) in insertion order, oldest first. The latest correction of an original is its final state. Notes are shown decrypted.',
      request: { params: IdParam, query: DebtCallAttemptsQuery },
      responses: { 200: jsonContent(CallAttemptList, 'A page of call attempts'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(await listDebtCallAttempts(deps, c.get('principal').tenantId, c.req.valid('param').id, q.limit, q.cursor), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/debts/{id}/cease-and-desist',
      tags,
      security,
      middleware,
      summary: 'Record a FDCPA 1692c(c) cease-and-desist for the debt',
      description:
        'The consumer asked in writing that the agency stop communicating about this debt. Sets cease_and_desist_at to received_at (default now; a time in the future is 422 unprocessable) with an audit entry (debt.cease_and_desist, carrying the note). From then on the compliance engine refuses every call and text for the debt with gate cease_and_desist; there is no bypass. Idempotent: a repeat keeps the first time and records nothing new.',
      request: { params: IdParam, body: jsonBody(CeaseAndDesistBody, false) },
      responses: {
        200: jsonContent(DebtEnvelope, 'The debt, cease_and_desist_at set'),
        ...errorResponses(400, 401, 403, 404, 413, 415, 422),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const debt = await recordCeaseAndDesist(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json') ?? {});
      return c.json({ debt }, 200);
    },
  );

  return app;
}
