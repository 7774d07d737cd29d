import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { withTenantSql } from '../../lib/tenancy';
import { listTranscriptsDue, lockPurgeableConversation, lockRecordingOfCall, purgeConversationTranscript, purgeHeardText } from './ai-call.repository';

/**
 * The words of AI calls follow the call's recording (docs/ai-calls.md, Transcripts and audio):
 * the conversation's transcript and engine state, and the words of its `heard` timeline lines,
 * are purged at the recording's retained_until (for a call without a recording: the date its
 * recording would have had), never while the recording is under legal hold. The conversation row,
 * its events and the rest of the timeline stay as evidence. Runs inside the recording retention
 * sweep's purge. Answers how many were purged and whether the listing was full.
 */
export async function purgeDueTranscripts(deps: AppDeps, limit: number): Promise<{ purged: number; more: boolean }> {
  const due = await listTranscriptsDue(deps.db, limit);
  let purged = 0;
  for (const { conversation_id: id, tenant_id: tenantId } of due) {
    const done = await withTenantSql(deps.db, tenantId, async (sql) => {
      const row = await lockPurgeableConversation(sql, id);
      if (!row) return false;
      if (row.call_uuid) await lockRecordingOfCall(sql, row.call_uuid);
      await purgeConversationTranscript(sql, id);
      if (row.call_attempt_id) await purgeHeardText(sql, row.call_attempt_id);
      await appendAuditSql(sql, tenantId, [
        { actorType: 'workflow', action: 'ai.transcript_purged', subjectType: 'ai_conversation', subjectId: id, payload: { call_uuid: row.call_uuid } },
      ]);
      return true;
    });
    if (done) purged += 1;
  }
  return { purged, more: due.length === limit };
}
