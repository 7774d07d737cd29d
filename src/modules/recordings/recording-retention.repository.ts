import type { Pool } from 'pg';
import type { SqlTx } from '../../lib/tenancy';

/** Recordings whose audio is due for purge, across tenants (SECURITY DEFINER listing: ids and tenants only). */
export async function listPurgeDue(pool: Pool, limit: number): Promise<Array<{ recording_id: string; tenant_id: string }>> {
  const res = await pool.query<{ recording_id: string; tenant_id: string }>({
    name: 'recording_purge_due',
    text: 'SELECT recording_id, tenant_id FROM recording_purge_due($1)',
    values: [limit],
  });
  return res.rows;
}

export interface PurgeCandidate {
  id: string;
  call_uuid: string;
  storage_key: string | null;
  retained_until: string;
}

/**
 * Locks the row when it is still due: not held, not purged, retained_until before today (UTC).
 * The lock holds a concurrent legal hold back until the purge commits or rolls back.
 */
export async function lockIfStillDue(sql: SqlTx, recordingId: string): Promise<PurgeCandidate | null> {
  const [row] = await sql.query<PurgeCandidate>(
    `SELECT id, call_uuid, storage_key, to_char(retained_until, 'YYYY-MM-DD') AS retained_until FROM recordings
      WHERE id = $1 AND NOT legal_hold AND audio_purged_at IS NULL AND retained_until < (now() AT TIME ZONE 'UTC')::date
      FOR UPDATE`,
    [recordingId],
  );
  return row ?? null;
}

export async function markAudioPurged(sql: SqlTx, recordingId: string): Promise<void> {
  await sql.query('UPDATE recordings SET audio_purged_at = now() WHERE id = $1', [recordingId]);
}

/**
 * Re-dates the session tenant's recordings whose audio is still kept to their creation date (UTC)
 * plus `months`, the formula insertRecording uses; answers how many moved. Held recordings move
 * too: the hold, not the date, keeps them.
 */
export async function redateRetention(sql: SqlTx, months: number): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `WITH moved AS (
       UPDATE recordings SET retained_until = ((created_at AT TIME ZONE 'UTC')::date + make_interval(months => $1::int))::date
        WHERE tenant_id = app_tenant_id() AND audio_purged_at IS NULL
          AND retained_until <> ((created_at AT TIME ZONE 'UTC')::date + make_interval(months => $1::int))::date
       RETURNING 1)
     SELECT count(*)::int AS n FROM moved`,
    [months],
  );
  return rows[0]?.n ?? 0;
}
