import type { SqlTx } from '../../lib/tenancy';
import type { RewindFilter } from './rewind.schemas';

/** Debts in these states are never rewound; closed debts come back as open. */
const NEVER_REWOUND = ['paid', 'settled', 'disputed'];

/**
 * The campaign's debts the filters select. Latest disposition = the final state (latest
 * correction) of the debt's most recent placed attempt; attempts count originals only.
 */
export function matchingDebts(sql: SqlTx, campaignId: string, filter: RewindFilter, now: Date): Promise<{ id: string; phone: string | null }[]> {
  return sql.query<{ id: string; phone: string | null }>(
    `WITH placed AS (
       SELECT a.id, a.debt_id, coalesce(a.started_at, a.inserted_at) AS at,
              coalesce((SELECT c.disposition FROM call_attempts c WHERE c.corrects_id = a.id ORDER BY c.inserted_at DESC, c.id DESC LIMIT 1),
                       a.disposition) AS final
         FROM call_attempts a
        WHERE a.corrects_id IS NULL AND coalesce(a.disposition, '') <> 'not_placed'
          AND a.debt_id IN (SELECT id FROM debts WHERE campaign_id = $1)
     ),
     per_debt AS (
       SELECT d.id,
              (SELECT count(*) FROM placed p WHERE p.debt_id = d.id) AS attempts,
              (SELECT max(p.at) FROM placed p WHERE p.debt_id = d.id) AS last_at,
              (SELECT p.final FROM placed p WHERE p.debt_id = d.id ORDER BY p.at DESC, p.id DESC LIMIT 1) AS latest
         FROM debts d
        WHERE d.campaign_id = $1 AND d.state <> ALL ($2::text[])
     )
     SELECT pd.id, c.phone_e164 AS phone
       FROM per_debt pd
       LEFT JOIN debt_contacts c ON c.debt_id = pd.id AND c.is_primary
      WHERE ($3::text[] IS NULL OR pd.latest = ANY ($3::text[]))
        AND ($4::int IS NULL OR pd.attempts <= $4)
        AND ($5::int IS NULL OR pd.last_at IS NULL OR pd.last_at < $6::timestamptz - make_interval(days => $5))
      ORDER BY pd.id`,
    [campaignId, NEVER_REWOUND, filter.dispositions ?? null, filter.max_attempts ?? null, filter.last_attempt_older_than_days ?? null, now],
  );
}

export async function selectCampaign(sql: SqlTx, campaignId: string): Promise<{ id: string; campaign_type: string; ai_voice: boolean } | null> {
  const [campaign] = await sql.query<{ id: string; campaign_type: string; ai_voice: boolean }>(
    'SELECT id, campaign_type, ai_voice FROM campaigns WHERE id = $1',
    [campaignId],
  );
  return campaign ?? null;
}

/** A requeued_at watermark, dialable now, closed back to open; answers the ids requeued. */
export function requeueDebts(sql: SqlTx, ids: string[], now: Date): Promise<{ id: string }[]> {
  return sql.query<{ id: string }>(
    `UPDATE debts SET requeued_at = $2, next_dialable_at = NULL, state = CASE WHEN state = 'closed' THEN 'open' ELSE state END
        WHERE id = ANY ($1::uuid[]) RETURNING id`,
    [ids, now],
  );
}

/** Cancels the campaign's pending callbacks of the debts; answers the ids cancelled. */
export function cancelPendingCallbacks(sql: SqlTx, campaignId: string, ids: string[]): Promise<{ id: string }[]> {
  return sql.query<{ id: string }>(
    `UPDATE callbacks SET status = 'cancelled' WHERE campaign_id = $1 AND debt_id = ANY ($2::uuid[]) AND status = 'pending' RETURNING id`,
    [campaignId, ids],
  );
}

export async function insertRewindAudit(sql: SqlTx, actor: { type: string; id: string }, campaignId: string, payload: Record<string, unknown>): Promise<void> {
  await sql.query(
    `INSERT INTO audit_log (tenant_id, actor_type, actor_id, action, subject_type, subject_id, payload)
       VALUES (app_tenant_id(), $1, $2, 'campaign.rewound', 'campaign', $3, $4::jsonb)`,
    [actor.type, actor.id, campaignId, JSON.stringify(payload)],
  );
}
