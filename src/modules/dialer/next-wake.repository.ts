import type { SqlTx } from '../../lib/tenancy';
import { NUMBER_COOLDOWN_MS, WORKABLE_DEBT_STATES } from '../leads/lead.repository';

/**
 * The earliest future moment one of the campaign's leads or callbacks becomes dialable, one
 * statement: a lead's next_dialable_at (its redial rest, a refusal's cooldown or the calling window
 * it waits for), the end of the 30-minute number cooldown that holds a lead already due, and a
 * pending callback's scheduled_at or retry_at (one naming an agent is its own timer's to dial, not the
 * run's). Null when nothing is scheduled (only an import, a
 * rewind or a new callback can bring work, and each of those signals the run).
 */
export async function nextLeadDueAt(sql: SqlTx, campaignId: string, now: Date): Promise<Date | null> {
  const [row] = await sql.query<{ at: Date | null }>(
    `SELECT LEAST(
       (SELECT min(d.next_dialable_at) FROM debts d
         WHERE d.campaign_id = $1 AND d.state = ANY ($2::text[]) AND d.next_dialable_at > $3),
       (SELECT min(held.until) FROM (
          SELECT (SELECT max(a.started_at) FROM call_attempts a
                   WHERE a.tenant_id = d.tenant_id AND a.corrects_id IS NULL AND a.to_number = c.phone_e164
                     AND a.started_at > $3::timestamptz - make_interval(secs => $4 / 1000.0))
                 + make_interval(secs => $4 / 1000.0) AS until
            FROM debts d JOIN debt_contacts c ON c.debt_id = d.id AND c.is_primary
           WHERE d.campaign_id = $1 AND d.state = ANY ($2::text[]) AND (d.next_dialable_at IS NULL OR d.next_dialable_at <= $3)
           LIMIT 1000) held),
       (SELECT min(GREATEST(cb.scheduled_at, COALESCE(cb.retry_at, cb.scheduled_at))) FROM callbacks cb
         WHERE cb.campaign_id = $1 AND cb.status = 'pending' AND cb.agent_id IS NULL AND GREATEST(cb.scheduled_at, COALESCE(cb.retry_at, cb.scheduled_at)) > $3)
     ) AS at`,
    [campaignId, [...WORKABLE_DEBT_STATES], now, NUMBER_COOLDOWN_MS],
  );
  return row?.at ?? null;
}

/** A campaign that waits for a seat while seats are busy (ringing, on a call, in wrap-up) looks again this often. */
export const BUSY_SEAT_RECHECK_MS = 5000;

/**
 * When a seat may become dialable without an event the run hears of: the end of a seat reservation
 * (a human-initiated dial holds an available seat for a moment), or soon when some reachable seat
 * is busy (ringing, on a call, in wrap-up): calls end and wrap-ups expire on their own, and another
 * campaign of the tenant may hold the seats. Null when no seat is checked in at all: only a check-in,
 * a registration or a resume can bring one, and each of those signals the run.
 */
export async function nextSeatFreeAt(sql: SqlTx, now: Date): Promise<Date | null> {
  const [row] = await sql.query<{ at: Date | null }>(
    `SELECT LEAST(
       (SELECT min(a.reserved_until) FROM agents a WHERE a.status = 'active' AND a.presence = 'available' AND a.reserved_until > $1),
       (SELECT $1::timestamptz + make_interval(secs => $2 / 1000.0) WHERE EXISTS (
          SELECT 1 FROM agents a WHERE a.status = 'active' AND a.presence IN ('ringing', 'on_call', 'wrap_up')))
     ) AS at`,
    [now, BUSY_SEAT_RECHECK_MS],
  );
  return row?.at ?? null;
}

/** The tenant's running campaigns of these types: the runs a tenant-wide change (a seat, the AI kill switch) may give work. */
export async function runningCampaignIds(sql: SqlTx, campaignTypes: readonly string[]): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(`SELECT id FROM campaigns WHERE state = 'running' AND campaign_type = ANY ($1::text[])`, [[...campaignTypes]]);
  return rows.map((r) => r.id);
}
