import type { SqlTx } from '../../lib/tenancy';

export interface BlastCampaign {
  state: string;
  sms_body: string | null;
  max_cps: number | null;
  caller_ids: string[];
  caller_id_pool: string[];
}

export async function readBlastCampaign(sql: SqlTx, campaignId: string): Promise<BlastCampaign | null> {
  const [row] = await sql.query<BlastCampaign>(
    `SELECT c.state, c.sms_body, t.max_cps, c.caller_ids, c.caller_id_pool::text[] AS caller_id_pool
       FROM campaigns c JOIN tenants t ON t.id = c.tenant_id WHERE c.id = $1`,
    [campaignId],
  );
  return row ?? null;
}

/** Of these numbers, the ones that are active DIDs of the tenant (a text goes out only from a number the tenant holds). */
export async function activeOwnNumbers(sql: SqlTx, e164s: string[]): Promise<string[]> {
  const rows = await sql.query<{ e164: string }>(`SELECT e164 FROM dids WHERE e164 = ANY ($1::text[]) AND status = 'active' ORDER BY e164`, [e164s]);
  return rows.map((r) => r.e164);
}

/**
 * A send of a previous try of this tick (found by its client_ref, blastClientRef's
 * `blast:<campaign>:<debt>:<tick key>`): settle its debt, never send again.
 */
export function earlierOfTick(sql: SqlTx, campaignId: string, tickKey: string): Promise<Array<{ debt_id: string; status: string }>> {
  const prefix = `blast:${campaignId}:`;
  const suffix = `:${tickKey}`;
  return sql.query<{ debt_id: string; status: string }>(
    `SELECT o.debt_id, coalesce(t.status, o.status) AS status
       FROM sms_messages o
       LEFT JOIN LATERAL (SELECT x.status FROM sms_messages x WHERE x.corrects_id = o.id ORDER BY x.recorded_at DESC, x.id DESC LIMIT 1) t ON true
      WHERE o.corrects_id IS NULL AND o.direction = 'outbound' AND o.campaign_id = $1 AND o.debt_id IS NOT NULL
        AND left(o.client_ref, $2) = $3 AND right(o.client_ref, $4) = $5`,
    [campaignId, prefix.length, prefix, suffix.length, suffix],
  );
}

/**
 * Claimed debts the campaign texted within `withinMs` (REDIAL_AFTER_MS: another run, or a try under
 * another tick key, sent and died before pushing them): settled like an earlier try's sends, never texted again.
 */
export async function textedRecently(
  sql: SqlTx,
  campaignId: string,
  debtIds: string[],
  now: Date,
  withinMs: number,
): Promise<Array<{ debt_id: string; status: string }>> {
  if (!debtIds.length) return [];
  return sql.query<{ debt_id: string; status: string }>(
    `SELECT DISTINCT ON (o.debt_id) o.debt_id, coalesce(t.status, o.status) AS status
       FROM sms_messages o
       LEFT JOIN LATERAL (SELECT x.status FROM sms_messages x WHERE x.corrects_id = o.id ORDER BY x.recorded_at DESC, x.id DESC LIMIT 1) t ON true
      WHERE o.corrects_id IS NULL AND o.direction = 'outbound' AND o.campaign_id = $1 AND o.debt_id = ANY ($2::uuid[])
        AND o.occurred_at > $3::timestamptz - make_interval(secs => $4 / 1000.0)
      ORDER BY o.debt_id, o.occurred_at DESC`,
    [campaignId, debtIds, now, withinMs],
  );
}

export interface DebtMergeFields {
  id: string;
  external_ref: string;
  consumer_ref: string;
  account_number: string | null;
  amount_cents: string;
  state: string;
}

export function debtMergeFields(sql: SqlTx, debtIds: string[]): Promise<DebtMergeFields[]> {
  return sql.query<DebtMergeFields>(
    `SELECT id, external_ref, consumer_ref, account_number, amount_cents::text AS amount_cents, state FROM debts WHERE id = ANY ($1::uuid[])`,
    [debtIds],
  );
}

export async function pushNextDialableAt(sql: SqlTx, debtIds: string[], now: Date, delayMs: number): Promise<void> {
  await sql.query(`UPDATE debts SET next_dialable_at = $2::timestamptz + make_interval(secs => $3 / 1000.0) WHERE id = ANY ($1::uuid[])`, [
    debtIds,
    now,
    delayMs,
  ]);
}

/** The campaign's outbound texts recorded since `since`, and how many of them the provider has answered (a correction row exists). */
export async function countBlastMessages(sql: SqlTx, campaignId: string, since: Date): Promise<{ dialed: number; finished: number } | null> {
  const [row] = await sql.query<{ dialed: number; finished: number }>(
    `SELECT count(*)::int AS dialed,
            count(*) FILTER (WHERE EXISTS (SELECT 1 FROM sms_messages t WHERE t.corrects_id = o.id))::int AS finished
       FROM sms_messages o
      WHERE o.corrects_id IS NULL AND o.direction = 'outbound' AND o.campaign_id = $1 AND o.occurred_at >= $2`,
    [campaignId, since],
  );
  return row ?? null;
}
