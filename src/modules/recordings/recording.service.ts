import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { conflict, notFound } from '../../lib/errors';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql } from '../../lib/tenancy';
import { findRecording, listRecordingRows, updateLegalHold, urlTtlsOf } from './recording.repository';
import type { LegalHoldInput, ListRecordingsQueryInput } from './recording.schemas';
import { hasAudio, recordingDetailView, recordingView } from './recording.views';

type Actor = { type: ActorType; id: string | null };

export async function listRecordings(deps: AppDeps, tenantId: string, query: ListRecordingsQueryInput) {
  const { limit, cursor, ...filters } = query;
  const before = cursor ? decodeTimestampIdCursor(cursor) : null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) => listRecordingRows(sql, tenantId, filters, before, limit + 1));
  const { page, nextCursor } = paginate(rows, limit, (r) => [r.started_at.toISOString(), r.id]);
  return { recordings: page.map(recordingView), next_cursor: nextCursor };
}

export async function getRecording(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenantSql(deps.db, tenantId, (sql) => findRecording(sql, tenantId, id));
  if (!row) throw notFound();
  return recordingDetailView(row);
}

/**
 * A short-lived signed URL of the audio. The object is looked up first (head) so a store that
 * cannot serve is 503 now rather than a dead link later, and audio gone from the store is the
 * same 409 as purged audio. The issue is audited in its own transaction after signing: every
 * URL handed out has its evidence (who, when, until when).
 */
export async function issuePlaybackUrl(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  const { row, ttls } = await withTenantSql(deps.db, tenantId, async (sql) => ({
    row: await findRecording(sql, tenantId, id),
    ttls: await urlTtlsOf(sql, tenantId),
  }));
  if (!row) throw notFound();
  if (row.audio_purged_at !== null) throw conflict('the audio of this recording was purged by retention');
  const key = hasAudio(row) ? row.storage_key : null;
  if (key === null || (await deps.objectStore.head(key)) === null) throw conflict('no audio of this recording is in the store');
  const signed = await deps.objectStore.signedUrl(key, {
    expiresInSeconds: ttls.playbackSeconds,
    downloadName: `recording-${row.id}.wav`,
  });
  await withTenantSql(deps.db, tenantId, (sql) =>
    appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: 'recording.playback_url_issued',
        subjectType: 'recording',
        subjectId: row.id,
        payload: { call_id: row.call_uuid, expires_at: signed.expires_at, ttl_seconds: ttls.playbackSeconds },
      },
    ]),
  );
  return signed;
}

/**
 * Places, changes or releases the hold. A repeat of the current state is a no-op without an audit
 * entry; a held recording given a new reason keeps its legal_hold_at. Releasing clears the reason
 * and legal_hold_at (the audit log keeps the history); a released recording past retained_until
 * is purged by the next retention sweep.
 */
export async function setLegalHold(deps: AppDeps, tenantId: string, actor: Actor, id: string, input: LegalHoldInput) {
  const reason = input.legal_hold ? (input.reason ?? null) : null;
  const row = await withTenantSql(deps.db, tenantId, async (sql) => {
    const current = await findRecording(sql, tenantId, id, true);
    if (!current) throw notFound();
    if (current.legal_hold === input.legal_hold && current.legal_hold_reason === reason) return current;
    await updateLegalHold(sql, tenantId, id, { legalHold: input.legal_hold, reason, keepSince: current.legal_hold && input.legal_hold });
    await appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: input.legal_hold ? 'recording.legal_hold_set' : 'recording.legal_hold_released',
        subjectType: 'recording',
        subjectId: id,
        payload: {
          reason: input.reason ?? null,
          previous_reason: current.legal_hold_reason,
          retained_until: current.retained_until,
        },
      },
    ]);
    return findRecording(sql, tenantId, id);
  });
  if (!row) throw notFound();
  return recordingDetailView(row);
}
