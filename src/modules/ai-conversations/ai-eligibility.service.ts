import type { AppDeps } from '../../deps';
import { notFound } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { engineLanguage, type AgentPolicy } from '../ai-engine/engine.types';
import { contextProblem } from '../ai-engine/rule-engine';
import { attemptProfile } from '../compliance/compliance-preflight.service';
import { disclosureProblem } from '../disclosure/disclosure.rules';
import { WORKABLE_DEBT_STATES } from '../leads/lead.repository';
import { effectiveAiMaxCallSeconds, VOICE_AI_TIERS } from '../tenants/tenant.rules';
import type { Tier } from '../tenants/tenant.schemas';
import { selectCampaignsAi, selectTenantAi, type CampaignAiRow } from './ai-conversation.repository';
import { eligibilityReasons, ratio, SANDBOX_DEFAULT_DEBT } from './ai-conversation.rules';
import type { AiEligibilityView } from './ai-conversation.schemas';

/**
 * Whether the agent's disclosure passes the engine's own start gate (contextProblem): the text an
 * AI call would open with must identify the voice as automated and survive the output guard.
 */
function agentDisclosureValid(row: CampaignAiRow, maxCallSeconds: number): boolean | null {
  if (row.agent_disclosure_text === null) return null;
  return (
    contextProblem({
      language: engineLanguage(row.agent_voice_language),
      agent: { disclosure_text: row.agent_disclosure_text, policy: row.agent_policy as unknown as AgentPolicy, handoff_rules: [] },
      debt: SANDBOX_DEFAULT_DEBT,
      consult_config: {},
      max_call_seconds: maxCallSeconds,
    }) === null
  );
}

export async function aiEligibility(deps: AppDeps, tenantId: string, campaignId: string | undefined, now = new Date()): Promise<AiEligibilityView> {
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const { tenant, campaigns } = await withTenantSql(deps.db, tenantId, async (sql) => ({
    tenant: await selectTenantAi(sql, monthStart),
    campaigns: await selectCampaignsAi(sql, campaignId ?? null, WORKABLE_DEBT_STATES),
  }));
  if (campaignId !== undefined && campaigns.length === 0) throw notFound();
  const tierAllowsAi = VOICE_AI_TIERS.has(tenant.tier as Tier);
  const tenantDisclosureValid = tenant.disclosure_text !== null && disclosureProblem(tenant.disclosure_text) === null;
  const maxCallSeconds = effectiveAiMaxCallSeconds(tenant.ai_max_call_seconds, deps.config.AI_MAX_CALL_SECONDS_DEFAULT);
  return {
    tenant: {
      voice_ai_enabled: tenant.voice_ai_enabled,
      tier_allows_ai: tierAllowsAi,
      paused: tenant.ai_paused_at !== null,
      budget: { limit_usd: tenant.ai_monthly_budget_usd, spent_usd_month_to_date: tenant.spent_usd, exhausted: tenant.exhausted },
    },
    campaigns: campaigns.map((c) => {
      const reasons = eligibilityReasons({
        voiceAiEnabled: tenant.voice_ai_enabled,
        tierAllowsAi,
        paused: tenant.ai_paused_at !== null,
        budgetExhausted: tenant.exhausted,
        agentStatus: c.ai_agent_id === null ? null : c.agent_status,
        tenantDisclosureValid,
        agentDisclosureValid: agentDisclosureValid(c, maxCallSeconds),
        artificialVoice: attemptProfile({ campaign_type: c.campaign_type, ai_voice: c.ai_voice }).artificialVoice,
        consentedLeads: c.consented_leads,
      });
      return {
        campaign_id: c.id,
        name: c.name,
        campaign_type: c.campaign_type,
        ai_agent_id: c.ai_agent_id,
        eligible: reasons.length === 0,
        reasons,
        consent: { consented_leads: c.consented_leads, total_leads: c.total_leads, share: ratio(c.consented_leads, c.total_leads) },
      };
    }),
  };
}
