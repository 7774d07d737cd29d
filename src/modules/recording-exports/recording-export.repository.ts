import type { SqlTx } from '../../lib/tenancy';
import { paramsInto, RECORDINGS_FROM, recordingFilterConditions, type RecordingFilters } from '../recordings/recording.filters';
import { STALE_CLAIM_ERROR } from './recording-export.rules';
import { EXPORT_COLUMNS, type RecordingExportRow } from './recording-export.views';

export async function findExport(sql: SqlTx, tenantId: string, id: string): Promise<RecordingExportRow | null> {
  const rows = await sql.query<RecordingExportRow>(
    `SELECT ${EXPORT_COLUMNS} FROM recording_exports WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    [tenantId, id],
  );
  return rows[0] ?? null;
}

/** The newest done export of the same filters finished inside the dedup window, or null. */
export async function findReusableExport(sql: SqlTx, tenantId: string, hash: string, ttlSeconds: number): Promise<RecordingExportRow | null> {
  const rows = await sql.query<RecordingExportRow>(
    `SELECT ${EXPORT_COLUMNS} FROM recording_exports
      WHERE tenant_id = $1::uuid AND filter_hash = $2 AND status = 'done'
        AND finished_at > now() - make_interval(secs => $3::int)
      ORDER BY finished_at DESC LIMIT 1`,
    [tenantId, hash, ttlSeconds],
  );
  return rows[0] ?? null;
}

/**
 * Fails the tenant's generating exports whose claim went stale (no heartbeat for staleSeconds: a
 * worker died mid-export), freeing the one-generating slot. Returns their ids.
 */
export async function releaseStaleExports(sql: SqlTx, tenantId: string, staleSeconds: number): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `UPDATE recording_exports e
        SET status = 'failed', error = $3, finished_at = now()
       FROM recording_exports_stale($2::int) s
      WHERE s.tenant_id = $1::uuid AND e.tenant_id = $1::uuid AND e.id = s.export_id AND e.status IN ('queued', 'running')
      RETURNING e.id`,
    [tenantId, staleSeconds, STALE_CLAIM_ERROR],
  );
  return rows.map((r) => r.id);
}

export async function generatingExportId(sql: SqlTx, tenantId: string): Promise<string | null> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM recording_exports WHERE tenant_id = $1::uuid AND status IN ('queued', 'running')`,
    [tenantId],
  );
  return rows[0]?.id ?? null;
}

/** Throws the unique violation of recording_exports_one_generating_key when another export is generating. */
export async function insertExport(
  sql: SqlTx,
  tenantId: string,
  input: { filters: RecordingFilters; hash: string; requestedBy: string | null },
): Promise<RecordingExportRow> {
  const rows = await sql.query<RecordingExportRow>(
    `INSERT INTO recording_exports (tenant_id, filters, filter_hash, requested_by)
     VALUES ($1::uuid, $2::jsonb, $3, $4)
     RETURNING ${EXPORT_COLUMNS}`,
    [tenantId, JSON.stringify(input.filters), input.hash, input.requestedBy],
  );
  return rows[0]!;
}

/** queued → running; null when the job is not queued (already claimed, released or finished). */
export async function claimExport(sql: SqlTx, tenantId: string, id: string): Promise<RecordingExportRow | null> {
  const rows = await sql.query<RecordingExportRow>(
    `UPDATE recording_exports
        SET status = 'running', claimed_at = now(), heartbeat_at = now(), started_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND status = 'queued'
      RETURNING ${EXPORT_COLUMNS}`,
    [tenantId, id],
  );
  return rows[0] ?? null;
}

/** Refreshes the claim; false when the job is no longer running (released as stale). */
export async function touchExport(sql: SqlTx, tenantId: string, id: string): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE recording_exports SET heartbeat_at = now() WHERE tenant_id = $1::uuid AND id = $2::uuid AND status = 'running' RETURNING id`,
    [tenantId, id],
  );
  return rows.length > 0;
}

export async function completeExport(
  sql: SqlTx,
  tenantId: string,
  id: string,
  result: { rowCount: number; audioFiles: number; storageKey: string; sizeBytes: number; sha256: string },
): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE recording_exports
        SET status = 'done', row_count = $3, audio_files = $7, storage_key = $4, size_bytes = $5, sha256 = $6, heartbeat_at = now(), finished_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND status = 'running'
      RETURNING id`,
    [tenantId, id, result.rowCount, result.storageKey, result.sizeBytes, result.sha256, result.audioFiles],
  );
  return rows.length > 0;
}

/** Fails a generating job; false when it had already finished (done, failed or released). */
export async function failExport(sql: SqlTx, tenantId: string, id: string, error: string): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE recording_exports SET status = 'failed', error = $3, finished_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND status IN ('queued', 'running')
      RETURNING id`,
    [tenantId, id, error],
  );
  return rows.length > 0;
}

export interface ExportRecordingRow {
  id: string;
  call_uuid: string;
  started_at: Date;
  phone_number: string;
  account_ref: string | null;
  agent_name: string | null;
  campaign_id: string | null;
  duration_secs: number | null;
  disposition: string | null;
  two_party_consent_state: string | null;
  legal_hold: boolean;
  sha256: string | null;
  storage_key: string | null;
  audio_purged_at: Date | null;
}

/** The recordings an export holds, newest first, at most `take`; the same filters as the list. */
export async function selectExportRows(sql: SqlTx, tenantId: string, filters: RecordingFilters, take: number): Promise<ExportRecordingRow[]> {
  const values: unknown[] = [tenantId];
  const param = paramsInto(values);
  const where = ['r.tenant_id = $1::uuid', ...recordingFilterConditions(filters, param)];
  return sql.query<ExportRecordingRow>(
    `SELECT r.id, r.call_uuid, r.started_at, r.phone_number, r.account_ref, g.name AS agent_name, r.campaign_id, r.duration_secs,
            t.disposition, r.two_party_consent_state, r.legal_hold, r.sha256, r.storage_key, r.audio_purged_at
       FROM ${RECORDINGS_FROM}
      WHERE ${where.join(' AND ')}
      ORDER BY r.started_at DESC, r.id DESC
      LIMIT ${param(take, 'int')}`,
    values,
  );
}
