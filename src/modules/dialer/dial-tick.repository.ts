import type { RunCounters } from '../../contracts/campaign-run';
import type { SqlTx } from '../../lib/tenancy';
import { dialableSeatSql } from '../agents/agent.repository';
import { IN_FLIGHT_HORIZON_MS } from './capacity.repository';

export interface CampaignRow {
  state: string;
  campaign_type: string;
  ai_voice: boolean;
  amd_enabled: boolean | null;
  caller_ids: string[];
  caller_id_pool: string[];
  abandonment_threshold: string | null;
  min_dial_ratio: string | null;
  max_dial_ratio: string | null;
  abandon_seller_name: string | null;
  abandon_seller_phone: string | null;
  max_cps: number | null;
  max_concurrent_channels: number | null;
  calling_window_start: string | null;
  calling_window_end: string | null;
  default_timezone: string | null;
  calling_window_destination_local: boolean;
}

export interface PlannedCall {
  id: string;
  debt_id: string;
  to_number: string;
  from_number: string | null;
  call_uuid: string | null;
}

/** An attempt the engine allowed, with the evidence of its decision. */
export interface AttemptToRecord {
  id: string;
  debt_id: string;
  to_number: string;
  from_number: string | null;
  snapshot: unknown;
}

export async function readCampaign(sql: SqlTx, campaignId: string): Promise<CampaignRow | null> {
  const [row] = await sql.query<CampaignRow>(
    `SELECT c.state, c.campaign_type, c.ai_voice, c.amd_enabled, c.caller_ids, c.caller_id_pool::text[] AS caller_id_pool,
            c.abandonment_threshold::text, c.min_dial_ratio::text, c.max_dial_ratio::text,
            t.abandon_seller_name, t.abandon_seller_phone, t.max_cps, t.max_concurrent_channels,
            c.calling_window_start::text, c.calling_window_end::text, c.default_timezone, c.calling_window_destination_local
       FROM campaigns c JOIN tenants t ON t.id = c.tenant_id
      WHERE c.id = $1`,
    [campaignId],
  );
  return row ?? null;
}

/** The campaign's type alone: a text campaign's tick takes another path before anything else is read. */
export async function readCampaignType(sql: SqlTx, campaignId: string): Promise<string | null> {
  const [row] = await sql.query<{ campaign_type: string }>('SELECT campaign_type FROM campaigns WHERE id = $1', [campaignId]);
  return row?.campaign_type ?? null;
}

/** What placing a call needs of its campaign: the trunk is found by the id, AMD by the type and flag. */
export async function readPlacementCampaign(sql: SqlTx, campaignId: string): Promise<{ id: string; campaign_type: string; amd_enabled: boolean | null } | null> {
  const [row] = await sql.query<{ id: string; campaign_type: string; amd_enabled: boolean | null }>('SELECT id, campaign_type, amd_enabled FROM campaigns WHERE id = $1', [
    campaignId,
  ]);
  return row ?? null;
}

/** The numbers of a caller-id pool that are ACTIVE DIDs now: a quarantined or parked DID drops out at once. */
export async function activePoolNumbers(sql: SqlTx, didIds: string[]): Promise<string[]> {
  const rows = await sql.query<{ e164: string }>(`SELECT e164 FROM dids WHERE id = ANY ($1::uuid[]) AND status = 'active' ORDER BY e164`, [didIds]);
  return rows.map((r) => r.e164);
}

/** Seats the dialer may take now: available and reachable, not reserved by a human-initiated dial (dialableSeatSql). */
export async function availableAgents(sql: SqlTx): Promise<number> {
  const [row] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM agents a WHERE ${dialableSeatSql('a')}`);
  return row?.n ?? 0;
}

/**
 * Calls of the campaign in progress that no agent holds yet: ringing, or answered and waiting for
 * an AMD verdict or an agent. Each will want an agent, so pacing counts them against the seats.
 */
export async function ringingCalls(sql: SqlTx, campaignId: string, now: Date): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM call_attempts o
      WHERE o.corrects_id IS NULL AND o.campaign_id = $1
        AND NOT EXISTS (SELECT 1 FROM agents ag WHERE ag.active_call_attempt_id = o.id)
        AND o.started_at > $2::timestamptz - make_interval(secs => $3 / 1000.0)
        AND NOT EXISTS (SELECT 1 FROM call_attempts c WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL)`,
    [campaignId, now, IN_FLIGHT_HORIZON_MS],
  );
  return row?.n ?? 0;
}

/**
 * Due callbacks of the campaign, highest priority first, locked with their debts so a concurrent
 * tick skips them instead of dialing them twice.
 */
export function claimDueCallbacks(
  sql: SqlTx,
  campaignId: string,
  now: Date,
  limit: number,
): Promise<Array<{ id: string; debt_id: string; contact_phone: string; external_ref: string }>> {
  return sql.query<{ id: string; debt_id: string; contact_phone: string; external_ref: string }>(
    `SELECT cb.id, cb.debt_id, cb.contact_phone, d.external_ref
       FROM callbacks cb JOIN debts d ON d.id = cb.debt_id
      WHERE cb.campaign_id = $1 AND cb.status = 'pending' AND cb.scheduled_at <= $2
        AND (cb.retry_at IS NULL OR cb.retry_at <= $2)
        -- A callback naming its agent is dialed by its own timer, which bridges only that agent (callback-dial.service.ts).
        AND cb.agent_id IS NULL
      ORDER BY cb.priority DESC, cb.scheduled_at, cb.id
      LIMIT $3
      FOR UPDATE OF cb, d SKIP LOCKED`,
    [campaignId, now, limit],
  );
}

/** The tick's attempt rows, one statement; each row's id is the tick's (tickRowId), so a retried tick finds them. */
export function recordAttempts(sql: SqlTx, attempts: AttemptToRecord[], campaignId: string, now: Date, aiUsed: boolean): Promise<PlannedCall[]> {
  return sql.query<PlannedCall>(
    `INSERT INTO call_attempts (id, tenant_id, debt_id, campaign_id, consumer_ref, debt_key, from_number, to_number, started_at,
       compliance_snapshot, ai_used)
     SELECT x.id, d.tenant_id, x.debt_id, $2::uuid, d.consumer_ref, d.external_ref, x.from_number, x.to_number, $3, x.snapshot, $4
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, debt_id uuid, from_number text, to_number text, snapshot jsonb)
       JOIN debts d ON d.id = x.debt_id
     RETURNING id, debt_id, to_number, from_number, call_uuid`,
    [JSON.stringify(attempts), campaignId, now, aiUsed],
  );
}

/**
 * One statement rests every decided debt: a dialed one `redialAfterMs` from now, a refused one
 * until its own moment (`restUntil`, in the order of `refusedDebtIds`).
 */
export async function restDecidedDebts(
  sql: SqlTx,
  dialedDebtIds: string[],
  refusedDebtIds: string[],
  now: Date,
  redialAfterMs: number,
  restUntil: string[],
): Promise<void> {
  await sql.query(
    `UPDATE debts d SET next_dialable_at = CASE WHEN d.id = ANY ($1::uuid[]) THEN $3::timestamptz + make_interval(secs => $4 / 1000.0)
                                                ELSE r.until END
       FROM (SELECT unnest($1::uuid[]) AS id, NULL::timestamptz AS until
             UNION ALL SELECT * FROM unnest($2::uuid[], $5::timestamptz[])) r
      WHERE d.id = r.id`,
    [dialedDebtIds, refusedDebtIds, now, redialAfterMs, restUntil],
  );
}

export async function restRefusedCallbacks(sql: SqlTx, callbackIds: Array<string | null>, now: Date, cooldownMs: number): Promise<void> {
  await sql.query(`UPDATE callbacks SET retry_at = $2::timestamptz + make_interval(secs => $3 / 1000.0) WHERE id = ANY ($1::uuid[])`, [
    callbackIds,
    now,
    cooldownMs,
  ]);
}

export async function markCallbacksDialed(sql: SqlTx, callbackIds: Array<string | null>): Promise<void> {
  await sql.query(`UPDATE callbacks SET status = 'done' WHERE id = ANY ($1::uuid[]) AND status = 'pending'`, [callbackIds]);
}

/**
 * The write-once fill of call_uuid, committed before any originate is sent: a row this answers is
 * the caller's to send; a row already filled counts as sent (by this try or an earlier one).
 */
export function claimUnsentAttempts(sql: SqlTx, callAttemptIds: string[]): Promise<Array<{ id: string }>> {
  return sql.query<{ id: string }>(
    `UPDATE call_attempts SET call_uuid = id::text WHERE id = ANY ($1::uuid[]) AND corrects_id IS NULL AND call_uuid IS NULL RETURNING id`,
    [callAttemptIds],
  );
}

/** A recorded attempt to place (a human-initiated dial), with what placing it needs of its campaign. */
export async function findRecordedCall(
  sql: SqlTx,
  callAttemptId: string,
): Promise<(PlannedCall & { campaign_id: string; campaign_type: string; amd_enabled: boolean | null }) | null> {
  const [row] = await sql.query<PlannedCall & { campaign_id: string; campaign_type: string; amd_enabled: boolean | null }>(
    `SELECT a.id, a.debt_id, a.to_number, a.from_number, a.call_uuid, a.campaign_id, c.campaign_type, c.amd_enabled
       FROM call_attempts a JOIN campaigns c ON c.id = a.campaign_id
      WHERE a.id = $1 AND a.corrects_id IS NULL`,
    [callAttemptId],
  );
  return row ?? null;
}

/**
 * Calls of the campaign still open `callTtlMs` after they were placed, oldest first, at most 500 a
 * tick. Calls past IN_FLIGHT_HORIZON_MS are left out: the bound keeps the scan on the started_at index.
 */
export function expiredCalls(sql: SqlTx, campaignId: string, now: Date, callTtlMs: number): Promise<Array<{ id: string; call_uuid: string | null }>> {
  return sql.query<{ id: string; call_uuid: string | null }>(
    `SELECT o.id, o.call_uuid FROM call_attempts o
      WHERE o.corrects_id IS NULL AND o.campaign_id = $1
        AND o.started_at <= $2::timestamptz - make_interval(secs => $3 / 1000.0)
        AND o.started_at > $2::timestamptz - make_interval(secs => $4 / 1000.0)
        AND NOT EXISTS (SELECT 1 FROM call_attempts c WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL)
      ORDER BY o.started_at LIMIT 500`,
    [campaignId, now, callTtlMs, IN_FLIGHT_HORIZON_MS],
  );
}

/** The attempt rows an earlier try of this tick committed (their ids are the tick's), sent or not. */
export function findAttempts(sql: SqlTx, callAttemptIds: string[]): Promise<PlannedCall[]> {
  return sql.query<PlannedCall>(`SELECT id, debt_id, to_number, from_number, call_uuid FROM call_attempts WHERE id = ANY ($1::uuid[])`, [callAttemptIds]);
}

/** The campaign's calls since `since`, from the CDR (the first final row of each call is its engine outcome). */
export async function countRunCalls(sql: SqlTx, campaignId: string, since: Date): Promise<RunCounters> {
  const [row] = await sql.query<RunCounters>(
    `SELECT count(*) FILTER (WHERE o.call_uuid IS NOT NULL)::int AS dialed,
            count(f.id)::int AS finished,
            count(*) FILTER (WHERE f.disposition = 'reaped')::int AS reaped,
            count(*) FILTER (WHERE f.id IS NULL)::int AS in_flight,
            count(*) FILTER (WHERE f.disposition = 'answered_human')::int AS connected,
            count(*) FILTER (WHERE f.disposition = 'abandoned')::int AS abandoned
       FROM call_attempts o
       LEFT JOIN LATERAL (SELECT c.id, c.disposition FROM call_attempts c
                           WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL ORDER BY c.inserted_at LIMIT 1) f ON true
      WHERE o.corrects_id IS NULL AND o.campaign_id = $1 AND o.started_at >= $2`,
    [campaignId, since],
  );
  return row!;
}
