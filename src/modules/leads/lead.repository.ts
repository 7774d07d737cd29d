import type { SqlTx } from '../../lib/tenancy';

export interface Lead {
  debtId: string;
  externalRef: string;
  consumerRef: string;
  phone: string;
  nextDialableAt: Date | null;
}

/** Debt states a campaign works; promise_to_pay waits for the promise, the rest are finished. */
export const WORKABLE_DEBT_STATES = ['open', 'in_collection'] as const;

/**
 * A number just called is not called again for this long, whichever debt it belongs to: two
 * debts of one household must not ring the same phone minutes apart.
 */
export const NUMBER_COOLDOWN_MS = 30 * 60 * 1000;

interface LeadQuery {
  /** Lock the debts returned (`FOR UPDATE SKIP LOCKED`): the dial loop and manual dials claim, previews only look. */
  lock: boolean;
  /** Debts already taken this tick (by callbacks). */
  excludeDebtIds?: string[];
}

async function dialableLeads(sql: SqlTx, campaignId: string, now: Date, limit: number, q: LeadQuery): Promise<Lead[]> {
  if (limit <= 0) return [];
  const rows = await sql.query<{ debt_id: string; external_ref: string; consumer_ref: string; phone: string; next_dialable_at: Date | null }>(
    `SELECT d.id AS debt_id, d.external_ref, d.consumer_ref, c.phone_e164 AS phone, d.next_dialable_at
       FROM debts d
       JOIN debt_contacts c ON c.debt_id = d.id AND c.is_primary
      WHERE d.campaign_id = $1
        AND d.state = ANY ($2::text[])
        AND (d.next_dialable_at IS NULL OR d.next_dialable_at <= $3)
        AND NOT (d.id = ANY ($5::uuid[]))
        AND NOT EXISTS (SELECT 1 FROM call_attempts a
                         WHERE a.tenant_id = d.tenant_id AND a.corrects_id IS NULL AND a.to_number = c.phone_e164
                           AND a.started_at > $3::timestamptz - make_interval(secs => $6 / 1000.0))
      ORDER BY d.next_dialable_at NULLS FIRST, d.created_at, d.id
      LIMIT $4
      ${q.lock ? 'FOR UPDATE OF d SKIP LOCKED' : ''}`,
    [campaignId, [...WORKABLE_DEBT_STATES], now, limit * 2, q.excludeDebtIds ?? [], NUMBER_COOLDOWN_MS],
  );
  const seen = new Set<string>();
  const leads: Lead[] = [];
  for (const r of rows) {
    if (seen.has(r.phone) || leads.length >= limit) continue;
    seen.add(r.phone);
    leads.push({ debtId: r.debt_id, externalRef: r.external_ref, consumerRef: r.consumer_ref, phone: r.phone, nextDialableAt: r.next_dialable_at });
  }
  return leads;
}

/**
 * The campaign's dialable leads, in dialing order: workable debts whose next_dialable_at has come
 * (null = now; a rewind sets it null), each with its primary contact, skipping numbers dialed
 * within NUMBER_COOLDOWN_MS and a second debt on a number already listed. Compliance is not judged
 * here; every lead still goes through the engine before anything is placed.
 */
export function selectDialableLeads(sql: SqlTx, campaignId: string, now: Date, limit: number): Promise<Lead[]> {
  return dialableLeads(sql, campaignId, now, limit, { lock: false });
}

/**
 * The dial loop's form: the same leads, locked (`FOR UPDATE SKIP LOCKED`, so two runs or a manual
 * dial never take the same debt), without `excludeDebtIds` (taken by callbacks this tick).
 */
export function claimDialableLeads(sql: SqlTx, campaignId: string, now: Date, limit: number, excludeDebtIds: string[]): Promise<Lead[]> {
  return dialableLeads(sql, campaignId, now, limit, { lock: true, excludeDebtIds });
}
