import type { SqlTx } from '../../lib/tenancy';
import { IN_FLIGHT_HORIZON_MS } from '../dialer/capacity.repository';

/**
 * The debt, locked until the dial's transaction ends: two dials of one debt (a double click, two
 * agents) serialize here, so the second one sees the first one's call in flight.
 */
export async function lockDebt(sql: SqlTx, tenantId: string, debtId: string): Promise<{ id: string; campaign_id: string | null } | null> {
  const rows = await sql.query<{ id: string; campaign_id: string | null }>(
    'SELECT id, campaign_id FROM debts WHERE tenant_id = $1::uuid AND id = $2::uuid FOR UPDATE',
    [tenantId, debtId],
  );
  return rows[0] ?? null;
}

export async function debtContacts(sql: SqlTx, tenantId: string, debtId: string): Promise<Array<{ phone_e164: string; is_primary: boolean }>> {
  return sql.query<{ phone_e164: string; is_primary: boolean }>(
    'SELECT phone_e164, is_primary FROM debt_contacts WHERE tenant_id = $1::uuid AND debt_id = $2::uuid ORDER BY is_primary DESC, created_at, id',
    [tenantId, debtId],
  );
}

export interface AgentRow {
  id: string;
  status: string;
  sip_extension: string | null;
  presence: string;
  device_mode: string;
  registered: boolean;
  /** A human-initiated dial holds the seat for another call until then. */
  reserved: boolean;
}

/** The named agent, locked until the dial's transaction ends: its reservation is decided under the lock. */
export async function findAgent(sql: SqlTx, tenantId: string, agentId: string): Promise<AgentRow | null> {
  const rows = await sql.query<AgentRow>(
    `SELECT id, status, sip_extension, presence, device_mode, registered, coalesce(reserved_until > now(), false) AS reserved
       FROM agents WHERE tenant_id = $1::uuid AND id = $2::uuid FOR UPDATE`,
    [tenantId, agentId],
  );
  return rows[0] ?? null;
}

/**
 * Reserves the named agent for this call until the consumer can have answered (the ring timeout
 * plus room for the answer to be reported): the loop's claims skip a reserved seat, the call's own
 * connect takes it (dialableSeatSql). The call's end, or a placement that failed, releases it earlier.
 */
export async function reserveAgent(sql: SqlTx, agentId: string, callAttemptId: string, forMs: number): Promise<void> {
  await sql.query(
    `UPDATE agents SET reserved_call_attempt_id = $2::uuid, reserved_until = now() + make_interval(secs => $3 / 1000.0) WHERE id = $1::uuid`,
    [agentId, callAttemptId, forMs],
  );
}

/**
 * Whether the debt, or the number, already has a call placed and not finished (the in-flight rule
 * of channelsInUse): a second call would ring a phone that is already ringing or talking.
 */
export async function callInFlight(sql: SqlTx, debtId: string, phone: string, now: Date): Promise<boolean> {
  const rows = await sql.query(
    `SELECT 1
       FROM call_attempts o
      WHERE o.corrects_id IS NULL
        AND (o.debt_id = $1::uuid OR o.to_number = $2)
        AND o.started_at > $3::timestamptz - make_interval(secs => $4 / 1000.0)
        AND o.ended_at IS NULL
        AND coalesce(o.disposition, '') <> 'not_placed'
        AND NOT EXISTS (SELECT 1 FROM call_attempts c WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL)
      LIMIT 1`,
    [debtId, phone, now, IN_FLIGHT_HORIZON_MS],
  );
  return rows.length > 0;
}

export interface NewAttempt {
  id: string;
  debtId: string;
  campaignId: string;
  agentId: string | null;
  fromNumber: string | null;
  toNumber: string;
  startedAt: Date;
  snapshot: unknown;
}

/** The ORIGINAL CDR row of a human-initiated dial: the dial tick's columns plus the named agent. */
export async function insertAttempt(sql: SqlTx, a: NewAttempt) {
  const [row] = await sql.query<{ id: string; debt_id: string; to_number: string; from_number: string | null; call_uuid: string | null }>(
    `INSERT INTO call_attempts (id, tenant_id, debt_id, campaign_id, agent_id, consumer_ref, debt_key, from_number, to_number, started_at,
       compliance_snapshot, ai_used)
     SELECT $1::uuid, d.tenant_id, d.id, $3::uuid, $4::uuid, d.consumer_ref, d.external_ref, $5, $6, $7, $8::jsonb, false
       FROM debts d WHERE d.id = $2::uuid
     RETURNING id, debt_id, to_number, from_number, call_uuid`,
    [a.id, a.debtId, a.campaignId, a.agentId, a.fromNumber, a.toNumber, a.startedAt, JSON.stringify(a.snapshot)],
  );
  return row!;
}

/** The debt rests as after a dial of the loop, so the campaign's lead queues do not offer it again at once. */
export async function pushNextDialable(sql: SqlTx, debtId: string, now: Date, afterMs: number): Promise<void> {
  await sql.query(`UPDATE debts SET next_dialable_at = $2::timestamptz + make_interval(secs => $3 / 1000.0) WHERE id = $1::uuid`, [debtId, now, afterMs]);
}

/** The hang-up cause placeCalls recorded on the not_placed row of an attempt the switch never took. */
export async function notPlacedCause(sql: SqlTx, originalId: string): Promise<string | null> {
  const rows = await sql.query<{ hangup_cause: string | null }>(
    `SELECT hangup_cause FROM call_attempts WHERE corrects_id = $1::uuid AND disposition = 'not_placed' ORDER BY inserted_at DESC LIMIT 1`,
    [originalId],
  );
  return rows[0]?.hangup_cause ?? null;
}
