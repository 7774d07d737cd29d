import type { SqlTx } from '../../lib/tenancy';
import { paramsInto, RECORDINGS_FROM, recordingFilterConditions, type RecordingFilters } from './recording.filters';
import { RECORDING_COLUMNS, type RecordingRow } from './recording.views';

/** Defaults of recording_policies, for a tenant without a row. */
export const DEFAULT_PLAYBACK_URL_TTL_SECONDS = 300;
export const DEFAULT_EXPORT_URL_TTL_SECONDS = 3600;

/**
 * Recordings matching the filters, newest first ((started_at, id) descending, recordings_page_idx
 * read backwards), starting after `before`; one statement.
 */
export async function listRecordingRows(
  sql: SqlTx,
  tenantId: string,
  filters: RecordingFilters,
  before: { at: Date; id: string } | null,
  take: number,
): Promise<RecordingRow[]> {
  const values: unknown[] = [tenantId];
  const param = paramsInto(values);
  const where = ['r.tenant_id = $1::uuid', ...recordingFilterConditions(filters, param)];
  if (before) where.push(`(r.started_at, r.id) < (${param(before.at, 'timestamptz')}, ${param(before.id, 'uuid')})`);
  return sql.query<RecordingRow>(
    `SELECT ${RECORDING_COLUMNS} FROM ${RECORDINGS_FROM}
      WHERE ${where.join(' AND ')}
      ORDER BY r.started_at DESC, r.id DESC
      LIMIT ${param(take, 'int')}`,
    values,
  );
}

/** One recording; `lock` takes the row lock a legal-hold change needs. */
export async function findRecording(sql: SqlTx, tenantId: string, id: string, lock = false): Promise<RecordingRow | null> {
  const rows = await sql.query<RecordingRow>(
    `SELECT ${RECORDING_COLUMNS} FROM ${RECORDINGS_FROM}
      WHERE r.tenant_id = $1::uuid AND r.id = $2::uuid
      ${lock ? 'FOR NO KEY UPDATE OF r' : ''}`,
    [tenantId, id],
  );
  return rows[0] ?? null;
}

export async function updateLegalHold(
  sql: SqlTx,
  tenantId: string,
  id: string,
  hold: { legalHold: boolean; reason: string | null; keepSince: boolean },
): Promise<void> {
  await sql.query(
    `UPDATE recordings
        SET legal_hold = $3, legal_hold_reason = $4,
            legal_hold_at = CASE WHEN NOT $3 THEN NULL WHEN $5 THEN legal_hold_at ELSE now() END
      WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    [tenantId, id, hold.legalHold, hold.reason, hold.keepSince],
  );
}

export interface UrlTtls {
  playbackSeconds: number;
  exportSeconds: number;
}

/** The tenant's signed-URL lifetimes: its recording policy, else the defaults. */
export async function urlTtlsOf(sql: SqlTx, tenantId: string): Promise<UrlTtls> {
  const rows = await sql.query<{ playback_url_ttl_seconds: number; export_url_ttl_seconds: number }>(
    `SELECT playback_url_ttl_seconds, export_url_ttl_seconds FROM recording_policies WHERE tenant_id = $1::uuid`,
    [tenantId],
  );
  const row = rows[0];
  return {
    playbackSeconds: row?.playback_url_ttl_seconds ?? DEFAULT_PLAYBACK_URL_TTL_SECONDS,
    exportSeconds: row?.export_url_ttl_seconds ?? DEFAULT_EXPORT_URL_TTL_SECONDS,
  };
}
