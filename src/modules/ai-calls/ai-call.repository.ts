import type { Database } from '../../lib/db';
import type { SqlTx } from '../../lib/tenancy';
import { CONVERSATION_COLUMNS, type ConversationViewRow } from './ai-call.views';

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

/** Sets the turn number in the stored engine state (the closing line's turn). */
export async function setEngineStateTurn(sql: SqlTx, id: string, turn: number): Promise<void> {
  await sql.query(`UPDATE ai_conversations SET engine_state = jsonb_set(engine_state, '{turn}', to_jsonb($2::int)) WHERE id = $1`, [id, turn]);
}

/** Frees an agent claimed for the call whose bridge failed, unless the agent has moved on to another call since. */
export async function releaseClaimedAgent(sql: SqlTx, agentId: string, callAttemptId: string): Promise<void> {
  await sql.query(
    `UPDATE agents SET presence = 'available', active_call_attempt_id = NULL, updated_at = now()
          WHERE id = $1 AND presence = 'on_call' AND active_call_attempt_id = $2::uuid`,
    [agentId, callAttemptId],
  );
}

/** The AI agent the call's conversation ran under (null: the call has no conversation). */
export async function selectConversationAgentId(sql: SqlTx, callUuid: string): Promise<string | null> {
  const [row] = await sql.query<{ ai_agent_id: string }>('SELECT ai_agent_id FROM ai_conversations WHERE call_uuid = $1', [callUuid]);
  return row?.ai_agent_id ?? null;
}

export interface AiGateRow {
  voice_ai_enabled: boolean;
  ai_paused_at: Date | null;
  ai_monthly_budget_usd: string | null;
  agent_status: string | null;
}

/** The switches an ai_voice campaign's tick is gated on: the tenant's add-on, kill switch and budget, and the campaign's agent. */
export async function selectAiGate(sql: SqlTx, campaignId: string): Promise<AiGateRow | null> {
  const [row] = await sql.query<AiGateRow>(
    `SELECT t.voice_ai_enabled, t.ai_paused_at, t.ai_monthly_budget_usd::text, g.status AS agent_status
       FROM campaigns c JOIN tenants t ON t.id = c.tenant_id LEFT JOIN ai_agents g ON g.id = c.ai_agent_id
      WHERE c.id = $1`,
    [campaignId],
  );
  return row ?? null;
}

/** Locks the tenant row, so two pauses at once audit once; answers when the kill switch went on (null: it is off). */
export async function lockAiPausedAt(sql: SqlTx): Promise<Date | null> {
  const [row] = await sql.query<{ ai_paused_at: Date | null }>('SELECT ai_paused_at FROM tenants WHERE id = app_tenant_id() FOR UPDATE');
  return row?.ai_paused_at ?? null;
}

export async function setAiPaused(sql: SqlTx, reason: string | null): Promise<void> {
  await sql.query('UPDATE tenants SET ai_paused_at = now(), ai_paused_reason = $1 WHERE id = app_tenant_id()', [reason]);
}

export interface AiPause {
  ai_paused_at: Date;
  ai_paused_reason: string | null;
}

export async function selectAiPause(sql: SqlTx): Promise<AiPause | null> {
  const [row] = await sql.query<AiPause>('SELECT ai_paused_at, ai_paused_reason FROM tenants WHERE id = app_tenant_id()');
  return row ?? null;
}

/** Lifts the kill switch; answers whether it was on. */
export async function clearAiPause(sql: SqlTx): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE tenants SET ai_paused_at = NULL, ai_paused_reason = NULL WHERE id = app_tenant_id() AND ai_paused_at IS NOT NULL RETURNING id`,
  );
  return rows.length > 0;
}

/** The call uuids of the tenant's live AI calls, oldest first. */
export async function selectLiveAiCallUuids(sql: SqlTx): Promise<string[]> {
  const rows = await sql.query<{ call_uuid: string }>(
    `SELECT call_uuid FROM ai_conversations WHERE status = 'active' AND kind = 'call' AND call_uuid IS NOT NULL ORDER BY started_at`,
  );
  return rows.map((r) => r.call_uuid);
}

export interface LockedConversation {
  id: string;
  kind: string;
  status: string;
  call_uuid: string | null;
}

export async function lockConversation(sql: SqlTx, id: string): Promise<LockedConversation | null> {
  const [row] = await sql.query<LockedConversation>('SELECT id, kind, status, call_uuid FROM ai_conversations WHERE id = $1 FOR UPDATE', [id]);
  return row ?? null;
}

export interface TakeoverAgent {
  id: string;
  status: string;
  presence: string;
  sip_extension: string | null;
}

export async function selectTakeoverAgent(sql: SqlTx, agentId: string): Promise<TakeoverAgent | null> {
  const [row] = await sql.query<TakeoverAgent>('SELECT id, status, presence, sip_extension FROM agents WHERE id = $1', [agentId]);
  return row ?? null;
}

/** Marks a still-active conversation taken over (null: it ended meanwhile); an outcome it already had stays. */
export async function markConversationTakenOver(sql: SqlTx, id: string, takenOverBy: string): Promise<ConversationViewRow | null> {
  const [row] = await sql.query<ConversationViewRow>(
    `UPDATE ai_conversations SET status = 'taken_over', outcome = coalesce(outcome, 'taken_over'), taken_over_by = $2, taken_over_at = now()
        WHERE id = $1 AND status = 'active'
        RETURNING ${CONVERSATION_COLUMNS}`,
    [id, takenOverBy],
  );
  return row ?? null;
}

/** Conversations whose words are due for purge, across tenants (ai_transcript_purge_due reads past row-level security). */
export async function listTranscriptsDue(db: Database, limit: number): Promise<{ conversation_id: string; tenant_id: string }[]> {
  const due = await db.pool.query<{ conversation_id: string; tenant_id: string }>({
    name: 'ai_transcript_purge_due',
    text: 'SELECT conversation_id, tenant_id FROM ai_transcript_purge_due($1)',
    values: [limit],
  });
  return due.rows;
}

/**
 * Locks a listed conversation whose words are still due (null: no longer): re-checked under lock,
 * since a legal hold placed since the listing keeps the words.
 */
export async function lockPurgeableConversation(sql: SqlTx, id: string): Promise<{ call_attempt_id: string | null; call_uuid: string | null } | null> {
  const [row] = await sql.query<{ call_attempt_id: string | null; call_uuid: string | null }>(
    `SELECT c.call_attempt_id, c.call_uuid FROM ai_conversations c
           JOIN tenants t ON t.id = c.tenant_id
           LEFT JOIN recordings r ON r.tenant_id = c.tenant_id AND r.call_uuid = c.call_uuid
          WHERE c.id = $1 AND c.transcript_purged_at IS NULL AND c.status <> 'active' AND NOT coalesce(r.legal_hold, false)
            AND coalesce(r.retained_until, ((c.started_at AT TIME ZONE 'UTC')::date + make_interval(months => t.retention_months))::date)
                < (now() AT TIME ZONE 'UTC')::date
          FOR UPDATE OF c`,
    [id],
  );
  return row ?? null;
}

/** Holds the call's recording row until the purge commits: a legal hold placed meanwhile waits for it. */
export async function lockRecordingOfCall(sql: SqlTx, callUuid: string): Promise<void> {
  await sql.query('SELECT 1 FROM recordings WHERE call_uuid = $1 FOR UPDATE', [callUuid]);
}

export async function purgeConversationTranscript(sql: SqlTx, id: string): Promise<void> {
  await sql.query(`UPDATE ai_conversations SET transcript = '[]'::jsonb, engine_state = NULL, transcript_purged_at = now() WHERE id = $1`, [id]);
}

/** Drops the words of the call's `heard` timeline lines, marking each line purged. */
export async function purgeHeardText(sql: SqlTx, callAttemptId: string): Promise<void> {
  await sql.query(
    `UPDATE call_events SET data = (data - 'text') || '{"text_purged": true}'::jsonb
            WHERE call_attempt_id = $1 AND event = 'heard' AND data ? 'text'`,
    [callAttemptId],
  );
}

export interface AiUsageDayRow {
  date: string;
  calls: number;
  billable_seconds: number;
  billable_minutes: number;
  cost_usd: string;
}

/** The window's usage per UTC date: every date of [from, to) is present (generate_series), a date without calls at zero. */
export function selectDailyUsage(sql: SqlTx, from: Date, to: Date, campaignId: string | null): Promise<AiUsageDayRow[]> {
  return sql.query<AiUsageDayRow>(
    `WITH u AS (
         SELECT (answered_at AT TIME ZONE 'UTC')::date AS day, billable_seconds, ceil(billable_seconds / 60.0)::int AS minutes, cost_usd
           FROM ai_usage
          WHERE answered_at >= $1 AND answered_at < $2 AND ($3::uuid IS NULL OR campaign_id = $3::uuid))
       SELECT to_char(d.day, 'YYYY-MM-DD') AS date, count(u.day)::int AS calls, coalesce(sum(u.billable_seconds), 0)::int AS billable_seconds,
              coalesce(sum(u.minutes), 0)::int AS billable_minutes, coalesce(sum(u.cost_usd), 0)::numeric(16, 4)::text AS cost_usd
         FROM generate_series(($1::timestamptz AT TIME ZONE 'UTC')::date, (($2::timestamptz - interval '1 millisecond') AT TIME ZONE 'UTC')::date,
                              interval '1 day') AS d(day)
         LEFT JOIN u ON u.day = d.day::date
        GROUP BY d.day ORDER BY d.day`,
    [from, to, campaignId],
  );
}

/** The rate rendered and the window's total cost, both in SQL numeric so no float touches the money. */
export async function selectUsageTotals(sql: SqlTx, rate: string, from: Date, to: Date, campaignId: string | null): Promise<{ rate: string; cost: string }> {
  const [row] = await sql.query<{ rate: string; cost: string }>(
    `SELECT $1::numeric(10, 4)::text AS rate,
              coalesce((SELECT sum(cost_usd) FROM ai_usage WHERE answered_at >= $2 AND answered_at < $3 AND ($4::uuid IS NULL OR campaign_id = $4::uuid)), 0)
                ::numeric(16, 4)::text AS cost`,
    [rate, from, to, campaignId],
  );
  return row!;
}
