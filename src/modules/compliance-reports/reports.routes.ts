import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { notFound } from '../../lib/errors';
import { createRouter, errorResponses, IdParam, jsonContent, z } from '../../lib/openapi';
import { acceptsOver, ARTIFACT_HASH_HEADER, sha256Hex } from './artifact';
import { abandonmentStats } from './abandonment-stats.service';
import { blockedStats } from './blocked-stats.service';
import { MAX_WINDOW_DAYS } from './report-window';
import { canonicalJson } from '../../lib/canonical-json';
import { buildDefensePacket, MAX_PROOF_LINKS, PACKET_VERSION, recordPacketGenerated } from './defense-packet.service';
import {
  AbandonmentStatsQuery,
  AbandonmentStatsSchema,
  BlockedStatsQuery,
  BlockedStatsSchema,
  DefensePacketSchema,
  PacketQuery,
  ReportQuery,
  ViolationsReportSchema,
  WINDOW_DESCRIPTION,
} from './reports.schemas';
import { CSV_COLUMNS, REPORT_ROW_LIMIT, violationsCsv, violationsCsvFilename, violationsReport } from './violations-report.service';
import { buildZip } from '../../lib/zip';

const security = [{ bearer: [] }];
const middleware = [requireManagement];

const artifactHeader = {
  [ARTIFACT_HASH_HEADER]: {
    description: 'Lowercase hex SHA-256 of the exact response body bytes',
    schema: { type: 'string' as const, pattern: '^[0-9a-f]{64}$' },
  },
};

/** The body bytes as sent, with their SHA-256 in X-Artifact-SHA256. */
function artifactHeaders(body: Buffer, contentType: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': contentType,
    [ARTIFACT_HASH_HEADER]: sha256Hex(body),
    'cache-control': 'no-store',
    vary: 'Accept',
    ...extra,
  };
}

export function complianceReportRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/blocked',
      tags: ['Stats'],
      security,
      middleware,
      summary: 'Violations the compliance engine prevented, by gate and UTC day',
      description: `Counts the refusal evidence rows (compliance_refusals): one row is one prevented violation, a (debt, gate,
campaign, UTC day) the engine refused at least once, however many attempts it refused that day (the attempt counts are in
GET /v1/reports/violations-prevented). Every gate is present in by_gate, and daily has one entry per UTC date of the window,
dates without refusals included. ${WINDOW_DESCRIPTION}`,
      request: { query: BlockedStatsQuery },
      responses: { 200: jsonContent(BlockedStatsSchema, 'Counts'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await blockedStats(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats/abandonment',
      tags: ['Stats'],
      security,
      middleware,
      summary: 'Abandonment rate per campaign over a window (default the trailing 30 days)',
      description: `Design addition (47 CFR 64.1200(a)(7): at most 3 % of the calls a person answers abandoned, per campaign
over 30 days). Counted from the CDR: outbound calls of a campaign placed in [from, to) whose engine outcome was answered_human
(a person answered and was not kept waiting: an agent within 2 s, or the consumer hung up within them) or abandoned (no
agent within 2 s: the seller message was spoken, or the consumer hung up waiting before it could be). The run's own
stats.pacing.abandonment_rate is the last 200 such calls of the running run, which is what pacing adapts to; this is the
record across runs and restarts. The window is half-open, [from, to), by the call's start. Defaults: \`to\` is now; \`from\`
is 00:00Z of the date 29 days before the window's last date, so the default is the trailing 30 UTC dates ending today. At most
${MAX_WINDOW_DAYS} dates; \`from\` after \`to\` or a longer window is 422 unprocessable; a bad RFC 3339 timestamp is 400 bad_request.`,
      request: { query: AbandonmentStatsQuery },
      responses: { 200: jsonContent(AbandonmentStatsSchema, 'Per campaign'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await abandonmentStats(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/reports/violations-prevented',
      tags: ['Reports'],
      security,
      middleware,
      summary: 'Violations-prevented report: packaged compliance artifact (JSON or CSV)',
      description: `Every refusal evidence row of the window, one per (debt, gate, campaign, UTC day), with the decision ids that
cite the audit chain, totals, and per gate what it prevented and the regulatory texts it applies. No phone number appears
in the report (debts are named by id and external_ref). At most ${REPORT_ROW_LIMIT} rows are listed, by day, gate (chain
order) and external_ref; totals and by_gate always cover every row, and \`truncated\` says when rows were left out
(narrow the window or filter by campaign). ${WINDOW_DESCRIPTION}

CSV (format=csv, or an Accept header preferring text/csv when format is absent): a header line
\`${CSV_COLUMNS.join(',')}\`, then one CRLF-terminated line per listed row with the JSON row fields (RFC 4180 quoting; a
text value starting with =, +, -, @, TAB or CR is prefixed with an apostrophe against spreadsheet formula injection),
sent as an attachment; the header X-Report-Truncated carries the truncated flag. Both formats carry
X-Artifact-SHA256, the SHA-256 of the exact body bytes, so a stored copy can be checked later.`,
      request: { query: ReportQuery },
      responses: {
        200: {
          description: 'The report',
          headers: {
            ...artifactHeader,
            'X-Report-Truncated': { description: 'CSV only: true when more rows matched than were listed', schema: { type: 'string' as const, enum: ['true', 'false'] } },
            'Content-Disposition': { description: 'CSV only: attachment; filename="violations-prevented_<first_day>_<last_day>.csv"', schema: { type: 'string' as const } },
          },
          content: {
            'application/json': { schema: ViolationsReportSchema },
            'text/csv': { schema: z.string().openapi({ description: `Header ${CSV_COLUMNS.join(',')}, then one line per row` }) },
          },
        },
        ...errorResponses(400, 401, 403, 422),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const format = query.format ?? (acceptsOver(c.req.header('accept'), 'text/csv') ? 'csv' : 'json');
      const report = await violationsReport(deps, c.get('principal').tenantId, query);
      if (format === 'csv') {
        const body = Buffer.from(violationsCsv(report), 'utf8');
        return c.body(
          new Uint8Array(body),
          200,
          artifactHeaders(body, 'text/csv; charset=utf-8', {
            'content-disposition': `attachment; filename="${violationsCsvFilename(report)}"`,
            'x-report-truncated': String(report.truncated),
          }),
        );
      }
      const body = Buffer.from(JSON.stringify(report), 'utf8');
      return c.body(new Uint8Array(body), 200, artifactHeaders(body, 'application/json'));
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/debts/{id}/defense-packet',
      tags: ['Debts'],
      security,
      middleware,
      summary: 'Sealed litigation evidence bundle of one debt (JSON or ZIP)',
      description: `Everything the tenant holds about the debt, read in one snapshot and sealed: the debt (with its account
number), its contacts (numbers in full), consent evidence, every CDR row (originals and corrections, notes decrypted), its
telephone conversations (the Regulation F ledger: source, call, number, occurred_at, recorded_at), the timeline of each of its calls
(what happened and what the consumer heard, as GET /v1/calls/{call_id} answers it), every compliance decision about the debt with its full audit payload, the compliance policy versions those decisions cite, and an
audit-chain proof: every link from the first link about the debt to the chain head, with the payload text of links about
this debt and only the payload digest of the others, so anyone can recompute every link hash and its continuity up to the
head without seeing other consumers' data (the canonical-text recipe and the server's own check are included).

Sealing: each part is serialized with RFC 8785 (JCS) and hashed; the manifest lists every part's SHA-256 and size, the
chain head and generated_at, and packet_sha256 is the SHA-256 of the JCS manifest without that field. format=json
(default) answers the parts under their keys plus \`manifest\`; format=zip (or, without format, an Accept header preferring
application/zip) answers a ZIP with debt.json, contacts.json, consents.json, call_attempts.json, conversations.json, timelines.json, decisions.json,
policies.json, chain_proof.json, README.txt (how to verify) and manifest.json. Both carry X-Artifact-SHA256 over the exact
body bytes.

The generation is recorded in the audit chain before the packet is sent (action defense_packet.generated, subject the debt,
payload packet_sha256, artifact_sha256, format, chain_head); that link follows the head the packet states. 503
audit_unavailable when it cannot be recorded (nothing is sent). 422 unprocessable when the proof would exceed
${MAX_PROOF_LINKS} links.`,
      request: { params: IdParam, query: PacketQuery },
      responses: {
        200: {
          description: 'The packet',
          headers: {
            ...artifactHeader,
            'Content-Disposition': { description: 'ZIP only: attachment; filename="defense-packet_<debt id>.zip"', schema: { type: 'string' as const } },
          },
          content: {
            'application/json': { schema: DefensePacketSchema },
            'application/zip': { schema: z.string().openapi({ format: 'binary', description: 'ZIP of the part files and manifest.json' }) },
          },
        },
        ...errorResponses(400, 401, 403, 404, 422, 503),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const id = c.req.valid('param').id.toLowerCase();
      const query = c.req.valid('query');
      const format = query.format ?? (acceptsOver(c.req.header('accept'), 'application/zip') ? 'zip' : 'json');
      const packet = await buildDefensePacket(deps, principal.tenantId, id);
      if (!packet) throw notFound('debt not found');
      let body: Buffer;
      let headers: Record<string, string>;
      if (format === 'zip') {
        const manifest = { name: 'manifest.json', data: Buffer.from(canonicalJson(packet.manifest), 'utf8') };
        body = await buildZip([...packet.files, manifest], new Date(packet.manifest.generated_at));
        headers = artifactHeaders(body, 'application/zip', { 'content-disposition': `attachment; filename="defense-packet_${id}.zip"` });
      } else {
        body = Buffer.from(JSON.stringify({ packet: 'defense_packet', packet_version: PACKET_VERSION, ...packet.parts, manifest: packet.manifest }), 'utf8');
        headers = artifactHeaders(body, 'application/json');
      }
      await recordPacketGenerated(deps, principal.tenantId, actorOf(principal), packet, format, headers[ARTIFACT_HASH_HEADER]!);
      return c.body(new Uint8Array(body), 200, headers);
    },
  );

  return app;
}
