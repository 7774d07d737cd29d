import type { CallAttempt } from '../../../prisma/generated/client';
import type { SqlTx } from '../../lib/tenancy';
import { callAttemptColumns } from '../cdr/call-attempt.views';

export interface CallCampaignRow {
  campaign_id: string | null;
  campaign_type: string | null;
  amd_enabled: boolean | null;
  deferred_bridge: boolean | null;
  optout_digit: string | null;
  ivr_menu: Record<string, unknown> | null;
  tts_prompt: string | null;
}

/** The call's campaign settings; a call of no campaign (a manual dial) reads its campaign columns as nulls. */
export async function findCallCampaign(sql: SqlTx, callAttemptId: string): Promise<CallCampaignRow | null> {
  const [row] = await sql.query<CallCampaignRow>(
    `SELECT a.campaign_id, c.campaign_type, c.amd_enabled, c.deferred_bridge, c.optout_digit, c.ivr_menu, c.tts_prompt
       FROM call_attempts a LEFT JOIN campaigns c ON c.id = a.campaign_id
      WHERE a.id = $1 AND a.corrects_id IS NULL`,
    [callAttemptId],
  );
  return row ?? null;
}

/** The write-once fill of answered_at on the original row: null when it was filled already (a replayed answer). */
export async function fillAnsweredAt(sql: SqlTx, callAttemptId: string, answeredAt: string): Promise<CallAttempt | null> {
  const [row] = await sql.query<CallAttempt>(
    `UPDATE call_attempts AS a SET answered_at = $2 WHERE a.id = $1 AND a.corrects_id IS NULL AND a.answered_at IS NULL
     RETURNING ${callAttemptColumns('a')}`,
    [callAttemptId, answeredAt],
  );
  return row ?? null;
}

/**
 * Frees the agent only while it still holds this call: a late or repeated release (a hangup report
 * after the reaper, a retried finalize) must not free an agent that is talking on its next call.
 */
export async function releaseAgent(sql: SqlTx, agentId: string, callAttemptId: string): Promise<void> {
  await sql.query(
    `UPDATE agents SET presence = 'available', active_call_attempt_id = NULL, updated_at = now()
      WHERE id = $1 AND presence IN ('ringing', 'on_call') AND active_call_attempt_id = $2::uuid`,
    [agentId, callAttemptId],
  );
}

/** ringing → on_call once the agent's leg is bridged to the consumer. */
export async function agentBridged(sql: SqlTx, agentId: string, callAttemptId: string): Promise<void> {
  await sql.query(
    `UPDATE agents SET presence = 'on_call', updated_at = now() WHERE id = $1 AND presence = 'ringing' AND active_call_attempt_id = $2::uuid`,
    [agentId, callAttemptId],
  );
}

/** The seats on_call with this call: the agent an earlier connect already bridged to it, if any. */
export function agentsOnCall(sql: SqlTx, callAttemptId: string): Promise<Array<{ id: string }>> {
  return sql.query<{ id: string }>(`SELECT id FROM agents WHERE active_call_attempt_id = $1::uuid AND presence = 'on_call'`, [callAttemptId]);
}

export interface Keypress {
  campaignId: string | null;
  callAttemptId: string;
  callUuid: string;
  seq: number;
  digit: string;
  menuPath: string;
  action: string | null;
  pressedAt: string;
}

/** A key pressed on a call; a replayed report of the same press (its call and sequence number) is dropped. */
export async function insertKeypress(sql: SqlTx, press: Keypress): Promise<void> {
  await sql.query(
    `INSERT INTO call_keypresses (tenant_id, campaign_id, call_attempt_id, call_uuid, seq, digit, menu_path, action, pressed_at)
     VALUES (app_tenant_id(), $1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (tenant_id, call_uuid, seq) DO NOTHING`,
    [press.campaignId, press.callAttemptId, press.callUuid, press.seq, press.digit, press.menuPath, press.action, press.pressedAt],
  );
}

export async function findCallNumber(sql: SqlTx, callAttemptId: string): Promise<{ to_number: string; debt_id: string; campaign_id: string | null } | null> {
  const [row] = await sql.query<{ to_number: string; debt_id: string; campaign_id: string | null }>(
    'SELECT to_number, debt_id, campaign_id FROM call_attempts WHERE id = $1',
    [callAttemptId],
  );
  return row ?? null;
}
