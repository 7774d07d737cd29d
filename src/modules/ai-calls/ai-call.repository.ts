import type { SqlTx } from '../../lib/tenancy';

export interface AiCallFacts {
  campaign_id: string | null;
  debt_id: string;
  to_number: string;
  consult_config: Record<string, unknown>;
  ai_agent_id: string | null;
  agent_status: string | null;
  policy_version: number | null;
  disclosure_text: string | null;
  policy: Record<string, unknown> | null;
  handoff_rules: unknown[] | null;
  voice: { language?: string } | null;
  amount_cents: string;
  currency: string;
  consumer_ref: string;
  creditor_name: string;
  voice_ai_enabled: boolean;
  ai_paused_at: Date | null;
  ai_max_call_seconds: number | null;
  /** The verification facts consult_config factors are answered against (CryptoBox ciphertext where encrypted). */
  account_number: string | null;
  postal_code: string | null;
  verify_dob_ciphertext: string | null;
  verify_ssn_last4_ciphertext: string | null;
  verify_pin_ciphertext: string | null;
}

/**
 * Everything the AI needs about one attempt: its campaign, the campaign's agent, the debt, the
 * tenant's switches, and the verification facts (the ZIP is the called number's contact's).
 */
export async function selectAiCallFacts(sql: SqlTx, callAttemptId: string): Promise<AiCallFacts | null> {
  const [row] = await sql.query<AiCallFacts>(
    `SELECT a.campaign_id, a.debt_id, a.to_number, coalesce(c.consult_config, '{}'::jsonb) AS consult_config, c.ai_agent_id,
            g.status AS agent_status, g.policy_version, g.disclosure_text, g.policy, g.handoff_rules, g.voice,
            d.amount_cents::text AS amount_cents, d.currency, d.consumer_ref, t.name AS creditor_name,
            t.voice_ai_enabled, t.ai_paused_at, t.ai_max_call_seconds,
            d.account_number, k.postal_code, d.verify_dob_ciphertext, d.verify_ssn_last4_ciphertext, d.verify_pin_ciphertext
       FROM call_attempts a
       JOIN debts d ON d.id = a.debt_id
       JOIN tenants t ON t.id = a.tenant_id
       LEFT JOIN debt_contacts k ON k.debt_id = a.debt_id AND k.phone_e164 = a.to_number
       LEFT JOIN campaigns c ON c.id = a.campaign_id
       LEFT JOIN ai_agents g ON g.id = c.ai_agent_id
      WHERE a.id = $1 AND a.corrects_id IS NULL`,
    [callAttemptId],
  );
  return row ?? null;
}

export interface CallDebt {
  to_number: string;
  debt_id: string;
  campaign_id: string | null;
  currency: string;
}

/** The number an attempt dialed and its debt. */
export async function selectCallDebt(sql: SqlTx, callAttemptId: string): Promise<CallDebt | null> {
  const [row] = await sql.query<CallDebt>(
    'SELECT a.to_number, a.debt_id, a.campaign_id, d.currency FROM call_attempts a JOIN debts d ON d.id = a.debt_id WHERE a.id = $1',
    [callAttemptId],
  );
  return row ?? null;
}

export interface ConversationRow {
  id: string;
  status: string;
  outcome: string | null;
  engine_state: StoredEngineState | null;
  transcript: TranscriptEntry[];
}

export interface TranscriptEntry {
  speaker: 'agent' | 'consumer';
  text: string;
  at_seconds: number;
  /** A consumer line the product's recognizer heard: its confidence (0..1) and offsets in the call's audio stream. */
  confidence?: number;
  audio_start_ms?: number;
  audio_end_ms?: number;
  /** Below AI_ASR_MIN_CONFIDENCE: asked again, never given to the engine. */
  low_confidence?: boolean;
}

/** The engine's state with the last turn it produced, so a retried turn answers the same without running twice. */
export interface StoredEngineState {
  turn: number;
  state: unknown;
  last: { say_count: number; outcome: string | null; handoff: boolean; ended: boolean };
  /** Recognitions in a row asked again for low confidence (reset by one the engine took). */
  reprompts?: number;
}

/** The call's conversation; a second insert for the same call uuid (a retried activity) finds the first. */
export async function insertCallConversation(
  sql: SqlTx,
  c: { aiAgentId: string; policyVersion: number; callAttemptId: string; callUuid: string; campaignId: string | null; debtId: string; startedAt: string },
): Promise<{ row: ConversationRow; created: boolean }> {
  const [created] = await sql.query<ConversationRow>(
    `INSERT INTO ai_conversations (tenant_id, ai_agent_id, policy_version, kind, call_attempt_id, call_uuid, campaign_id, debt_id, started_at)
     VALUES (app_tenant_id(), $1, $2, 'call', $3, $4, $5, $6, $7)
     ON CONFLICT (tenant_id, call_uuid) WHERE call_uuid IS NOT NULL DO NOTHING
     RETURNING id, status, outcome, engine_state, transcript`,
    [c.aiAgentId, c.policyVersion, c.callAttemptId, c.callUuid, c.campaignId, c.debtId, c.startedAt],
  );
  if (created) return { row: created, created: true };
  const existing = await selectConversationByCall(sql, c.callUuid);
  return { row: existing!, created: false };
}

export async function selectConversationByCall(sql: SqlTx, callUuid: string, lock = false): Promise<ConversationRow | null> {
  const [row] = await sql.query<ConversationRow>(
    `SELECT id, status, outcome, engine_state, transcript FROM ai_conversations WHERE call_uuid = $1${lock ? ' FOR UPDATE' : ''}`,
    [callUuid],
  );
  return row ?? null;
}

/** Appends one turn's transcript lines and events and stores the engine state, in one statement. */
export async function appendTurn(
  sql: SqlTx,
  id: string,
  t: { transcript: TranscriptEntry[]; events: unknown[]; engineState: StoredEngineState; outcome: string | null; end: boolean },
): Promise<void> {
  await sql.query(
    `UPDATE ai_conversations
        SET transcript = transcript || $2::jsonb, events = events || $3::jsonb, engine_state = $4::jsonb,
            outcome = coalesce($5, outcome),
            status = CASE WHEN $6 AND status = 'active' THEN 'ended' ELSE status END,
            ended_at = CASE WHEN $6 THEN coalesce(ended_at, now()) ELSE ended_at END
      WHERE id = $1`,
    [id, JSON.stringify(t.transcript), JSON.stringify(t.events), JSON.stringify(t.engineState), t.outcome, t.end],
  );
}

/** Ends a conversation still open (hang-up, ceiling, kill switch); an ended or taken-over one keeps its outcome. */
export async function closeConversation(sql: SqlTx, callUuid: string, outcome: string, events: unknown[], transcript: TranscriptEntry[] = []): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE ai_conversations
        SET status = 'ended', outcome = coalesce(outcome, $2), ended_at = coalesce(ended_at, now()),
            events = events || $3::jsonb, transcript = transcript || $4::jsonb
      WHERE call_uuid = $1 AND status = 'active'
      RETURNING id`,
    [callUuid, outcome, JSON.stringify(events), JSON.stringify(transcript)],
  );
  return rows.length > 0;
}

/** Sets the end time of a conversation that ended without it (a taken-over one, at hang-up). */
export async function stampConversationEnd(sql: SqlTx, callUuid: string): Promise<void> {
  await sql.query(`UPDATE ai_conversations SET ended_at = coalesce(ended_at, now()) WHERE call_uuid = $1`, [callUuid]);
}

/** Month-to-date metered cost of the tenant (decimal string) from the usage rows answered in [from, to). */
export async function selectUsageCost(sql: SqlTx, from: Date, to: Date): Promise<string> {
  const [row] = await sql.query<{ cost: string }>(
    `SELECT coalesce(sum(cost_usd), 0)::text AS cost FROM ai_usage WHERE answered_at >= $1 AND answered_at < $2`,
    [from, to],
  );
  return row?.cost ?? '0';
}

/**
 * The one usage row of a call. Cost in SQL numeric: started minutes × the rate, no float on the way.
 * A second metering of the same call uuid (a retry, a replay) inserts nothing.
 */
export async function insertUsage(
  sql: SqlTx,
  u: {
    callUuid: string;
    callAttemptId: string;
    campaignId: string | null;
    aiAgentId: string | null;
    answeredAt: Date;
    endedAt: Date;
    billableSeconds: number;
    billableMinutes: number;
    minuteRateUsd: string;
  },
): Promise<boolean> {
  const rows = await sql.query(
    `INSERT INTO ai_usage (tenant_id, call_uuid, call_attempt_id, campaign_id, ai_agent_id, answered_at, ended_at, billable_seconds,
       minute_rate_usd, cost_usd)
     VALUES (app_tenant_id(), $1, $2, $3, $4, $5, $6, $7, $8::numeric(10, 4), $9::int * $8::numeric(10, 4))
     ON CONFLICT (tenant_id, call_uuid) DO NOTHING
     RETURNING id`,
    [u.callUuid, u.callAttemptId, u.campaignId, u.aiAgentId, u.answeredAt, u.endedAt, u.billableSeconds, u.minuteRateUsd, u.billableMinutes],
  );
  return rows.length > 0;
}

/**
 * Seconds of AI talk the tenant's monthly budget still pays for at `rate` USD a minute, from the
 * month's metered calls (null: no budget). Calls still in progress are not metered yet, so
 * concurrent calls may together overrun the budget by what they talk at once.
 */
export async function selectAiBudgetSeconds(sql: SqlTx, rate: number, from: Date, to: Date): Promise<number | null> {
  const [row] = await sql.query<{ seconds: number | null }>(
    `SELECT CASE WHEN t.ai_monthly_budget_usd IS NULL THEN NULL
                 WHEN $1::numeric <= 0 THEN NULL
                 ELSE greatest(0, floor((t.ai_monthly_budget_usd - u.cost) * 60 / $1::numeric))::int END AS seconds
       FROM tenants t,
            (SELECT coalesce(sum(cost_usd), 0) AS cost FROM ai_usage WHERE answered_at >= $2 AND answered_at < $3) u
      WHERE t.id = current_setting('app.tenant_id')::uuid`,
    [String(rate), from, to],
  );
  return row?.seconds ?? null;
}
