import type { Database } from '../../lib/db';
import type { SqlTx } from '../../lib/tenancy';
import type { InboundDestType } from '../../contracts/inbound-call';

export interface ResolvedInboundRoute {
  route_id: string;
  tenant_id: string;
  dest_type: InboundDestType;
  dest_ref: string | null;
  recording: boolean;
  ai_enabled: boolean;
  queue_stream_enabled: boolean;
}

/**
 * The route of a called number, across tenants (the tenant is not known until the number says
 * it): auth_inbound_route answers only an active route on an active DID of the same tenant.
 */
export async function resolveInboundRoute(db: Database, e164: string): Promise<ResolvedInboundRoute | null> {
  const { rows } = await db.pool.query<ResolvedInboundRoute>(
    'SELECT route_id, tenant_id, dest_type, dest_ref, recording, ai_enabled, queue_stream_enabled FROM auth_inbound_route($1)',
    [e164],
  );
  return rows[0] ?? null;
}

/**
 * The call's original CDR row, direction inbound: to_number is the caller (the consumer's
 * number, as on every CDR row), from_number the DID. The debt is the caller's when exactly one
 * debt of the tenant has a contact with that number, else none. A repeat for the same call uuid
 * answers the row already written.
 */
export async function insertInboundAttempt(
  sql: SqlTx,
  a: { callUuid: string; caller: string; did: string; startedAt: string },
): Promise<{ id: string; debt_id: string | null }> {
  const [row] = await sql.query<{ id: string; debt_id: string | null }>(
    `WITH matched AS (
       SELECT d.id, d.consumer_ref, d.external_ref FROM debts d
        WHERE d.id IN (SELECT dc.debt_id FROM debt_contacts dc WHERE dc.phone_e164 = $2)
     ), one AS (SELECT * FROM matched WHERE (SELECT count(*) FROM matched) = 1)
     INSERT INTO call_attempts (tenant_id, debt_id, direction, consumer_ref, debt_key, call_uuid, from_number, to_number, started_at)
     SELECT app_tenant_id(), one.id, 'inbound', coalesce(one.consumer_ref, ''), coalesce(one.external_ref, ''), $1, $3, $2, $4
       FROM (SELECT 1) x LEFT JOIN one ON true
     ON CONFLICT (tenant_id, call_uuid) WHERE corrects_id IS NULL AND call_uuid IS NOT NULL DO NOTHING
     RETURNING id, debt_id`,
    [a.callUuid, a.caller, a.did, a.startedAt],
  );
  if (row) return row;
  const [existing] = await sql.query<{ id: string; debt_id: string | null }>(
    `SELECT id, debt_id FROM call_attempts WHERE call_uuid = $1 AND corrects_id IS NULL AND direction = 'inbound'`,
    [a.callUuid],
  );
  return existing!;
}

/** The seat a route names: an active agent of the tenant with that sip_extension. */
export async function agentIdByExtension(sql: SqlTx, extension: string): Promise<string | null> {
  const [row] = await sql.query<{ id: string }>(`SELECT id FROM agents WHERE sip_extension = $1 AND status = 'active' LIMIT 1`, [extension]);
  return row?.id ?? null;
}

/** The menu of the campaign an ivr route names, and the campaign's prompt for its root. */
export async function campaignMenu(sql: SqlTx, campaignId: string): Promise<{ ivr_menu: Record<string, unknown> | null; tts_prompt: string | null } | null> {
  const [row] = await sql.query<{ ivr_menu: Record<string, unknown> | null; tts_prompt: string | null }>(
    'SELECT ivr_menu, tts_prompt FROM campaigns WHERE id = $1::uuid',
    [campaignId],
  );
  return row ?? null;
}

/** Moves the seat claimed for this call on (ringing to on_call) or frees it; a seat no longer claimed for this call is left alone. */
export async function setPresence(sql: SqlTx, agentId: string, callAttemptId: string, presence: 'on_call' | 'available'): Promise<void> {
  if (presence === 'on_call') {
    await sql.query(`UPDATE agents SET presence = 'on_call', updated_at = now() WHERE id = $1 AND presence = 'ringing' AND active_call_attempt_id = $2::uuid`, [
      agentId,
      callAttemptId,
    ]);
    return;
  }
  await sql.query(
    `UPDATE agents SET presence = 'available', active_call_attempt_id = NULL, updated_at = now()
      WHERE id = $1 AND presence IN ('ringing', 'on_call') AND active_call_attempt_id = $2::uuid`,
    [agentId, callAttemptId],
  );
}

/** The debt the call's CDR row matched (null: the caller matched none). */
export async function callDebtId(sql: SqlTx, callAttemptId: string): Promise<string | null> {
  const [row] = await sql.query<{ debt_id: string | null }>('SELECT debt_id FROM call_attempts WHERE id = $1', [callAttemptId]);
  return row?.debt_id ?? null;
}
