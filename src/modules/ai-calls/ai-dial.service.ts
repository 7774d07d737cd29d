import type { SqlTx } from '../../lib/tenancy';
import { selectAiGate, selectUsageCost } from './ai-call.repository';
import { AI_MAX_CONCURRENT_CALLS, aiGateRefusal, utcMonth, type AiGateRefusal } from './ai-call.rules';

/**
 * How many AI calls an ai_voice tick may place (inside the tick's tenant transaction): nothing
 * while the add-on is off, the kill switch is on, the campaign's agent is not live or the
 * month-to-date metered cost has reached ai_monthly_budget_usd; otherwise progressive pacing
 * without agents: up to AI_MAX_CONCURRENT_CALLS calls of the campaign in flight, within the
 * tenant's channel and CPS capacity.
 */
export async function aiVoiceLines(
  sql: SqlTx,
  campaignId: string,
  now: Date,
  capacity: number,
  inFlight: number,
): Promise<{ lines: number; refusal: AiGateRefusal | null }> {
  const row = await selectAiGate(sql, campaignId);
  if (!row) return { lines: 0, refusal: 'ai_agent_not_live' };
  const month = utcMonth(now);
  const refusal = aiGateRefusal({
    voiceAiEnabled: row.voice_ai_enabled,
    pausedAt: row.ai_paused_at,
    agentStatus: row.agent_status,
    monthCostUsd: row.ai_monthly_budget_usd === null ? '0' : await selectUsageCost(sql, month.from, month.to),
    budgetUsd: row.ai_monthly_budget_usd,
  });
  if (refusal) return { lines: 0, refusal };
  return { lines: Math.max(0, Math.min(AI_MAX_CONCURRENT_CALLS - inFlight, Math.floor(capacity))), refusal: null };
}
