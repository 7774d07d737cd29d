import type { AppDeps } from '../../deps';
import { notFound, unprocessable } from '../../lib/errors';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { attemptProfile } from '../compliance/compliance-preflight.service';
import { evaluateInTx } from '../compliance/compliance.service';
import { wakeCampaignRuns } from '../dialer/campaign-wake';
import { cancelPendingCallbacks, insertRewindAudit, matchingDebts, requeueDebts, selectCampaign } from './rewind.repository';
import type { RewindFilter } from './rewind.schemas';

const PREVIEW_IDS = 1000;

function checkFilter(filter: RewindFilter): void {
  if (filter.amd_verdicts !== undefined) throw unprocessable('amd_verdicts is reserved and not supported yet');
}

async function campaignOf(sql: SqlTx, campaignId: string) {
  const campaign = await selectCampaign(sql, campaignId);
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
    const requeued = await requeueDebts(sql, ids, now);
    const cancelled = body.keep_scheduled_callbacks ? [] : await cancelPendingCallbacks(sql, campaignId, ids);
    const payload = {
      filters: { dispositions: body.dispositions ?? null, max_attempts: body.max_attempts ?? null, last_attempt_older_than_days: body.last_attempt_older_than_days ?? null },
      keep_scheduled_callbacks: body.keep_scheduled_callbacks,
      requeued: requeued.length,
      callbacks_cancelled: cancelled.length,
    };
    await insertRewindAudit(sql, actor, campaignId, payload);
    return { requeued: requeued.length, callbacks_cancelled: cancelled.length };
  });
  // Requeued leads are dialable now: the campaign's run, idle for want of leads, ticks at once.
  if (result.requeued > 0) await wakeCampaignRuns(deps, tenantId, [campaignId.toLowerCase()]);
  return result;
}
