import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { withTenantSql } from '../../lib/tenancy';

/**
 * The words of AI calls follow the call's recording (docs/ai-calls.md, Transcripts and audio):
 * the conversation's transcript and engine state, and the words of its `heard` timeline lines,
 * are purged at the recording's retained_until (for a call without a recording: the date its
 * recording would have had), never while the recording is under legal hold. The conversation row,
 * its events and the rest of the timeline stay as evidence. Runs inside the recording retention
 * sweep's purge. Answers how many were purged and whether the listing was full.
 */
export async function purgeDueTranscripts(deps: AppDeps, limit: number): Promise<{ purged: number; more: boolean }> {
  const due = await deps.db.pool.query<{ conversation_id: string; tenant_id: string }>({
    name: 'ai_transcript_purge_due',
    text: 'SELECT conversation_id, tenant_id FROM ai_transcript_purge_due($1)',
    values: [limit],
  });
  let purged = 0;
  for (const { conversation_id: id, tenant_id: tenantId } of due.rows) {
    const done = await withTenantSql(deps.db, tenantId, async (sql) => {
      // Re-checked under lock: a legal hold placed since the listing keeps the words.
      const [row] = await sql.query<{ call_attempt_id: string | null; call_uuid: string | null }>(
        `SELECT c.call_attempt_id, c.call_uuid FROM ai_conversations c
           JOIN tenants t ON t.id = c.tenant_id
           LEFT JOIN recordings r ON r.tenant_id = c.tenant_id AND r.call_uuid = c.call_uuid
          WHERE c.id = $1 AND c.transcript_purged_at IS NULL AND c.status <> 'active' AND NOT coalesce(r.legal_hold, false)
            AND coalesce(r.retained_until, ((c.started_at AT TIME ZONE 'UTC')::date + make_interval(months => t.retention_months))::date)
                < (now() AT TIME ZONE 'UTC')::date
          FOR UPDATE OF c`,
        [id],
      );
      if (!row) return false;
      if (row.call_uuid) await sql.query('SELECT 1 FROM recordings WHERE call_uuid = $1 FOR UPDATE', [row.call_uuid]);
      await sql.query(`UPDATE ai_conversations SET transcript = '[]'::jsonb, engine_state = NULL, transcript_purged_at = now() WHERE id = $1`, [id]);
      if (row.call_attempt_id) {
        await sql.query(
          `UPDATE call_events SET data = (data - 'text') || '{"text_purged": true}'::jsonb
            WHERE call_attempt_id = $1 AND event = 'heard' AND data ? 'text'`,
          [row.call_attempt_id],
        );
      }
      await appendAuditSql(sql, tenantId, [
        { actorType: 'workflow', action: 'ai.transcript_purged', subjectType: 'ai_conversation', subjectId: id, payload: { call_uuid: row.call_uuid } },
      ]);
      return true;
    });
    if (done) purged += 1;
  }
  return { purged, more: due.rows.length === limit };
}
