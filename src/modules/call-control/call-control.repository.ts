import type { SqlTx } from '../../lib/tenancy';

/**
 * The id of the request row `call.<action>_requested` one control request wrote (its payload's
 * control_id), read in the transaction that wrote it so the answer names the committed row. Its
 * absence fails that transaction, so no command is sent without a row to name.
 */
export async function requestRowId(sql: SqlTx, tenantId: string, callAttemptId: string, action: string, controlId: string): Promise<string> {
  const [row] = await sql.query<{ id: string }>(
    `SELECT id::text AS id FROM audit_log
      WHERE tenant_id = $1::uuid AND subject_type = 'call_attempt' AND subject_id = $2 AND action = $3 AND payload->>'control_id' = $4`,
    [tenantId, callAttemptId, `call.${action}_requested`, controlId],
  );
  if (!row) throw new Error(`the ${action} request row was not found after its insert`);
  return row.id;
}

/** Whether a correction of the call carries its end (the final row): an original row does not carry it while the call is live. */
export async function hasFinalRow(sql: SqlTx, tenantId: string, callAttemptId: string): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM call_attempts WHERE tenant_id = $1::uuid AND corrects_id = $2::uuid AND ended_at IS NOT NULL LIMIT 1`, [tenantId, callAttemptId]);
  return rows.length > 0;
}

/** What the unhold re-check's compliance profile needs of the call's campaign (attemptProfile). */
export async function findCampaignProfile(sql: SqlTx, campaignId: string): Promise<{ campaign_type: string; ai_voice: boolean } | null> {
  const [row] = await sql.query<{ campaign_type: string; ai_voice: boolean }>(`SELECT campaign_type, ai_voice FROM campaigns WHERE id = $1::uuid`, [campaignId]);
  return row ?? null;
}
