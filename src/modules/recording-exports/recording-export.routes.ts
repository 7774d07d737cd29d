import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonBody, jsonContent } from '../../lib/openapi';
import { EXPORT_ROW_CAP, DEFAULT_WINDOW_DAYS } from './recording-export.rules';
import { CreateRecordingExportBody, JobIdParam, RecordingExportEnvelope } from './recording-export.schemas';
import { getExport, requestExport } from './recording-export.service';

const security = [{ bearer: [] }];
const tags = ['Recording exports'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: an API key or a dashboard session; a `ddw_` widget token is 403 `forbidden`.';

const ARCHIVE = `The archive (application/zip, saved as recordings-export-<job_id>.zip) holds one entry per recording whose audio
is still kept, recordings/<call_id>.wav (stored uncompressed), and manifest.csv (RFC 4180, CRLF; a text cell starting with
=, +, -, @ is prefixed with an apostrophe so no spreadsheet runs it, except an E.164 phone number, digits only) with the columns recording_id, call_id, started_at, phone_number (full E.164),
account_ref, agent (the agent's name), campaign_id, duration_secs, disposition (of the call's terminal CDR row),
two_party_consent_state, legal_hold, sha256 (of the audio as recorded), audio_included (false for audio purged by retention or
missing from the store: the row is still listed as evidence). At most ${EXPORT_ROW_CAP} recordings, newest first: row_count equal
to ${EXPORT_ROW_CAP} means the window may hold more, export a narrower from/to for the rest. The URL is signed afresh on every
answer for the tenant's recording policy export_url_ttl_seconds (default 3600 s); after expires_at, or with anything in it
altered, it is 403.`;

const LIFECYCLE = `Status: queued (accepted, waiting for a worker) → running (claimed; its heartbeat_at advances while the archive
streams) → done (url, expires_at and row_count set) or failed (error set). A job whose heartbeat stops for
RECORDING_EXPORT_CLAIM_STALE_SECONDS (900 s) — its worker died — is released by the next export request of the tenant: failed
with error "stale claim released", and its workflow is terminated. Nothing is emitted on the event stream; the job is audited
as recording_export.requested (a dedup hand-back too, with reused: true: every handed-out archive URL has its evidence),
recording_export.completed and recording_export.failed. A worker that lost its claim cannot finish the job: its late
archive is removed. Transient object-store failures are retried (a few attempts over minutes), then the job fails.`;

export function recordingExportRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/recording-exports',
      tags,
      security,
      middleware,
      summary: 'Export recordings (audio and a CSV manifest) as one ZIP archive, produced durably in the background',
      description: `Body {from, to, agent_id, campaign_id, disposition, q, refresh}, all optional, unknown keys 400. The filters mean what
they mean on GET /v1/recordings. Design defaults: to = now, from = ${DEFAULT_WINDOW_DAYS} days before to. Decided in this order:
1. 400 \`bad_request\` for a malformed body; 422 \`unprocessable\` for from after to (a rule across two fields).
2. 422 \`range_too_large\` when to − from exceeds RECORDING_EXPORT_MAX_RANGE_DAYS (${deps.config.RECORDING_EXPORT_MAX_RANGE_DAYS}) days.
3. Dedup: an identical request (the same filters once normalized: instants in UTC, ids lower case, q trimmed and lower case;
   an omitted from or to counts as "the default window") whose export finished done within RECORDING_EXPORT_DEDUP_TTL_SECONDS
   (${deps.config.RECORDING_EXPORT_DEDUP_TTL_SECONDS} s) answers 202 with that same job and a freshly signed URL. Handing back an
   archive is never gated by the one-at-a-time rule. refresh: true skips this step.
4. Stale claims of the tenant are released (see the life cycle).
5. 429 \`export_in_progress\` when another export of the tenant is queued or running (one generating export per tenant,
   enforced by a unique index, so concurrent requests cannot both pass).
6. 503 \`storage_unavailable\` when the object store cannot take a write now; nothing is written.
7. 202 with the new job, queued; the workflow recording-export:<tenant>:<job_id> produces it.

${ARCHIVE}

${LIFECYCLE} ${SCOPE}`,
      request: { body: jsonBody(CreateRecordingExportBody) },
      responses: {
        202: jsonContent(RecordingExportEnvelope, 'The job: new and queued, or the reused done job with a fresh URL'),
        ...errorResponses(400, 401, 403, 413, 415, 422, 429, 500, 503),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ export: await requestExport(deps, principal.tenantId, actorOf(principal), c.req.valid('json')) }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/recording-exports/{job_id}',
      tags,
      security,
      middleware,
      summary: 'An export job; a done job carries a freshly signed archive URL',
      description: `${LIFECYCLE}

${ARCHIVE}

An unknown, foreign (another tenant's) or malformed job_id is 404 \`not_found\`. ${SCOPE}`,
      request: { params: JobIdParam },
      responses: { 200: jsonContent(RecordingExportEnvelope, 'The job'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ export: await getExport(deps, c.get('principal').tenantId, c.req.valid('param').job_id) }, 200),
  );

  return app;
}
