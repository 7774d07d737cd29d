import type { AppDeps } from '../../deps';
import { notFound, unprocessable } from '../../lib/errors';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { attemptProfile } from '../compliance/compliance-preflight.service';
import { evaluateInTx } from '../compliance/compliance.service';
import { wakeCampaignRuns } from '../dialer/campaign-wake';
import type { RewindFilter } from './rewind.schemas';

const PREVIEW_IDS = 1000;
/** Debts in these states are never rewound; closed debts come back as open. */
const NEVER_REWOUND = ['paid', 'settled', 'disputed'];

function checkFilter(filter: RewindFilter): void {
  if (filter.amd_verdicts !== undefined) throw unprocessable('amd_verdicts is reserved and not supported yet');
}

/**
 * The campaign's debts the filters select. Latest disposition = the final state (latest
 * correction) of the debt's most recent placed attempt; attempts count originals only.
 */
async function matchingDebts(sql: SqlTx, campaignId: string, filter: RewindFilter, now: Date) {
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

async function campaignOf(sql: SqlTx, campaignId: string) {
  const [campaign] = await sql.query<{ id: string; campaign_type: string; ai_voice: boolean }>(
    'SELECT id, campaign_type, ai_voice FROM campaigns WHERE id = $1',
    [campaignId],
  );
  if (!campaign) throw notFound();
  return campaign;
}

export async function rewindPreview(deps: AppDeps, tenantId: string, campaignId: string, filter: RewindFilter, now = new Date()) {
  checkFilter(filter);
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const campaign = await campaignOf(sql, campaignId);
    const debts = await matchingDebts(sql, campaignId, filter, now);
    const withPhone = debts.filter((d) => d.phone !== null);
    const decisions = await evaluateInTx(
      sql,
      withPhone.map((d) => ({ debtId: d.id, phone: d.phone!, campaignId, ...attemptProfile(campaign) })),
      { actor: { type: 'system', id: null }, dryRun: true, now },
    );
    return {
      matching: debts.length,
      excluded_by_compliance: decisions.filter((d) => !d.allowed).length + (debts.length - withPhone.length),
      debt_ids: debts.slice(0, PREVIEW_IDS).map((d) => d.id),
    };
  });
}

/**
 * Requeues the matching debts: a requeued_at watermark, dialable now, closed back to open; the CDR
 * is untouched. Optionally cancels the campaign's pending callbacks of those debts. One audit entry.
 */
export async function rewind(
  deps: AppDeps,
  tenantId: string,
  campaignId: string,
  actor: { type: string; id: string },
  body: RewindFilter & { keep_scheduled_callbacks: boolean },
  now = new Date(),
) {
  checkFilter(body);
  const result = await withTenantSql(deps.db, tenantId, async (sql) => {
    await campaignOf(sql, campaignId);
    const ids = (await matchingDebts(sql, campaignId, body, now)).map((d) => d.id);
    const requeued = await sql.query(
      `UPDATE debts SET requeued_at = $2, next_dialable_at = NULL, state = CASE WHEN state = 'closed' THEN 'open' ELSE state END
        WHERE id = ANY ($1::uuid[]) RETURNING id`,
      [ids, now],
    );
    const cancelled = body.keep_scheduled_callbacks
      ? []
      : await sql.query(
          `UPDATE callbacks SET status = 'cancelled' WHERE campaign_id = $1 AND debt_id = ANY ($2::uuid[]) AND status = 'pending' RETURNING id`,
          [campaignId, ids],
        );
    const payload = {
      filters: { dispositions: body.dispositions ?? null, max_attempts: body.max_attempts ?? null, last_attempt_older_than_days: body.last_attempt_older_than_days ?? null },
      keep_scheduled_callbacks: body.keep_scheduled_callbacks,
      requeued: requeued.length,
      callbacks_cancelled: cancelled.length,
    };
    await sql.query(
      `INSERT INTO audit_log (tenant_id, actor_type, actor_id, action, subject_type, subject_id, payload)
       VALUES (app_tenant_id(), $1, $2, 'campaign.rewound', 'campaign', $3, $4::jsonb)`,
      [actor.type, actor.id, campaignId, JSON.stringify(payload)],
    );
    return { requeued: requeued.length, callbacks_cancelled: cancelled.length };
  });
  // Requeued leads are dialable now: the campaign's run, idle for want of leads, ticks at once.
  if (result.requeued > 0) await wakeCampaignRuns(deps, tenantId, [campaignId.toLowerCase()]);
  return result;
}
