import type { SqlTx } from '../../lib/tenancy';

export interface TranscriptEntry {
  speaker: 'agent' | 'consumer';
  text: string;
  at_seconds: number;
}

export type StoredEvent = { type: string; at_seconds: number } & Record<string, unknown>;

export interface AiConversationRow {
  id: string;
  kind: 'call' | 'sandbox';
  ai_agent_id: string;
  policy_version: number;
  status: 'active' | 'ended' | 'taken_over';
  outcome: string | null;
  call_uuid: string | null;
  campaign_id: string | null;
  debt_id: string | null;
  transcript: TranscriptEntry[];
  events: StoredEvent[];
  taken_over_by: string | null;
  taken_over_at: Date | null;
  started_at: Date;
  ended_at: Date | null;
}

export type AiConversationSummaryRow = Omit<AiConversationRow, 'transcript' | 'events' | 'taken_over_by'> & { turns: number };

const SUMMARY = `id, kind, ai_agent_id, policy_version, status, outcome, call_uuid, campaign_id, debt_id,
  jsonb_array_length(transcript) AS turns, taken_over_at, started_at, ended_at`;
const DETAIL = `id, kind, ai_agent_id, policy_version, status, outcome, call_uuid, campaign_id, debt_id, transcript, events,
  taken_over_by, taken_over_at, started_at, ended_at`;

export interface NewSandboxConversation {
  aiAgentId: string;
  policyVersion: number;
  outcome: string | null;
  transcript: TranscriptEntry[];
  events: StoredEvent[];
}

/** A sandbox run is written already ended: it has no call, campaign, debt or engine state. */
export async function insertSandboxConversation(sql: SqlTx, tenantId: string, c: NewSandboxConversation): Promise<AiConversationRow> {
  const [row] = await sql.query<AiConversationRow>(
    `INSERT INTO ai_conversations (tenant_id, ai_agent_id, policy_version, kind, status, outcome, transcript, events, started_at, ended_at)
     VALUES ($1::uuid, $2::uuid, $3, 'sandbox', 'ended', $4, $5::jsonb, $6::jsonb, now(), now())
     RETURNING ${DETAIL}`,
    [tenantId, c.aiAgentId, c.policyVersion, c.outcome, JSON.stringify(c.transcript), JSON.stringify(c.events)],
  );
  return row!;
}

export async function selectConversation(sql: SqlTx, id: string): Promise<AiConversationRow | null> {
  const [row] = await sql.query<AiConversationRow>(`SELECT ${DETAIL} FROM ai_conversations WHERE id = $1::uuid`, [id]);
  return row ?? null;
}

export interface ConversationFilter {
  aiAgentId?: string;
  campaignId?: string;
  kind?: string;
  status?: string;
  outcome?: string;
  from?: Date;
  to?: Date;
  after?: { at: Date; id: string };
  limit: number;
}

/** Newest first on (started_at, id), the page index; fetches limit + 1 rows. */
export async function selectConversationPage(sql: SqlTx, f: ConversationFilter): Promise<AiConversationSummaryRow[]> {
  return sql.query<AiConversationSummaryRow>(
    `SELECT ${SUMMARY} FROM ai_conversations
      WHERE ($1::uuid IS NULL OR ai_agent_id = $1::uuid)
        AND ($2::uuid IS NULL OR campaign_id = $2::uuid)
        AND ($3::text IS NULL OR kind = $3)
        AND ($4::text IS NULL OR status = $4)
        AND ($5::text IS NULL OR outcome = $5)
        AND ($6::timestamptz IS NULL OR started_at >= $6)
        AND ($7::timestamptz IS NULL OR started_at < $7)
        AND ($8::timestamptz IS NULL OR (started_at, id) < ($8::timestamptz, $9::uuid))
      ORDER BY started_at DESC, id DESC
      LIMIT $10`,
    [
      f.aiAgentId ?? null,
      f.campaignId ?? null,
      f.kind ?? null,
      f.status ?? null,
      f.outcome ?? null,
      f.from ?? null,
      f.to ?? null,
      f.after?.at ?? null,
      f.after?.id ?? null,
      f.limit + 1,
    ],
  );
}

export interface AiStatusRow {
  ai_paused_at: Date | null;
  ai_paused_reason: string | null;
  voice_ai_enabled: boolean;
  live_agents: number;
  active_conversations: number;
}

export async function selectAiStatus(sql: SqlTx): Promise<AiStatusRow> {
  const [row] = await sql.query<AiStatusRow>(
    `SELECT t.ai_paused_at, t.ai_paused_reason, t.voice_ai_enabled,
            (SELECT count(*)::int FROM ai_agents WHERE status = 'live') AS live_agents,
            (SELECT count(*)::int FROM ai_conversations WHERE status = 'active' AND kind = 'call') AS active_conversations
       FROM tenants t WHERE t.id = app_tenant_id()`,
  );
  return row!;
}

export interface AiMetricsRow {
  conversations: number;
  sandbox_runs: number;
  outcomes: Record<string, number>;
  handoffs: number;
  promises: number;
  answered_ai_calls: number;
  billable_seconds: number;
  estimated_cost_usd: string;
}

/** The figures of one UTC day [from, to) in one statement: conversations by started_at, usage by answered_at. */
export async function selectAiMetrics(sql: SqlTx, from: Date, to: Date): Promise<AiMetricsRow> {
  const [row] = await sql.query<AiMetricsRow>(
    `WITH day AS (
       SELECT kind, outcome, taken_over_at FROM ai_conversations WHERE started_at >= $1 AND started_at < $2
     ),
     calls AS (SELECT * FROM day WHERE kind = 'call')
     SELECT (SELECT count(*)::int FROM calls) AS conversations,
            (SELECT count(*)::int FROM day WHERE kind = 'sandbox') AS sandbox_runs,
            coalesce((SELECT jsonb_object_agg(outcome, n) FROM (SELECT outcome, count(*)::int AS n FROM calls WHERE outcome IS NOT NULL GROUP BY outcome) o),
                     '{}'::jsonb) AS outcomes,
            (SELECT count(*)::int FROM calls WHERE outcome = 'handoff' OR taken_over_at IS NOT NULL) AS handoffs,
            (SELECT count(*)::int FROM calls WHERE outcome = 'promise_to_pay') AS promises,
            u.answered_ai_calls, u.billable_seconds, u.estimated_cost_usd
       FROM (SELECT count(*)::int AS answered_ai_calls,
                    coalesce(sum(billable_seconds), 0)::int AS billable_seconds,
                    to_char(coalesce(sum(cost_usd), 0), 'FM999999999990.0000') AS estimated_cost_usd
               FROM ai_usage WHERE answered_at >= $1 AND answered_at < $2) u`,
    [from, to],
  );
  return row!;
}

export interface TenantAiRow {
  tier: string;
  voice_ai_enabled: boolean;
  ai_paused_at: Date | null;
  ai_monthly_budget_usd: string | null;
  ai_max_call_seconds: number | null;
  spent_usd: string;
  exhausted: boolean;
  disclosure_text: string | null;
}

/** The tenant's AI gates, its month-to-date metered cost ([monthStart, now]) and its artificial-voice disclosure. */
export async function selectTenantAi(sql: SqlTx, monthStart: Date): Promise<TenantAiRow> {
  const [row] = await sql.query<TenantAiRow>(
    `SELECT t.tier, t.voice_ai_enabled, t.ai_paused_at, t.ai_max_call_seconds,
            to_char(t.ai_monthly_budget_usd, 'FM999999999990.00') AS ai_monthly_budget_usd,
            to_char(s.spent, 'FM999999999990.0000') AS spent_usd,
            (t.ai_monthly_budget_usd IS NOT NULL AND s.spent >= t.ai_monthly_budget_usd) AS exhausted,
            (SELECT d.text FROM artificial_voice_disclosures d) AS disclosure_text
       FROM tenants t,
            LATERAL (SELECT coalesce(sum(cost_usd), 0) AS spent FROM ai_usage WHERE answered_at >= $1) s
      WHERE t.id = app_tenant_id()`,
    [monthStart],
  );
  return row!;
}

export interface CampaignAiRow {
  id: string;
  name: string;
  campaign_type: string;
  ai_voice: boolean;
  ai_agent_id: string | null;
  agent_status: string | null;
  agent_disclosure_text: string | null;
  agent_policy: Record<string, unknown> | null;
  agent_voice_language: string | null;
  total_leads: number;
  consented_leads: number;
}

/**
 * AI-voice campaigns (or the one asked for) with their agent and lead consent counts. A lead is a
 * workable debt of the campaign with a primary number, as the dial loop selects them; it has a
 * consent path when that number holds an unrevoked voice consent for that debt.
 */
export async function selectCampaignsAi(sql: SqlTx, campaignId: string | null, workableStates: readonly string[]): Promise<CampaignAiRow[]> {
  return sql.query<CampaignAiRow>(
    `SELECT c.id, c.name, c.campaign_type, c.ai_voice, c.ai_agent_id,
            a.status AS agent_status, a.disclosure_text AS agent_disclosure_text, a.policy AS agent_policy,
            a.voice->>'language' AS agent_voice_language,
            coalesce(l.total, 0) AS total_leads, coalesce(l.consented, 0) AS consented_leads
       FROM campaigns c
       LEFT JOIN ai_agents a ON a.id = c.ai_agent_id
       LEFT JOIN LATERAL (
         SELECT count(*)::int AS total,
                count(*) FILTER (WHERE EXISTS (
                  SELECT 1 FROM consents k
                   WHERE k.debt_id = d.id AND k.phone_e164 = dc.phone_e164 AND k.channel = 'voice' AND k.revoked_at IS NULL))::int AS consented
           FROM debts d JOIN debt_contacts dc ON dc.debt_id = d.id AND dc.is_primary
          WHERE d.campaign_id = c.id AND d.state = ANY ($2::text[])
       ) l ON true
      WHERE CASE WHEN $1::uuid IS NULL THEN c.campaign_type = 'ai_voice' OR c.ai_voice ELSE c.id = $1::uuid END
      ORDER BY c.created_at, c.id`,
    [campaignId, [...workableStates]],
  );
}
