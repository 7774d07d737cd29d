import type { SqlTx } from '../../lib/tenancy';
import type { SupervisionMode } from './supervision.rules';

/**
 * A pending row older than this lost its request (the API or the worker died mid-way): the
 * command's wait for the supervisor to answer is bounded far below it, so no live request is
 * still holding the row. It is failed so it stops holding a quota slot.
 */
export const PENDING_STALE_SECONDS = 300;

/** A call has ended once its original or a correction of it carries ended_at. */
const CALL_ENDED = `EXISTS (SELECT 1 FROM call_attempts c
                             WHERE c.tenant_id = s.tenant_id AND (c.id = s.call_attempt_id OR c.corrects_id = s.call_attempt_id)
                               AND c.ended_at IS NOT NULL)`;

export interface RosterAgent {
  id: string;
  role: string;
}

export interface LiveSession {
  id: string;
  mode: SupervisionMode;
  status: 'pending' | 'active';
  leg_uuid: string | null;
}

export interface NewSession {
  id: string;
  callAttemptId: string;
  callUuid: string;
  supervisorAgentId: string;
  supervisorExt: string;
  mode: SupervisionMode;
}

export async function agentExtension(sql: SqlTx, tenantId: string, agentId: string): Promise<string | null> {
  const [row] = await sql.query<{ sip_extension: string | null }>(`SELECT sip_extension FROM agents WHERE tenant_id = $1::uuid AND id = $2::uuid`, [tenantId, agentId]);
  return row?.sip_extension ?? null;
}

/** The active agent of the roster with this extension (extensions are unique per tenant). */
export async function findActiveRosterAgent(sql: SqlTx, tenantId: string, extension: string): Promise<RosterAgent | null> {
  const [row] = await sql.query<RosterAgent>(
    `SELECT id, role FROM agents WHERE tenant_id = $1::uuid AND sip_extension = $2 AND status = 'active'`,
    [tenantId, extension],
  );
  return row ?? null;
}

export async function planStatus(sql: SqlTx): Promise<string | null> {
  const [row] = await sql.query<{ plan_status: string }>('SELECT plan_status FROM tenants WHERE id = app_tenant_id()', []);
  return row?.plan_status ?? null;
}

/** Whether a correction of the original call carries ended_at (the original's own is read by the caller). */
export async function correctionEnded(sql: SqlTx, tenantId: string, originalId: string): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM call_attempts WHERE tenant_id = $1::uuid AND corrects_id = $2::uuid AND ended_at IS NOT NULL LIMIT 1`, [tenantId, originalId]);
  return rows.length > 0;
}

/** Serializes the quota check and the slot it reserves, per tenant. */
export async function lockSupervisionQuota(sql: SqlTx, tenantId: string): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('supervision:' || $1::text, 0))`, [tenantId]);
}

/**
 * Frees the slots nobody holds any more, set-based: sessions whose call has ended are ended
 * (call_ended), and pending rows past PENDING_STALE_SECONDS are failed (abandoned).
 */
export async function sweepSessions(sql: SqlTx, tenantId: string): Promise<void> {
  await sql.query(
    `UPDATE supervision_sessions s SET status = 'ended', end_reason = 'call_ended', ended_at = now()
      WHERE s.tenant_id = $1::uuid AND s.status IN ('pending', 'active') AND ${CALL_ENDED}`,
    [tenantId],
  );
  await sql.query(
    `UPDATE supervision_sessions s SET status = 'failed', end_reason = 'abandoned', ended_at = now()
      WHERE s.tenant_id = $1::uuid AND s.status = 'pending' AND s.created_at < now() - make_interval(secs => $2)`,
    [tenantId, PENDING_STALE_SECONDS],
  );
}

/**
 * The supervisor put their phone down: the session of that leg ends (supervisor_left) and frees its
 * slot. A session still pending (the supervisor hung up before the request recorded the leg) ends
 * too, and activateSession then leaves it ended. Null when the session is already over.
 */
export async function endSessionOfLeg(sql: SqlTx, tenantId: string, sessionId: string, legUuid: string): Promise<{ id: string } | null> {
  const [row] = await sql.query<{ id: string }>(
    `UPDATE supervision_sessions SET status = 'ended', end_reason = 'supervisor_left', ended_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND status IN ('pending', 'active') AND (leg_uuid IS NULL OR leg_uuid = $3)
      RETURNING id`,
    [tenantId, sessionId, legUuid],
  );
  return row ?? null;
}

/** This supervisor's live session on the call, locked until the transaction ends. */
export async function findOwnLiveSession(sql: SqlTx, tenantId: string, callUuid: string, supervisorAgentId: string): Promise<LiveSession | null> {
  const [row] = await sql.query<LiveSession>(
    `SELECT id, mode, status, leg_uuid FROM supervision_sessions
      WHERE tenant_id = $1::uuid AND call_uuid = $2 AND supervisor_agent_id = $3::uuid AND status IN ('pending', 'active')
      FOR UPDATE`,
    [tenantId, callUuid, supervisorAgentId],
  );
  return row ?? null;
}

/**
 * Supervision sessions holding a slot: active or freshly pending, on a call that has not ended
 * (what sweepSessions leaves, so a read without the sweep gives the same number). Only
 * supervision_sessions: the dial lane (call_attempts) is a separate ceiling.
 */
export async function liveSessionCount(sql: SqlTx, tenantId: string): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM supervision_sessions s
      WHERE s.tenant_id = $1::uuid AND NOT ${CALL_ENDED}
        AND (s.status = 'active' OR (s.status = 'pending' AND s.created_at >= now() - make_interval(secs => $2)))`,
    [tenantId, PENDING_STALE_SECONDS],
  );
  return row?.n ?? 0;
}

export async function insertPendingSession(sql: SqlTx, tenantId: string, s: NewSession): Promise<void> {
  await sql.query(
    `INSERT INTO supervision_sessions (id, tenant_id, call_attempt_id, call_uuid, supervisor_agent_id, supervisor_ext, mode, status)
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5::uuid, $6, $7, 'pending')`,
    [s.id, tenantId, s.callAttemptId, s.callUuid, s.supervisorAgentId, s.supervisorExt, s.mode],
  );
}

/**
 * Ends the supervisor's previous session (replaced) and inserts the new one pending, so the slot
 * passes from one to the other without a gap. false when the previous session is no longer
 * active (the call ended, or a concurrent request of the same supervisor replaced it first).
 */
export async function replaceSession(sql: SqlTx, tenantId: string, previousId: string, s: NewSession): Promise<boolean> {
  const ended = await sql.query(
    `UPDATE supervision_sessions SET status = 'ended', end_reason = 'replaced', ended_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND status = 'active' RETURNING id`,
    [tenantId, previousId],
  );
  if (ended.length === 0) return false;
  await insertPendingSession(sql, tenantId, s);
  return true;
}

/** pending → active once the switch accepted the command; started_at is that moment. */
export async function activateSession(sql: SqlTx, tenantId: string, id: string, legUuid: string): Promise<Date | null> {
  const [row] = await sql.query<{ started_at: Date }>(
    `UPDATE supervision_sessions SET status = 'active', leg_uuid = $3, started_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND status = 'pending' RETURNING started_at`,
    [tenantId, id, legUuid],
  );
  return row?.started_at ?? null;
}

/** pending → failed: the request did not put a leg on the call, so it stops holding a slot. */
export async function failSession(sql: SqlTx, tenantId: string, id: string, reason: string): Promise<void> {
  await sql.query(
    `UPDATE supervision_sessions SET status = 'failed', end_reason = $3, ended_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND status = 'pending'`,
    [tenantId, id, reason],
  );
}

/**
 * The id of the request row `supervision.<mode>_requested` of one session, read in the transaction
 * that wrote it; its absence fails that transaction, so nothing is sent without a row to name.
 */
export async function requestRowId(sql: SqlTx, tenantId: string, callUuid: string, mode: SupervisionMode, sessionId: string): Promise<string> {
  const [row] = await sql.query<{ id: string }>(
    `SELECT id::text AS id FROM audit_log
      WHERE tenant_id = $1::uuid AND subject_type = 'call' AND subject_id = $2 AND action = $3 AND payload->>'session_id' = $4`,
    [tenantId, callUuid, `supervision.${mode}_requested`, sessionId],
  );
  if (!row) throw new Error(`the ${mode} request row was not found after its insert`);
  return row.id;
}
