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
