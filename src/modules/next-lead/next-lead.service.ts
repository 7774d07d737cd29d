import type { AppDeps } from '../../deps';
import { notFound } from '../../lib/errors';
import { maskPhone } from '../../lib/phone';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { attemptProfile } from '../compliance/compliance-preflight.service';
import { evaluateInTx } from '../compliance/compliance.service';
import { selectDialableLeads } from '../leads/lead.repository';
import { dueCallbacks, findCampaign, findDebt } from './next-lead.repository';

/** How many candidates a preview looks through before it answers that nothing is dialable now. */
export const NEXT_LEAD_SCAN = 200;

interface Candidate {
  source: 'callback' | 'lead';
  debtId: string;
  phone: string;
  callbackId: string | null;
}

async function describe(sql: SqlTx, candidate: Candidate, zones: string[]) {
  const debt = await findDebt(sql, candidate.debtId);
  return {
    source: candidate.source,
    callback_id: candidate.callbackId,
    debt_id: candidate.debtId,
    external_ref: debt!.external_ref,
    consumer_ref: debt!.consumer_ref,
    debt_state: debt!.state,
    amount_cents: Number(debt!.amount_cents),
    currency: debt!.currency,
    phone_masked: maskPhone(candidate.phone)!,
    zones,
  };
}

/**
 * The next lead the campaign would dial now, without dialing or recording anything: due callbacks
 * of the campaign first (priority, then time), then dialable leads in dialing order; the first
 * candidate the compliance engine would allow. Refused candidates are counted by gate.
 */
export async function nextLead(deps: AppDeps, tenantId: string, campaignId: string, now = new Date()) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const campaign = await findCampaign(sql, campaignId);
    if (!campaign) throw notFound();
    const callbacks = await dueCallbacks(sql, campaignId, now, NEXT_LEAD_SCAN);
    const leads = await selectDialableLeads(sql, campaignId, now, NEXT_LEAD_SCAN);
    const candidates: Candidate[] = [
      ...callbacks.map((c) => ({ source: 'callback' as const, debtId: c.debt_id, phone: c.contact_phone, callbackId: c.id })),
      ...leads.map((l) => ({ source: 'lead' as const, debtId: l.debtId, phone: l.phone, callbackId: null })),
    ].slice(0, NEXT_LEAD_SCAN);
    const profile = attemptProfile(campaign);
    const decisions = await evaluateInTx(
      sql,
      candidates.map((c) => ({ debtId: c.debtId, phone: c.phone, campaignId, ...profile })),
      { actor: { type: 'system', id: null }, dryRun: true, now },
    );
    const skipped: Record<string, number> = {};
    let chosen: { candidate: Candidate; decision: (typeof decisions)[number] } | null = null;
    for (const [i, decision] of decisions.entries()) {
      if (decision.allowed) {
        chosen = { candidate: candidates[i]!, decision };
        break;
      }
      skipped[decision.gate!] = (skipped[decision.gate!] ?? 0) + 1;
    }
    const lead = chosen === null ? null : await describe(sql, chosen.candidate, chosen.decision.zones);
    return {
      campaign_id: campaignId,
      evaluated_at: now.toISOString(),
      lead,
      candidates_checked: chosen ? decisions.indexOf(chosen.decision) + 1 : decisions.length,
      skipped_by_gate: skipped,
    };
  });
}
