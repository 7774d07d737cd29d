import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { withTenantSql } from '../../lib/tenancy';
import { listPurgeDue, lockIfStillDue, markAudioPurged } from './recording-retention.repository';
import { purgeDueTranscripts } from '../ai-calls/ai-transcript-retention';

export interface PurgeResult {
  purged: number;
  /** Listed rows that were no longer due when locked (held or purged meanwhile). */
  skipped: number;
  /** The listing was full: more rows may be due. */
  more: boolean;
  /** AI calls whose words were purged at their recording's horizon (ai-transcript-retention.ts). */
  transcriptsPurged: number;
}

/**
 * One retention pass over at most `limit` due recordings. Each row is re-checked and purged in
 * its own tenant's transaction: the audio is deleted from the store while the row is locked, then
 * audio_purged_at is set and recording.audio_purged audited; the metadata row stays as evidence.
 * A store failure leaves that row due for the next pass (deleting an absent object succeeds, so a
 * repeat is harmless); the other rows are still worked, then the failure is thrown for a retry.
 * The words of AI calls due at the same horizon are purged in the same pass.
 */
export async function purgeDueRecordings(deps: AppDeps, input: { limit: number }): Promise<PurgeResult> {
  const due = await listPurgeDue(deps.db.pool, input.limit);
  let purged = 0;
  let skipped = 0;
  let failure: Error | null = null;
  for (const { recording_id: id, tenant_id: tenantId } of due) {
    try {
      const done = await withTenantSql(deps.db, tenantId, async (sql) => {
        const row = await lockIfStillDue(sql, id);
        if (!row) return false;
        if (row.storage_key) await deps.objectStore.delete(row.storage_key);
        await markAudioPurged(sql, id);
        await appendAuditSql(sql, tenantId, [
          {
            actorType: 'workflow',
            action: 'recording.audio_purged',
            subjectType: 'recording',
            subjectId: id,
            payload: { call_uuid: row.call_uuid, storage_key: row.storage_key, retained_until: row.retained_until },
          },
        ]);
        return true;
      });
      if (done) purged += 1;
      else skipped += 1;
    } catch (err) {
      failure ??= err instanceof Error ? err : new Error(String(err));
    }
  }
  // After the recordings: a recording purged in this pass has its call's words purged in the same one.
  const transcripts = await purgeDueTranscripts(deps, input.limit);
  if (failure) throw failure;
  return { purged, skipped, more: due.length === input.limit || transcripts.more, transcriptsPurged: transcripts.purged };
}
