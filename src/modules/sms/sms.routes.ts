import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { SMS_BODY_MAX } from '../campaigns/campaign.rules';
import { SmsUsageQuerySchema, SmsUsageSchema } from './sms-usage.schemas';
import { smsUsage } from './sms-usage.service';
import { ListSmsQuery, SendSmsBody, SendSmsResult, SmsMessageEnvelope, SmsMessagePage } from './sms.schemas';
import { smsProviderGateway } from '../sms-providers/sms-provider.resolve';
import { gatewayOf, getSmsMessage, listSmsMessages, sendSms, type SmsGateway } from './sms.service';

const security = [{ bearer: [] }];
const tags = ['SMS'];
const middleware = [requireManagement];

const SEND_DESCRIPTION = `Sends one text through the compliance engine and the tenant's SMS provider. Checked in this order:
1. the body is strict: \`to\` (and \`from\`) E.164, \`body\` 1 to ${SMS_BODY_MAX} characters (code points; ten concatenated GSM-7
   segments), \`debt_id\`/\`campaign_id\` uuids, \`timezone\` an IANA zone, unknown keys: 400 \`bad_request\`; a \`campaign_id\` that is not
   a campaign of this tenant is 422 \`unprocessable\`;
2. \`client_ref\` replay (the idempotency key, default a fresh uuid): an existing message with that key answers 202
   \`{sms_message, duplicate: true}\` with the message as it stands, and nothing else happens. Sends of one tenant serialize from
   here to the queued row, and the unique index on client_ref has the last word, so concurrent replays make one message;
   a \`from\` that is not one of the tenant's active DIDs is then 422 \`unprocessable\`, nothing decided or sent;
3. spend cap: the month-to-date spend (UTC month: charged \`cost_usd\` plus the estimate of queued messages not yet answered) plus
   this message's estimate (segments × the price per segment) over \`sms_monthly_budget_usd\` is 429 \`sms_spend_cap_exceeded\`
   (do not retry before a cap raise or the month rollover); nothing is decided or sent; a tenant blocked by billing under
   hard_block enforcement (period cap reached, prepaid funds exhausted) is 422 \`unprocessable\`, nothing decided or sent;
4. the compliance engine (channel sms, automated, the request's \`timezone\`): a refusal is 422 \`compliance_blocked\` with \`gate\` and
   \`decision_id\` (the decision is kept as evidence; no ledger row, no provider call, no charge). A send without \`debt_id\` is
   refused (consent is per debt);
5. provider resolution (sede, then account-wide, then the deployment's): none is 422 \`sms_provider_unconfigured\`;
6. the rate brake: with the tenant's \`max_cps\` outbound messages already queued in the last second, 429 \`throttled\` (retry with
   backoff and jitter). It is checked before the queued row, so a throttled send leaves no ledger row; the allowed decision is
   rolled back with it (the evidence commits with what it allowed);
7. the queued ledger row (status queued, body, segments, encoding, compliance_snapshot, provider_id) is committed;
8. the provider adapter: an endpoint that fails the public-address https 443 check is 422 \`sms_provider_base_url_rejected\`; a
   refusal is 502 \`provider_error\`; a fault with no answer (network, timeout) is 502 \`provider_error\` too. Each adds \`sms_message_id\`
   and appends a \`failed\` transition (error_code the provider's code, \`base_url_rejected\` or \`provider_unreachable\`); nothing is
   charged. Retry with a new client_ref: the old one answers the failed message;
9. at provider accept, the \`sent\` transition carries provider_message_id, segments and \`cost_usd\` = segments × the price per
   segment (the segment debit). 202 \`{sms_message, duplicate: false}\`.`;

export function smsRoutes(deps: AppDeps, fallbackGateway: SmsGateway = smsProviderGateway) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sms/messages',
      tags,
      security,
      middleware,
      summary: 'Send an SMS (compliance-gated, idempotent on client_ref)',
      description: SEND_DESCRIPTION,
      request: { body: jsonBody(SendSmsBody) },
      responses: {
        202: jsonContent(SendSmsResult, 'Sent, or the existing message of a replayed client_ref'),
        ...errorResponses(400, 401, 403, 413, 415, 422, 429, 500, 502),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const result = await sendSms(deps, gatewayOf(deps, fallbackGateway), principal.tenantId, actorOf(principal), c.req.valid('json'));
      return c.json(result, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/sms/messages',
      tags,
      security,
      middleware,
      summary: 'The SMS ledger: originals and transitions, newest first',
      description:
        'Every ledger row of the tenant, originals (corrects_id null) and transitions (corrects_id = the original), ordered by recorded_at then id, newest first. Filters combine with AND and match each row by its own columns (transitions repeat the original\'s direction, campaign and debt). body_preview is the first 40 characters of an original\'s body (null on transitions).',
      request: { query: ListSmsQuery },
      responses: { 200: jsonContent(SmsMessagePage, 'A page of ledger rows'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await listSmsMessages(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/sms/messages/{id}',
      tags,
      security,
      middleware,
      summary: 'One message, collapsed: identity, current status, body, evidence and history',
      description:
        'The id of the original or of any of its transitions. status is the latest row\'s; segments and provider_message_id the latest known; cost_usd the charge (null until sent); timestamps maps each status reached to when; transitions are the transition rows oldest first. Unknown, malformed or foreign id: 404.',
      request: { params: IdParam },
      responses: { 200: jsonContent(SmsMessageEnvelope, 'The message'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json(await getSmsMessage(deps, c.get('principal').tenantId, c.req.valid('param').id), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/sms-usage',
      tags: ['Stats'],
      security,
      middleware,
      summary: 'SMS charges: messages, segments and cost in a window, by UTC day',
      description:
        'Counts the charged ledger rows (sent transitions; each keeps the price it was charged at) whose occurred_at is in [from, to) (half-open; default the current UTC month), optionally of one campaign. month_to_date_cost_usd (all campaigns, this UTC month) and budget_usd are the spend cap\'s figures whatever the window. from after to is 422 unprocessable (a rule across both fields).',
      request: { query: SmsUsageQuerySchema },
      responses: { 200: jsonContent(SmsUsageSchema, 'SMS usage'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await smsUsage(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );
  return app;
}
