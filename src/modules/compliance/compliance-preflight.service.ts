import type { AppDeps } from '../../deps';
import { notFound } from '../../lib/errors';
import { maskPhone } from '../../lib/phone';
import { withTenantSql } from '../../lib/tenancy';
import { selectDialableLeads } from '../leads/lead.repository';
import { selectCampaignProfile } from './compliance-preflight.repository';
import { ARTIFICIAL_VOICE_TYPES } from './compliance.rules';
import { evaluateInTx } from './compliance.service';
import type { Channel, DecisionRequest } from './compliance.types';

/** How a campaign's attempts present to the engine: channel, who initiates, whose voice. */
export function attemptProfile(campaign: { campaign_type: string; ai_voice: boolean }): Pick<DecisionRequest, 'channel' | 'initiation' | 'artificialVoice'> {
  const channel: Channel = campaign.campaign_type === 'sms_blast' ? 'sms' : 'voice';
  const human = campaign.campaign_type === 'preview' || campaign.campaign_type === 'manual';
  return {
    channel,
    initiation: human ? 'human' : 'automated',
    artificialVoice: channel === 'voice' && (campaign.ai_voice || ARTIFICIAL_VOICE_TYPES.has(campaign.campaign_type)),
  };
}

/**
 * A dry run of the engine over the campaign's dialable leads, in dialing order: what would be
 * refused now, by gate, and a sample. Nothing is recorded (no decision ids, no refusal rows).
 */
export async function compliancePreflight(deps: AppDeps, tenantId: string, campaignId: string, opts: { limit: number; sample: number; at?: string }) {
  const now = opts.at ? new Date(opts.at) : new Date();
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const campaign = await selectCampaignProfile(sql, campaignId);
    if (!campaign) throw notFound();
    const leads = await selectDialableLeads(sql, campaignId, now, opts.limit + 1);
    const evaluated = leads.slice(0, opts.limit);
    const profile = attemptProfile(campaign);
    const decisions = await evaluateInTx(
      sql,
      evaluated.map((lead) => ({ debtId: lead.debtId, phone: lead.phone, campaignId, ...profile })),
      { actor: { type: 'system', id: null }, dryRun: true, now },
    );
    const byGate: Record<string, number> = {};
    for (const d of decisions) if (d.gate) byGate[d.gate] = (byGate[d.gate] ?? 0) + 1;
    const blocked = decisions.filter((d) => !d.allowed).length;
    return {
      campaign_id: campaignId,
      evaluated_at: now.toISOString(),
      channel: profile.channel,
      leads_evaluated: evaluated.length,
      truncated: leads.length > opts.limit,
      dialable: evaluated.length - blocked,
      blocked,
      by_gate: byGate,
      sample: evaluated.slice(0, opts.sample).map((lead, i) => ({
        debt_id: lead.debtId,
        external_ref: lead.externalRef,
        phone_masked: maskPhone(lead.phone)!,
        allowed: decisions[i]!.allowed,
        gate: decisions[i]!.gate,
        reason: decisions[i]!.reason,
      })),
    };
  });
}
