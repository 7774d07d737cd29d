import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonContent, z } from '../../lib/openapi';
import { acceptsOver, ARTIFACT_HASH_HEADER, sha256Hex } from '../compliance-reports/artifact';
import { PRICES } from './billing.rules';
import { BillingAccountSchema, BillingAlertsSchema, InvoiceQuery, InvoiceSchema, SummaryQuery, SummarySchema } from './billing.schemas';
import { billingInvoice, billingSummary, getAccount, getAlerts, SUMMARY_CSV_COLUMNS, summaryCsv } from './billing.service';

const security = [{ bearer: [] }];
const tags = ['Billing'];
const middleware = [requireManagement];
const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`.';

const PRICE_NOTE = `Line items (kind, description, quantity, unit, unit_price_usd, amount_usd; decimals are strings with 4 places):
- seats: max(${PRICES.seatFloor}, tenant seats) × ${PRICES.seatUsd} USD per seat-month (the ${PRICES.seatFloor}-seat billing floor).
- voice_ai: while the tenant's voice_ai_enabled is true the metered ai_usage cost (each row at the rate it was metered under),
  on the invoice at least ${PRICES.voiceAiMinimumUsd} USD (max(metered, ${PRICES.voiceAiMinimumUsd})); 0.0000 while the add-on is off.
  quantity is the metered AI calls.
- house_minutes: answered minutes of outbound calls (each call's final CDR state, answer to end, per started minute) × ${PRICES.houseMinuteUsd} USD.
- inbound_minutes: answered minutes of inbound calls (a consumer calling a DID; counted the same way) × ${PRICES.inboundMinuteUsd} USD.
- did_rent: the house DIDs (numbers the platform provisions) held at any time in the period × ${PRICES.didRentUsd} USD per DID-month;
  customer DIDs are the tenant's own numbers and pay no rent.
- did_overage, did_overage_customer: the DIDs of origin house, respectively customer, held at any time in the period (added before
  its end and not retired before its start); ${PRICES.didIncluded} of each
  are included, beyond that ${PRICES.didPackUsd} USD per started pack of ${PRICES.didPackSize} (quantity = packs).
- sms: the SMS ledger's charged rows (the sent transitions) in the window, at the price each was charged at; quantity = segments.
- wav_surcharge: the WAV files delivered by recording exports completed in the window (audio purged by retention is listed in an
  archive's manifest but not delivered, so not billed; an identical request answered from the dedup window is the same job, billed
  once) × ${PRICES.wavFileUsd} USD; quantity = WAV files. Playback links of single recordings are not billed.
Every kind is always listed, in this order (a kind with nothing to bill has quantity 0 and amount 0.0000).`;

const artifactHeader = {
  [ARTIFACT_HASH_HEADER]: { description: 'Lowercase hex SHA-256 of the body bytes', schema: { type: 'string' as const, pattern: '^[0-9a-f]{64}$' } },
};

export function billingRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/billing/account',
      tags,
      security,
      middleware,
      summary: 'The tenant’s billing scheme, balance and period cap',
      description: `A tenant with billing off answers 200 with \`billing_enabled: false\` (scheme, enforcement_mode, balance and cap null,
alert_thresholds empty), never 404. \`balance\`: cash, grant, deposit and credit limit as the operator set them; a prepaid balance is
drawn down by metered usage (grant first, then cash); available = cash + grant + credit limit − open holds. \`cap\` is null without a
cap, else the UTC calendar month's metered spend (SMS and voice-AI as charged, answered outbound minutes at ${PRICES.houseMinuteUsd} USD,
inbound minutes at ${PRICES.inboundMinuteUsd} USD, exported WAV files at ${PRICES.wavFileUsd} USD) against the limit, \`used_pct\` floored to one decimal (null when the limit is 0). Enforcement is unconditional; mode and thresholds are read-only
here (the operator sets them). ${SCOPE}`,
      responses: { 200: jsonContent(BillingAccountSchema, 'The billing account'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await getAccount(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/billing/alerts',
      tags,
      security,
      middleware,
      summary: 'Spend-cap threshold crossings of the current period',
      description: `Each alert threshold is recorded once per (tenant, period, threshold) when the period spend first reaches it, with the
scheme, enforcement mode, spend and limit of that moment; newest first. \`period_key\` equals \`cap.period_key\` of the account; with
billing off or no cap it is null and the list empty. Spend is judged by the periodic billing pass (BILLING_ENFORCEMENT_INTERVAL_MS)
and after every operator plan write. Each crossing is announced once, in the transaction that records it (a retried pass or a
concurrent evaluation announces nothing more):
- on the live floor (\`GET /v1/ws\`, tenant lane only): a frame \`{"event": "billing.threshold_crossed", "event_id", "occurred_at",
  "data"}\` where \`event_id\` is the alert's id, \`occurred_at\` its \`crossed_at\`, and \`data\` the alert as listed here plus its
  \`period_key\`;
- by email to each active \`account_admin\` user of the tenant: the threshold, the spend and the cap then, the period and the time of the
  crossing. It is queued with the crossing and delivered after commit through SMTP (deployment setting SMTP_URL), refusals retried
  for about four hours; without SMTP it stays queued for the operator.
It is not an outbound webhook event: that catalog is SPEC's closed six names, and \`POST /v1/webhooks\` refuses this one. ${SCOPE}`,
      responses: { 200: jsonContent(BillingAlertsSchema, 'Recorded crossings'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await getAlerts(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/billing/summary',
      tags,
      security,
      middleware,
      summary: 'Charges of a window per line-item kind (JSON or CSV)',
      description: `The window is half-open \`[from, to)\`, default the trailing 30 days up to now; \`from\` must be before \`to\` (422
\`unprocessable\`; a malformed date or an unknown query key is 400 \`bad_request\`). Metered lines cover the window; seats show the monthly charge as
of now, DID rent and DID packs the DIDs held at any time in the window at the monthly prices; voice_ai shows the metered cost without the monthly minimum (the invoice applies it). \`subtotal_usd\` sums the
lines.

${PRICE_NOTE}

CSV (format=csv, or an Accept header preferring text/csv when format is absent): header \`${SUMMARY_CSV_COLUMNS.join(',')}\`, one line per
item, CRLF line ends. Both formats carry X-Artifact-SHA256, the SHA-256 of the exact body bytes. ${SCOPE}`,
      request: { query: SummaryQuery },
      responses: {
        200: {
          description: 'Summary',
          headers: artifactHeader,
          content: {
            'application/json': { schema: SummarySchema },
            'text/csv': { schema: z.string().openapi({ description: `Header ${SUMMARY_CSV_COLUMNS.join(',')}, then one line per item` }) },
          },
        },
        ...errorResponses(400, 401, 403, 422),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const csv = (query.format ?? (acceptsOver(c.req.header('accept'), 'text/csv') ? 'csv' : 'json')) === 'csv';
      const summary = await billingSummary(deps, c.get('principal').tenantId, query);
      const body = Buffer.from(csv ? summaryCsv(summary) : JSON.stringify(summary), 'utf8');
      return c.body(new Uint8Array(body), 200, {
        'content-type': csv ? 'text/csv; charset=utf-8' : 'application/json',
        [ARTIFACT_HASH_HEADER]: sha256Hex(body),
        'cache-control': 'no-store',
        vary: 'Accept',
      });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/billing/invoice',
      tags,
      security,
      middleware,
      summary: 'The invoice of one calendar month',
      description: `Query \`month\` (YYYY-MM, required): the UTC calendar month \`[first day, first day of the next month)\`. A malformed
month or an unknown query key is 400 \`bad_request\`; a month that has not started is 422 \`unprocessable\`. \`status\` is open while
the month runs (figures still accrue) and closed after it. DID counts are the numbers held at any time in the month (the registry
keeps each DID's retirement time), so a closed month reads the same however often and whatever was retired since.

${PRICE_NOTE}

\`subtotal_usd\` sums the lines; \`tax_usd\` is null (the tenant's tax location fields exist but no tax rates are configured) and
\`total_usd\` equals the subtotal. ${SCOPE}`,
      request: { query: InvoiceQuery },
      responses: { 200: jsonContent(InvoiceSchema, 'The invoice'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await billingInvoice(deps, c.get('principal').tenantId, c.req.valid('query').month), 200),
  );

  return app;
}
