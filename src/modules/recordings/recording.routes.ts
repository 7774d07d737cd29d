import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { LegalHoldBody, ListRecordingsQuery, PlaybackUrl, RecordingEnvelope, RecordingPage } from './recording.schemas';
import { getRecording, issuePlaybackUrl, listRecordings, setLegalHold } from './recording.service';

const security = [{ bearer: [] }];
const tags = ['Recordings'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: an API key or a dashboard session; a `ddw_` widget token is 403 `forbidden`.';
const NOT_FOUND = 'An unknown, foreign (another tenant\'s) or malformed id is 404 `not_found`.';

export function recordingRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/recordings',
      tags,
      security,
      middleware,
      summary: 'Recordings, newest first (metadata only; audio is never served here)',
      description: `Ordered by started_at then id, newest first; from (inclusive) and to (exclusive) bound started_at, from after to
is 422 unprocessable (a rule across two parameters). Filters combine with AND. disposition matches the call's terminal CDR row (the latest correction of its original
row, else the original), the same value each item shows. q is free text over the masked phone (\`***\` plus the last four
digits), account_ref and the debt's external reference; it never searches the full number, so it cannot be used to confirm
which numbers were called. limit defaults to 100, above 1000 is 400. phone_number is the full E.164 number (the owner's
view). audio_available (a design addition) is false once retention purged the audio; the row stays as evidence. Audio is
reached only through POST /v1/recordings/{id}/playback-url or an export. ${SCOPE}`,
      request: { query: ListRecordingsQuery },
      responses: { 200: jsonContent(RecordingPage, 'A page of recordings'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await listRecordings(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/recordings/{id}',
      tags,
      security,
      middleware,
      summary: 'One recording: the list item plus its full metadata',
      description: `The list item plus call_attempt_id, campaign_id, debt_id, consent_notice_played, size_bytes, sha256 (of the
audio as stored), legal_hold_reason, legal_hold_at, audio_purged_at (null while the audio is kept) and created_at. ${NOT_FOUND} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(RecordingEnvelope, 'The recording'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ recording: await getRecording(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/recordings/{id}/playback-url',
      tags,
      security,
      middleware,
      summary: 'A short-lived signed URL of the audio',
      description: `Answers {url, expires_at}: a signed download URL of the WAV, valid for the tenant's recording policy
playback_url_ttl_seconds (default 300 s), saved as recording-<id>.wav. The URL needs no bearer; after expires_at, or with
anything in it altered (key, expiry, signature, name), it is 403. No body is read. 409 \`conflict\` when the audio was purged
by retention or is missing from the store; 503 \`storage_unavailable\` when the object store cannot serve now (retry later).
Every URL issued is audited as recording.playback_url_issued (who, when, until when): the evidence of access. ${NOT_FOUND} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(PlaybackUrl, 'The signed URL'), ...errorResponses(401, 403, 404, 409, 503) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await issuePlaybackUrl(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/recordings/{id}/legal-hold',
      tags,
      security,
      middleware,
      summary: 'Place or release a legal hold',
      description: `Body {legal_hold (boolean, required), reason (up to 500 characters, required when legal_hold is true)};
unknown keys are 400. A held recording is never purged by retention. Idempotent: repeating the current state changes nothing
and records nothing; a held recording given a new reason keeps its legal_hold_at. Releasing clears legal_hold_reason and
legal_hold_at (the audit log keeps the history); a released recording whose retained_until has passed becomes eligible for
the next retention purge. Audited as recording.legal_hold_set or recording.legal_hold_released. ${NOT_FOUND} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(LegalHoldBody) },
      responses: {
        200: jsonContent(RecordingEnvelope, 'The recording after the change'),
        ...errorResponses(400, 401, 403, 404, 413, 415),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const recording = await setLegalHold(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json'));
      return c.json({ recording }, 200);
    },
  );

  return app;
}
