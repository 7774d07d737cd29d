import type { SqlTx } from '../../lib/tenancy';
import type { BillingScheme, BlockReason, EnforcementMode, LedgerKind } from './billing.rules';

export interface AccountRow {
  scheme: BillingScheme | null;
  enforcement_mode: EnforcementMode | null;
  alert_thresholds: number[];
  cap_usd: string | null;
  credit_limit_usd: string;
  blocked_reason: BlockReason | null;
  created_at: Date;
}

const ACCOUNT_COLUMNS = 'scheme, enforcement_mode, alert_thresholds, cap_usd::text, credit_limit_usd::text, blocked_reason, created_at';

/** The tenant's account row; `lock` serializes evaluations and operator writes of one tenant. */
export async function readAccount(sql: SqlTx, lock = false): Promise<AccountRow | null> {
  const [row] = await sql.query<AccountRow>(
    `SELECT ${ACCOUNT_COLUMNS} FROM billing_accounts WHERE tenant_id = app_tenant_id()${lock ? ' FOR UPDATE' : ''}`,
  );
  return row ?? null;
}

/** Creates the account row if missing and locks it. */
export async function lockAccount(sql: SqlTx): Promise<AccountRow> {
  await sql.query('INSERT INTO billing_accounts (tenant_id) VALUES (app_tenant_id()) ON CONFLICT (tenant_id) DO NOTHING');
  return (await readAccount(sql, true))!;
}

export interface AccountPatch {
  scheme?: BillingScheme | null;
  enforcement_mode?: EnforcementMode | null;
  alert_thresholds?: number[];
  cap_usd?: string | null;
  credit_limit_usd?: string;
}

export async function updateAccount(sql: SqlTx, patch: AccountPatch): Promise<void> {
  const sets: string[] = [];
  const values: unknown[] = [];
  const casts: Record<keyof AccountPatch, string> = {
    scheme: 'text',
    enforcement_mode: 'text',
    alert_thresholds: 'integer[]',
    cap_usd: 'numeric',
    credit_limit_usd: 'numeric',
  };
  for (const key of Object.keys(casts) as (keyof AccountPatch)[]) {
    if (patch[key] === undefined) continue;
    values.push(patch[key]);
    sets.push(`${key} = $${values.length}::${casts[key]}`);
  }
  if (sets.length) await sql.query(`UPDATE billing_accounts SET ${sets.join(', ')} WHERE tenant_id = app_tenant_id()`, values);
}

/** The block and mode of an enabled account (scheme set); undefined when billing is off. */
export async function enabledAccountBlock(sql: SqlTx): Promise<{ blocked_reason: BlockReason | null; enforcement_mode: string | null } | undefined> {
  const [row] = await sql.query<{ blocked_reason: BlockReason | null; enforcement_mode: string | null }>(
    'SELECT blocked_reason, enforcement_mode FROM billing_accounts WHERE tenant_id = app_tenant_id() AND scheme IS NOT NULL',
  );
  return row;
}

export async function setBlocked(sql: SqlTx, reason: BlockReason | null): Promise<void> {
  await sql.query(
    `UPDATE billing_accounts SET blocked_reason = $1::text, blocked_at = CASE WHEN $1::text IS NULL THEN NULL ELSE coalesce(blocked_at, now()) END
      WHERE tenant_id = app_tenant_id() AND blocked_reason IS DISTINCT FROM $1::text`,
    [reason],
  );
}

export async function insertLedgerEntry(sql: SqlTx, kind: LedgerKind, amountUsd: string, note: string | null) {
  const [row] = await sql.query<{ id: string; kind: LedgerKind; amount_usd: string; note: string | null; created_at: Date }>(
    `INSERT INTO billing_ledger (tenant_id, kind, amount_usd, note) VALUES (app_tenant_id(), $1, $2::numeric, $3)
     RETURNING id, kind, amount_usd::text, note, created_at`,
    [kind, amountUsd, note],
  );
  return row!;
}

/** Credited amounts per ledger kind, as numeric text. */
export async function ledgerSums(sql: SqlTx): Promise<Record<LedgerKind, string>> {
  const rows = await sql.query<{ kind: LedgerKind; total: string }>(
    'SELECT kind, sum(amount_usd)::text AS total FROM billing_ledger WHERE tenant_id = app_tenant_id() GROUP BY kind',
  );
  const sums: Record<LedgerKind, string> = { cash: '0', grant: '0', deposit: '0', hold: '0', hold_release: '0' };
  for (const r of rows) sums[r.kind] = r.total;
  return sums;
}

export interface MeteredUsage {
  answered_minutes: number;
  inbound_minutes: number;
  sms_segments: number;
  sms_cost: string;
  ai_calls: number;
  ai_cost: string;
  wav_files: number;
}

/**
 * Metered usage of [from, to): answered minutes from each call's final CDR state (the latest
 * correction, else the original; per started minute), SMS from the ledger's charged rows, voice AI
 * from ai_usage (each row at the rate it was metered under), WAV files from the recording exports
 * completed in the window (an identical request answered from the dedup window is the same job).
 * Only calls with some row (original or correction) answered inside the window are resolved: a
 * final state answered inside it is such a row, so the figure is exact and the cost follows the
 * window's calls, not the tenant's whole history (call_attempts_answered_idx).
 */
export async function meteredUsage(sql: SqlTx, from: Date, to: Date): Promise<MeteredUsage> {
  const [row] = await sql.query<MeteredUsage>(
    `WITH touched AS (
       SELECT DISTINCT coalesce(corrects_id, id) AS id FROM call_attempts
        WHERE tenant_id = app_tenant_id() AND answered_at >= $1 AND answered_at < $2
     ), final AS (
       SELECT DISTINCT ON (t.id) x.answered_at, x.ended_at, x.direction
         FROM touched t JOIN call_attempts x ON x.id = t.id OR x.corrects_id = t.id
        ORDER BY t.id, x.corrects_id IS NULL, x.inserted_at DESC
     )
     SELECT (SELECT coalesce(sum(ceil(extract(epoch FROM ended_at - answered_at) / 60)), 0)::int FROM final
              WHERE answered_at >= $1 AND answered_at < $2 AND ended_at > answered_at AND direction = 'outbound') AS answered_minutes,
            (SELECT coalesce(sum(ceil(extract(epoch FROM ended_at - answered_at) / 60)), 0)::int FROM final
              WHERE answered_at >= $1 AND answered_at < $2 AND ended_at > answered_at AND direction = 'inbound') AS inbound_minutes,
            (SELECT coalesce(sum(segments), 0)::int FROM sms_messages
              WHERE tenant_id = app_tenant_id() AND cost_usd IS NOT NULL AND occurred_at >= $1 AND occurred_at < $2) AS sms_segments,
            (SELECT coalesce(sum(cost_usd), 0)::text FROM sms_messages
              WHERE tenant_id = app_tenant_id() AND cost_usd IS NOT NULL AND occurred_at >= $1 AND occurred_at < $2) AS sms_cost,
            (SELECT count(*)::int FROM ai_usage WHERE tenant_id = app_tenant_id() AND answered_at >= $1 AND answered_at < $2) AS ai_calls,
            (SELECT coalesce(sum(cost_usd), 0)::text FROM ai_usage
              WHERE tenant_id = app_tenant_id() AND answered_at >= $1 AND answered_at < $2) AS ai_cost,
            (SELECT coalesce(sum(audio_files), 0)::int FROM recording_exports
              WHERE tenant_id = app_tenant_id() AND status = 'done' AND finished_at >= $1 AND finished_at < $2) AS wav_files`,
    [from, to],
  );
  return row!;
}

export interface TenantBillingFacts {
  seats: number;
  tier: string;
  voice_ai_enabled: boolean;
  house_dids: number;
  customer_dids: number;
  plan_status: string;
}

/**
 * Seats, tier, the add-on flag and, per origin, the DIDs held at any time in [from, to): added
 * before its end and not inside one retired gap for all of it (did_retirements keeps every gap,
 * also of a DID set back from retired). A closed month therefore counts the same whenever it is
 * read; the current window counts what is held now plus what left during it.
 */
export async function tenantFacts(sql: SqlTx, window: { from: Date; to: Date }): Promise<TenantBillingFacts | null> {
  const held = `d.tenant_id = t.id AND d.created_at < $2
    AND NOT EXISTS (SELECT 1 FROM did_retirements g WHERE g.did_id = d.id AND g.retired_at <= $1 AND (g.reheld_at IS NULL OR g.reheld_at >= $2))`;
  const [row] = await sql.query<TenantBillingFacts>(
    `SELECT t.seats, t.tier, t.voice_ai_enabled, t.plan_status,
            (SELECT count(*)::int FROM dids d WHERE ${held} AND d.origin = 'house') AS house_dids,
            (SELECT count(*)::int FROM dids d WHERE ${held} AND d.origin = 'customer') AS customer_dids
       FROM tenants t WHERE t.id = app_tenant_id()`,
    [window.from, window.to],
  );
  return row ?? null;
}

export interface AlertRow {
  id: string;
  period_key: string;
  threshold_pct: number;
  scheme: BillingScheme;
  enforcement_mode: EnforcementMode | null;
  spent_usd: string;
  limit_usd: string;
  crossed_at: Date;
}

const ALERT_COLUMNS = 'id, period_key, threshold_pct, scheme, enforcement_mode, spent_usd::text, limit_usd::text, crossed_at';

/**
 * Records each threshold not yet recorded for the period and answers only the rows this call
 * inserted. The unique key decides under concurrency: whichever evaluation inserts first keeps its
 * snapshot, and only that one announces it.
 */
export async function recordCrossings(
  sql: SqlTx,
  periodKey: string,
  thresholds: number[],
  snapshot: { scheme: BillingScheme; enforcement_mode: EnforcementMode | null; spent_usd: string; limit_usd: string },
): Promise<AlertRow[]> {
  if (!thresholds.length) return [];
  return sql.query<AlertRow>(
    `INSERT INTO billing_alerts (tenant_id, period_key, threshold_pct, scheme, enforcement_mode, spent_usd, limit_usd)
     SELECT app_tenant_id(), $1, t, $3, $4, $5::numeric, $6::numeric FROM unnest($2::int[]) AS t
     ON CONFLICT (tenant_id, period_key, threshold_pct) DO NOTHING
     RETURNING ${ALERT_COLUMNS}`,
    [periodKey, thresholds, snapshot.scheme, snapshot.enforcement_mode, snapshot.spent_usd, snapshot.limit_usd],
  );
}

export async function listAlerts(sql: SqlTx, periodKey: string) {
  return sql.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM billing_alerts
      WHERE tenant_id = app_tenant_id() AND period_key = $1 ORDER BY crossed_at DESC, threshold_pct DESC`,
    [periodKey],
  );
}

/** Who a spend alert is mailed to: the tenant's active account_admin users. */
export async function accountAdminEmails(sql: SqlTx): Promise<string[]> {
  const rows = await sql.query<{ email: string }>(
    `SELECT email FROM users WHERE tenant_id = app_tenant_id() AND role = 'account_admin' AND status = 'active' ORDER BY created_at, id`,
  );
  return rows.map((r) => r.email);
}

/** Alert mail of `kind` queued since `since` and not yet sent (mail_outbox_tenant_idx). */
export async function unsentMailIds(sql: SqlTx, kind: string, since: Date): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    'SELECT id::text FROM mail_outbox WHERE tenant_id = app_tenant_id() AND created_at >= $1 AND kind = $2 AND sent_at IS NULL ORDER BY created_at, id',
    [since, kind],
  );
  return rows.map((r) => r.id);
}

export async function campaignIdsIn(sql: SqlTx, state: string): Promise<string[]> {
  return (await sql.query<{ id: string }>('SELECT id::text FROM campaigns WHERE tenant_id = app_tenant_id() AND state = $1 ORDER BY created_at, id', [state])).map((r) => r.id);
}

/** plan_status follows funds: billing moves only active ↔ past_due and leaves the operator's other states alone. */
export async function movePlanStatus(sql: SqlTx, blocked: boolean): Promise<void> {
  await sql.query(
    `UPDATE tenants SET plan_status = CASE WHEN $1 THEN 'past_due' ELSE 'active' END
      WHERE id = app_tenant_id() AND plan_status = CASE WHEN $1 THEN 'active' ELSE 'past_due' END`,
    [blocked],
  );
}
