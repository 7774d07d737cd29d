import type { SqlTx } from '../../lib/tenancy';

/** What the compliance profile of an attempt needs of the campaign (attemptProfile). */
export async function findCampaign(sql: SqlTx, campaignId: string): Promise<{ id: string; campaign_type: string; ai_voice: boolean } | null> {
  const [row] = await sql.query<{ id: string; campaign_type: string; ai_voice: boolean }>(
    'SELECT id, campaign_type, ai_voice FROM campaigns WHERE id = $1',
    [campaignId],
  );
  return row ?? null;
}

/**
 * Due callbacks of the campaign, highest priority first: the ones the campaign's tick would claim
 * (claimDueCallbacks), so a callback resting after a refusal, or naming its agent (dialed by its
 * own timer), is not previewed as the campaign's next dial. A preview locks nothing.
 */
export function dueCallbacks(sql: SqlTx, campaignId: string, now: Date, limit: number): Promise<Array<{ id: string; debt_id: string; contact_phone: string }>> {
  return sql.query<{ id: string; debt_id: string; contact_phone: string }>(
    `SELECT id, debt_id, contact_phone FROM callbacks
      WHERE campaign_id = $1 AND status = 'pending' AND scheduled_at <= $2
        AND (retry_at IS NULL OR retry_at <= $2) AND agent_id IS NULL
      ORDER BY priority DESC, scheduled_at, id LIMIT $3`,
    [campaignId, now, limit],
  );
}

export async function findDebt(
  sql: SqlTx,
  debtId: string,
): Promise<{ external_ref: string; consumer_ref: string; state: string; amount_cents: string; currency: string } | null> {
  const [row] = await sql.query<{ external_ref: string; consumer_ref: string; state: string; amount_cents: string; currency: string }>(
    'SELECT external_ref, consumer_ref, state, amount_cents, currency FROM debts WHERE id = $1',
    [debtId],
  );
  return row ?? null;
}
