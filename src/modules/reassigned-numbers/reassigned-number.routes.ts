import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonContent } from '../../lib/openapi';
import { assertCsvRequest, assertDeclaredLength, CSV_IMPORT_LIMITS } from '../../lib/csv-import';
import { CsvBody } from '../suppressions/suppression.schemas';
import { EARLIEST_DISCONNECTION } from './reassigned-number.rules';
import { ReassignedImportResult, ReassignedLookupQuery, ReassignedNumberList } from './reassigned-number.schemas';
import { importReassignedNumbers, listReassignedNumbers, lookupPhone } from './reassigned-number.service';

const security = [{ bearer: [] }];
const tags = ['Compliance'];
const middleware = [requireManagement];

const WHAT_IT_IS = `**What the data is.** The FCC Reassigned Numbers Database (RND) answers, for a number and a date, whether
the number was permanently disconnected after that date, which means it may since have been given to someone
else. The tenant queries the RND (or its reseller) and uploads the results here: for each number, the dates of
its latest permanent disconnections.

**How the gate uses it.** Consent belongs to the subscriber who gave it. When a number's stored permanent
disconnection is later than the date of the consent the call relies on, that consent does not reach the
number's new subscriber, and the pre-dial gate refuses the call as \`number_reassigned\` (47 CFR 64.1200(m)). The
safe harbor of 64.1200(m) covers a caller that checked the latest RND with the number and the consent date and
was told "no" even though the database was wrong; the caller bears the proof, and "no data" gives no harbor.
This service does not query the RND itself: the gate knows only what was uploaded. Tenant-management scope (a
\`ddw_\` widget token is 403).`;

const IMPORT_DESCRIPTION = `${WHAT_IT_IS}

**Format.** \`text/csv\` in UTF-8, rows \`number,disconnected_on\` (columns after the second are ignored). The first
row is a header when its first cell is one of number, phone, phone_number, telephone, e164, msisdn (any case;
the date column is conventionally headed disconnected_on or disconnect_date). Blank lines, whitespace-only rows
and lines starting with \`#\` are skipped. Numbers are normalized like suppressions (E.164 kept; bare 10-digit or
1+10-digit NANP becomes \`+1NNNNNNNNNN\`; else \`not_e164\`). The date is YYYY-MM-DD, a real calendar date from
${EARLIEST_DISCONNECTION} to today (UTC); a missing, malformed or future date is \`bad_date\`. The same number with the same
date earlier in the file is \`duplicate\`; a number may carry several dates, each is kept.

**Result.** \`rejected\` lists the first ${CSV_IMPORT_LIMITS.maxRejectedListed} rejected rows (line = 1-based line of the file, value masked
to its last 4 characters); \`rejected_count\` is the true total. Idempotent: \`recorded\` counts (number, date)
pairs newly stored; a re-upload records 0. One audit entry (\`reassigned_numbers.imported\`) per upload.

**Limits** (as for suppressions): body ${CSV_IMPORT_LIMITS.maxBytes} bytes (413 \`payload_too_large\`, a declared
Content-Length over it refused unread, a chunked body counted while streaming); more than ${CSV_IMPORT_LIMITS.maxDataRows} data
rows is 422 \`unprocessable\`; malformed CSV (a quoted field never closed) is 400 \`bad_request\`; another media type, charset or a compressed
body is 415. In each error case nothing is stored.`;

const LOOKUP_DESCRIPTION = `${WHAT_IT_IS}

Returns every stored permanent-disconnection date of one number, latest first (an empty list when none is
stored). \`phone\` is required and must be E.164 (400 \`bad_request\` otherwise).`;

export function reassignedNumberRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/reassigned-numbers/import',
      tags,
      security,
      middleware,
      summary: 'Import Reassigned Numbers Database results: latest permanent-disconnection dates (CSV)',
      description: IMPORT_DESCRIPTION,
      request: { body: { required: true, content: { 'text/csv': { schema: CsvBody } } } },
      responses: {
        200: jsonContent(ReassignedImportResult, 'Import summary'),
        ...errorResponses(400, 401, 403, 413, 415, 422),
      },
    }),
    async (c) => {
      assertCsvRequest(c.req.header('content-type'), c.req.header('content-encoding'));
      assertDeclaredLength(c.req.header('content-length'));
      const principal = c.get('principal');
      return c.json(await importReassignedNumbers(deps, principal.tenantId, actorOf(principal), c.req.raw.body), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/reassigned-numbers',
      tags,
      security,
      middleware,
      summary: 'Stored permanent-disconnection dates of one number',
      description: LOOKUP_DESCRIPTION,
      request: { query: ReassignedLookupQuery },
      responses: { 200: jsonContent(ReassignedNumberList, 'Disconnection dates, latest first'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => {
      const phone = lookupPhone(c.req.valid('query').phone);
      return c.json(await listReassignedNumbers(deps, c.get('principal').tenantId, phone), 200);
    },
  );
  return app;
}
