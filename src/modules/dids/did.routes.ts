import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { DidHealthQuery, DidHealthSchema } from './did-health.schemas';
import { didHealth } from './did-health.service';
import { CreateDidBody, DidEnvelope, DidList, ListDidsQuery, PatchDidBody, VerifyDidBody } from './did.schemas';
import { createDid, getDid, listDids, retireDid, updateDid } from './did.service';
import {
  VERIFICATION_DIDS_PER_TENANT_HOUR,
  VERIFICATION_MAX_ATTEMPTS,
  VERIFICATION_RESEND_COOLDOWN_MS,
  VERIFICATION_SENDS_PER_WINDOW,
  VERIFICATION_TTL_MS,
} from './did-verification.rules';
import { requestVerification, verifyDid } from './did-verification.service';

const security = [{ bearer: [] }];
const tags = ['DIDs'];
const middleware = [requireManagement];

const WRITE_NOTE = `Errors: 400 \`bad_request\` for malformed JSON, a wrong JSON type or an unknown key (named in the message); 400
\`invalid\` for a value that breaks a rule (named in the message: E.164, npa, us_state, attestation, status, labels, notes).
Tenant-management scope (a \`ddw_\` widget token is 403). Every change is an audit entry (did.created, did.updated, did.retired).`;

const OWNERSHIP_NOTE = `A number is an active DID of at most one tenant on the platform (CONTRACT.md section 13): a number this
tenant already holds and a number active in another tenant are the same 409 \`conflict\`, which never says which, nor whose. A
customer DID becomes active only with proof of control: the platform texts a ${VERIFICATION_TTL_MS / 60_000}-minute code to the number
from its own SMS provider (never a provider the tenant configured), and POST /v1/dids/{id}/verify with that code activates it.`;

const BUDGET_NOTE = `Codes are budgeted (429 \`rate_limited\`, nothing sent): one per number per ${VERIFICATION_RESEND_COOLDOWN_MS / 1000} s,
${VERIFICATION_SENDS_PER_WINDOW} per number per 24 h, ${VERIFICATION_DIDS_PER_TENANT_HOUR} numbers of the tenant per hour. A code that the platform
could not send (no deployment SMS provider, a provider refusal or fault) leaves \`verification.status\` undelivered; the operator can
provision the number instead (POST /v1/admin/tenants/{id}/dids).`;

export function didRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/dids',
      tags,
      security,
      middleware,
      summary: "The tenant's DID registry, ordered by e164",
      description: 'Optional `status` filter (active, quarantine, retired; another value is 400). Keyset pages: `limit` (default 100, max 1000; above is 400) and the opaque `cursor` from `next_cursor` (null on the last page; a cursor that does not decode is 400).',
      request: { query: ListDidsQuery },
      responses: { 200: jsonContent(DidList, 'A page of DIDs'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await listDids(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/dids',
      tags,
      security,
      middleware,
      summary: 'Register a DID',
      description: `\`e164\` is required and unique per tenant (409 \`conflict\`). \`npa\` is derived from a +1 number when omitted.
\`origin\` is accepted and ignored: a DID registered here is always customer. Defaults: attestation unknown, status active,
labels [], notes null. Status active (the default) asks for activation: the DID is stored in quarantine with \`verification\`
{status pending, method sms, expires_at, attempts_left} and the code is texted to the number; quarantine and retired are stored as
asked, with \`verification\` null. ${OWNERSHIP_NOTE} ${BUDGET_NOTE} Audit: did.created, did.verification_sent,
did.verification_undelivered. ${WRITE_NOTE}`,
      request: { body: jsonBody(CreateDidBody) },
      responses: { 201: jsonContent(DidEnvelope, 'Registered'), ...errorResponses(400, 401, 403, 409, 413, 415, 422, 429) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ did: await createDid(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/dids/{id}',
      tags,
      security,
      middleware,
      summary: 'A DID (any status, retired included)',
      request: { params: IdParam },
      responses: { 200: jsonContent(DidEnvelope, 'The DID'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ did: await getDid(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/dids/{id}/health',
      tags,
      security,
      middleware,
      summary: 'Health of a DID, computed from the CDR at read time',
      description: `The period is half-open [from, to): \`to\` defaults to now and \`from\` to 30 days before \`to\`; \`from\` not before
\`to\` is 422 \`unprocessable\` (a rule across both fields), a bad RFC 3339 timestamp 400 \`bad_request\`. Counted over the call attempts presenting the DID's e164 as from_number:
\`dials\` are originals that started in the period (not_placed excluded); \`answered\` and the duration come from each call's final
state (the latest correction, else the original); \`short_calls\` are answered calls that ended less than 15 s after answer. Rates are
JSON numbers like the other stats' rates (answer_rate over dials, short_call_rate over answered), null when the denominator is 0.
\`reputation\` holds one entry per reputation service (hiya, tns); no reputation feed is connected, so each is an explicit null.
Retired and quarantined DIDs serve health like active ones. An unknown id, an id of another tenant and a non-UUID id are the same 404
\`not_found\`. Tenant-management scope (a \`ddw_\` widget token is 403).`,
      request: { params: IdParam, query: DidHealthQuery },
      responses: { 200: jsonContent(DidHealthSchema, 'The DID health'), ...errorResponses(400, 401, 403, 404, 422) },
    }),
    async (c) => c.json(await didHealth(deps, c.get('principal').tenantId, c.req.valid('param').id, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/dids/{id}',
      tags,
      security,
      middleware,
      summary: 'Change a DID',
      description: `Same fields as the registration except \`e164\`, which is immutable (400 \`bad_request\` naming it). Absent keys are
unchanged; null clears npa, us_state and notes. \`origin\` is accepted and ignored. A status may be set back from retired. A patch
that changes nothing writes nothing. Setting status active needs proven control: a house DID, or a customer DID whose
\`verification.status\` is verified (422 \`unprocessable\` otherwise, naming the verification routes); a number active in another
tenant is 409 \`conflict\`. Retiring a customer DID lets the number go: its verification is cleared, and it proves control again
before it is active again. ${OWNERSHIP_NOTE} ${WRITE_NOTE}`,
      request: { params: IdParam, body: jsonBody(PatchDidBody) },
      responses: { 200: jsonContent(DidEnvelope, 'The updated DID'), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ did: await updateDid(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json')) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/dids/{id}/verification',
      tags,
      security,
      middleware,
      summary: 'Text a new verification code to a customer DID',
      description: `Issues a new code (the previous one stops working) and texts it to the number from the platform's own SMS provider;
answers 200 \`{did}\` with \`verification\` pending (or undelivered when the text could not be sent). A house DID or an active DID
is 422 \`unprocessable\`; a number active in another tenant is 409 \`conflict\`; an unknown, foreign or malformed id is 404.
${BUDGET_NOTE} Audit: did.verification_sent (never the code). Tenant-management scope (a \`ddw_\` widget token is 403).`,
      request: { params: IdParam },
      responses: { 200: jsonContent(DidEnvelope, 'The DID, a code on its way'), ...errorResponses(401, 403, 404, 409, 422, 429) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ did: await requestVerification(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/dids/{id}/verify',
      tags,
      security,
      middleware,
      summary: 'Confirm the code texted to a customer DID: the DID becomes active',
      description: `Body \`{code}\`. The pending code, in time, makes the DID active with \`verification\` {status verified, method sms}
(audit did.verified); an earlier proof another tenant held for the number stops counting. 422 \`unprocessable\`: no code pending
(none asked, burnt, undelivered or already verified), the code expired (${VERIFICATION_TTL_MS / 60_000} minutes), or a wrong code: each
wrong code is recorded (audit did.verification_failed) and the ${VERIFICATION_MAX_ATTEMPTS}th burns the code (verification failed; ask for a
new one). The comparison is constant-time and only a salted HMAC of the code is stored. 409 \`conflict\` when the number is active
in another tenant meanwhile. 400 \`bad_request\` for a missing or non-string code or another key; 404 for an unknown, foreign or
malformed id. Tenant-management scope (a \`ddw_\` widget token is 403).`,
      request: { params: IdParam, body: jsonBody(VerifyDidBody) },
      responses: { 200: jsonContent(DidEnvelope, 'The DID, now active'), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(
        { did: await verifyDid(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json').code) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/dids/{id}',
      tags,
      security,
      middleware,
      summary: 'Retire a DID (idempotent; the row is kept)',
      description: `Sets status retired; a retired DID stays readable (and keeps serving health) and is never deleted. Retiring a retired
DID answers the same 200 and records nothing new. Campaign pools that name it keep it; the dial loop resolves pools to active
DIDs. A customer DID's verification is cleared (the number is let go). Tenant-management scope (a \`ddw_\` widget token is 403).`,
      request: { params: IdParam },
      responses: { 200: jsonContent(DidEnvelope, 'The retired DID'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ did: await retireDid(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );

  return app;
}
