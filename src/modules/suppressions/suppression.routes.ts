import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonContent } from '../../lib/openapi';
import { assertCsvRequest, assertDeclaredLength, CSV_IMPORT_LIMITS } from '../../lib/csv-import';
import { CsvBody, SuppressionImportResult } from './suppression.schemas';
import { MAX_REASON_CHARS } from './suppression.rules';
import { importSuppressions } from './suppression.service';

const security = [{ bearer: [] }];
const tags = ['Compliance'];
const middleware = [requireManagement];

const DESCRIPTION = `Adds numbers to the tenant's internal do-not-call list, which the pre-dial compliance gate reads
(gate \`dnc_listed\`). Tenant-management scope (a \`ddw_\` widget token is 403). The body is \`text/csv\` in UTF-8 (a BOM is ignored; another charset or a compressed body is 415).

Format: rows \`number[,reason]\` (columns after the second are ignored). The first row is a header when its first
cell is one of number, phone, phone_number, telephone, e164, msisdn (any case). Blank lines, whitespace-only rows
and lines starting with \`#\` are skipped. A number in E.164 (\`+15551234567\`) is kept; a bare 10-digit or 1+10-digit
NANP number (\`5551234567\`, \`15551234567\`) becomes \`+1NNNNNNNNNN\`; anything else (formatting characters
included) is rejected as \`not_e164\`. A number already seen earlier in the same file is rejected as
\`duplicate\` (the first row's reason wins). A reason is at most ${MAX_REASON_CHARS} characters: a longer one is cut
to ${MAX_REASON_CHARS} (counted in \`reasons_truncated\`); control characters and line breaks in it become spaces.

Malformed rows are reported, not fatal: \`rejected\` lists the first ${CSV_IMPORT_LIMITS.maxRejectedListed} (line = 1-based line of the
file, value masked to its last 4 characters), \`rejected_count\` is the true total. Idempotent: \`recorded\`
counts numbers newly listed by this upload; a number already listed by an earlier import is left as it
is (its reason included), so a re-upload records 0. One audit entry (\`suppressions.imported\`) per upload.

Limits: body ${CSV_IMPORT_LIMITS.maxBytes} bytes (413 \`payload_too_large\`: a declared Content-Length over it is refused
unread, a chunked body is counted while streaming); more than ${CSV_IMPORT_LIMITS.maxDataRows} data rows is 422 \`unprocessable\`
and nothing is stored; malformed CSV (a quoted field that is never closed) is 400 \`bad_request\` and nothing is
stored. A quote inside an unquoted field is kept as data (RFC 4180 quoting with doubled quotes is read as usual).`;

export function suppressionRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/suppressions/import',
      tags,
      security,
      middleware,
      summary: 'Import numbers into the internal do-not-call list (CSV)',
      description: DESCRIPTION,
      request: { body: { required: true, content: { 'text/csv': { schema: CsvBody } } } },
      responses: {
        200: jsonContent(SuppressionImportResult, 'Import summary'),
        ...errorResponses(400, 401, 403, 413, 415, 422),
      },
    }),
    async (c) => {
      assertCsvRequest(c.req.header('content-type'), c.req.header('content-encoding'));
      assertDeclaredLength(c.req.header('content-length'));
      const principal = c.get('principal');
      return c.json(await importSuppressions(deps, principal.tenantId, actorOf(principal), c.req.raw.body), 200);
    },
  );
  return app;
}
