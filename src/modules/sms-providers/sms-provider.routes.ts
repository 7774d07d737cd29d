import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CreateSmsProviderBody, PatchSmsProviderBody, SmsProviderEnvelope, SmsProviderList } from './sms-provider.schemas';
import { createSmsProvider, getSmsProvider, listSmsProviders, retireSmsProvider, updateSmsProvider } from './sms-provider.service';

const security = [{ bearer: [] }];
const tags = ['SMS'];
const middleware = [requireManagement];

const SCOPE =
  'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`, as is a suspended tenant; a missing or bad credential is 401.';
const ID_NOTE =
  'An unknown id, an id of another tenant (or of another account\'s account-wide provider) and a non-UUID id are the same 404 `not_found`.';
const EMPRESA_RULE = `An account-wide provider (scope \`empresa\`, tenant_id null) belongs to the account: every tenant of the
account sees it and may send through it, but only a \`ddu_\` session of an \`account_admin\` user may create, change or retire it
(403 \`forbidden\` for a member, and for a \`dd_\` key, which carries no user).`;
const BASE_URL_RULES = `\`base_url\` blank or null means the deployment endpoint (stored as null). Otherwise it passes the egress
check: https on port 443, no credentials, a host name (an IP literal, \`localhost\`, an internal suffix or a cloud-metadata name is
refused) that resolves only to public addresses (loopback, RFC 1918, CGNAT, link-local, unique-local, metadata and other reserved
addresses are refused); a refusal is 422 \`unprocessable\` naming \`base_url\` and the rule, never the addresses. The check runs again
at every send on the address actually connected to (the send answers 422 \`sms_provider_base_url_rejected\`). Origins listed in
EGRESS_ALLOWLIST skip the https, port and address rules.`;
const SECRET_RULES = `\`webhook_secret\` is write-only: stored encrypted, never returned (the view says \`has_secret\`), never in the
audit log. For the http and mock adapters it is the HMAC key of the provider's webhooks; for carrier_a it is the provider's Ed25519
public key: the 32 raw bytes in base64 (the form the provider's portal shows), the SPKI DER in base64, or a PEM PUBLIC KEY block;
anything else is 400 \`invalid\`.`;
const API_KEY_RULES = `\`api_key\` is write-only: the provider account's own API key, stored encrypted, never returned (the view says
\`has_api_key\`), never in the audit log; 1 to 4096 printable ASCII characters without spaces; null removes it. The http and
carrier_a adapters send it as \`Authorization: Bearer <api_key>\`. Which key a send presents: the provider's own api_key when it
has one; else the deployment's key (SMS_PROVIDER_API_KEY) only when the endpoint is the deployment's own (blank \`base_url\` and
the deployment's adapter); else none (no Authorization header). The deployment's key is never sent to a \`base_url\` a tenant
gave. Keyword replies (STOP confirmation, HELP) present the same key as a send through the provider the keyword came in by.`;
const BODY_ERRORS = `Errors: 400 \`bad_request\` for malformed JSON, a wrong JSON type, a value outside an enum or an unknown key
(\`tenant_id\` and \`account_id\` included); 400 \`invalid\` for a rule on name, webhook_secret or api_key; 422 \`unprocessable\` for base_url;
413 over 8 MiB; 415 when the body is not JSON.`;

export function smsProviderRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/sms/providers',
      tags,
      security,
      middleware,
      summary: "The tenant's SMS providers and its account's account-wide ones, oldest first",
      description: `Every status (retired ones included). A send resolves its provider in this order: the tenant's oldest active
provider (sede), then the account's oldest active account-wide provider (empresa), then the deployment's (SMS_PROVIDER_ADAPTER);
with none of them it is 422 \`sms_provider_unconfigured\`. ${SCOPE}`,
      responses: { 200: jsonContent(SmsProviderList, 'Own and inherited providers'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await listSmsProviders(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sms/providers',
      tags,
      security,
      middleware,
      summary: 'Register an SMS provider for the tenant (sede) or its whole account (empresa)',
      description: `Body \`{adapter, region, name}\` required; \`base_url\`, \`webhook_secret\`, \`api_key\`, \`status\` (active by
default, or disabled) and \`scope\` (sede by default, or empresa) optional. ${EMPRESA_RULE} Scope is immutable.

${BASE_URL_RULES}

${SECRET_RULES}

${API_KEY_RULES}

Audit entry \`sms_provider.created\` in the acting tenant's log (never the secret or the key). ${BODY_ERRORS} ${SCOPE}`,
      request: { body: jsonBody(CreateSmsProviderBody) },
      responses: { 201: jsonContent(SmsProviderEnvelope, 'Registered'), ...errorResponses(400, 401, 403, 413, 415, 422) },
    }),
    async (c) => c.json({ sms_provider: await createSmsProvider(deps, c.get('principal'), c.req.valid('json')) }, 201),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/sms/providers/{id}',
      tags,
      security,
      middleware,
      summary: 'An SMS provider of the tenant, or an account-wide one of its account',
      description: `${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(SmsProviderEnvelope, 'The provider'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ sms_provider: await getSmsProvider(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/sms/providers/{id}',
      tags,
      security,
      middleware,
      summary: 'Change the adapter, region, name, base_url, webhook_secret, api_key or status of a provider',
      description: `Optional \`adapter\`, \`region\`, \`name\`, \`base_url\`, \`webhook_secret\` (null removes it), \`api_key\`
(null removes it), \`status\` (active, disabled; retired is final). Absent keys are unchanged; a patch that changes nothing writes nothing. \`scope\` is
immutable: present at all, it is 400 \`bad_request\`. A retired provider cannot be changed: 409 \`conflict\`. Moving to carrier_a
keeps the stored secret only when it is an Ed25519 public key (else 400 \`invalid\`: send the key with the change). A stored
api_key is never moved to a new endpoint: a change of \`base_url\` or \`adapter\` on a provider with an api_key must carry
\`api_key\` too (the key again, or null), else 400 \`invalid\`. ${EMPRESA_RULE}

${BASE_URL_RULES}

${SECRET_RULES}

${API_KEY_RULES}

Audit entry \`sms_provider.updated\` (the changed fields; for the secret and the key only whether each was set or removed). ${ID_NOTE}
${BODY_ERRORS} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(PatchSmsProviderBody) },
      responses: { 200: jsonContent(SmsProviderEnvelope, 'The updated provider'), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
    }),
    async (c) =>
      c.json({ sms_provider: await updateSmsProvider(deps, c.get('principal'), c.req.valid('param').id, c.req.valid('json')) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sms/providers/{id}/retire',
      tags,
      security,
      middleware,
      summary: 'Retire a provider for good (idempotent; the row is kept)',
      description: `No body. Sets status \`retired\`: the provider is never resolved for a send again and cannot be patched back
(409). Providers are never deleted (the ledger names the provider each message went through). Retiring a retired provider
answers the same 200 and records nothing new. Audit entry \`sms_provider.retired\`. ${EMPRESA_RULE} ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(SmsProviderEnvelope, 'The retired provider'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ sms_provider: await retireSmsProvider(deps, c.get('principal'), c.req.valid('param').id) }, 200),
  );

  return app;
}
