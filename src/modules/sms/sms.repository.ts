import type { SqlTx } from '../../lib/tenancy';

export interface SmsRow {
  id: string;
  direction: string;
  status: string;
  from_e164: string | null;
  to_e164: string;
  body: string | null;
  segments: number | null;
  encoding: string | null;
  client_ref: string | null;
  provider_id: string | null;
  provider_message_id: string | null;
  campaign_id: string | null;
  debt_id: string | null;
  consumer_ref: string | null;
  compliance_snapshot: Record<string, unknown> | null;
  /** numeric(12,6) arrives as a string from pg. */
  cost_usd: string | null;
  error_code: string | null;
  kind: string | null;
  occurred_at: Date;
  corrects_id: string | null;
  recorded_at: Date;
}

const COLUMNS = `id, direction, status, from_e164, to_e164, body, segments, encoding, client_ref, provider_id, provider_message_id,
  campaign_id, debt_id, consumer_ref, compliance_snapshot, cost_usd, error_code, kind, occurred_at, corrects_id, recorded_at`;

export async function findOriginalByClientRef(sql: SqlTx, clientRef: string): Promise<SmsRow | null> {
  const rows = await sql.query<SmsRow>(
    `SELECT ${COLUMNS} FROM sms_messages WHERE tenant_id = app_tenant_id() AND client_ref = $1 AND corrects_id IS NULL`,
    [clientRef],
  );
  return rows[0] ?? null;
}

export async function tenantSmsLimits(sql: SqlTx): Promise<{ budget_usd: number | null; max_cps: number | null }> {
  const [row] = await sql.query<{ budget_usd: string | null; max_cps: number | null }>(
    'SELECT sms_monthly_budget_usd AS budget_usd, max_cps FROM tenants WHERE id = app_tenant_id()',
  );
  return { budget_usd: row?.budget_usd == null ? null : Number(row.budget_usd), max_cps: row?.max_cps ?? null };
}

/**
 * Spend of the UTC month of `now`: what was charged (cost_usd), plus what is in flight (queued
 * originals with no transition yet, at `pricePerSegment`): such a message may be charged at any
 * moment, so it holds its share of the cap.
 */
export async function monthToDateSpend(sql: SqlTx, now: Date, pricePerSegment: number): Promise<{ charged: number; reserved: number }> {
  const [row] = await sql.query<{ charged: string; reserved: string }>(
    `WITH month AS (SELECT date_trunc('month', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start)
     SELECT coalesce((SELECT sum(m.cost_usd) FROM sms_messages m, month
                       WHERE m.tenant_id = app_tenant_id() AND m.cost_usd IS NOT NULL AND m.occurred_at >= month.start), 0) AS charged,
            coalesce((SELECT sum(coalesce(o.segments, 0)) * $2::numeric FROM sms_messages o, month
                       WHERE o.tenant_id = app_tenant_id() AND o.corrects_id IS NULL AND o.direction = 'outbound' AND o.status = 'queued'
                         AND o.occurred_at >= month.start
                         AND NOT EXISTS (SELECT 1 FROM sms_messages t WHERE t.corrects_id = o.id)), 0) AS reserved`,
    [now, pricePerSegment],
  );
  return { charged: Number(row?.charged ?? 0), reserved: Number(row?.reserved ?? 0) };
}

export async function sendsLastSecond(sql: SqlTx, now: Date): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sms_messages
      WHERE tenant_id = app_tenant_id() AND corrects_id IS NULL AND direction = 'outbound'
        AND occurred_at > $1::timestamptz - interval '1 second' AND occurred_at <= $1::timestamptz`,
    [now],
  );
  return row?.n ?? 0;
}

/**
 * A savepoint around the compliance engine inside the send's transaction: a failed engine
 * statement is rolled back alone, and the send goes on to record the refusal.
 */
export async function setEngineSavepoint(sql: SqlTx): Promise<void> {
  await sql.query('SAVEPOINT sms_engine');
}

export async function releaseEngineSavepoint(sql: SqlTx): Promise<void> {
  await sql.query('RELEASE SAVEPOINT sms_engine');
}

export async function rollbackToEngineSavepoint(sql: SqlTx): Promise<void> {
  await sql.query('ROLLBACK TO SAVEPOINT sms_engine');
}

export async function campaignVisible(sql: SqlTx, campaignId: string): Promise<boolean> {
  return (await sql.query('SELECT 1 FROM campaigns WHERE id = $1::uuid', [campaignId])).length > 0;
}

export interface NewQueued {
  id: string;
  fromE164: string | null;
  toE164: string;
  body: string;
  segments: number;
  encoding: string;
  clientRef: string;
  providerId: string | null;
  campaignId: string | null;
  debtId: string | null;
  consumerRef: string | null;
  snapshot: unknown;
  occurredAt: Date;
}

/** The original outbound row; null when the client_ref is already taken (the unique index decides). */
export async function insertQueued(sql: SqlTx, m: NewQueued): Promise<SmsRow | null> {
  const rows = await sql.query<SmsRow>(
    `INSERT INTO sms_messages (id, tenant_id, direction, status, from_e164, to_e164, body, segments, encoding, client_ref, provider_id,
       campaign_id, debt_id, consumer_ref, compliance_snapshot, occurred_at)
     VALUES ($1::uuid, app_tenant_id(), 'outbound', 'queued', $2, $3, $4, $5, $6, $7, $8::uuid, $9::uuid, $10::uuid, $11, $12::jsonb, $13)
     ON CONFLICT (tenant_id, client_ref) WHERE corrects_id IS NULL AND client_ref IS NOT NULL DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      m.id,
      m.fromE164,
      m.toE164,
      m.body,
      m.segments,
      m.encoding,
      m.clientRef,
      m.providerId,
      m.campaignId,
      m.debtId,
      m.consumerRef,
      JSON.stringify(m.snapshot),
      m.occurredAt,
    ],
  );
  return rows[0] ?? null;
}

export interface NewTransition {
  status: 'sent' | 'failed';
  providerMessageId?: string | null;
  segments?: number | null;
  costUsd?: number | null;
  errorCode?: string | null;
  occurredAt: Date;
}

/**
 * A transition row. It repeats the original's identity columns (direction, numbers, campaign,
 * debt, provider) so the list's filters match transitions by their own columns; the body stays on
 * the original only. A replayed transition adds nothing (unique (corrects_id, status)).
 */
export async function insertTransition(sql: SqlTx, originalId: string, t: NewTransition): Promise<void> {
  await sql.query(
    `INSERT INTO sms_messages (tenant_id, direction, status, from_e164, to_e164, segments, encoding, client_ref, provider_id,
       provider_message_id, campaign_id, debt_id, consumer_ref, cost_usd, error_code, occurred_at, corrects_id)
     SELECT o.tenant_id, o.direction, $2, o.from_e164, o.to_e164, $3, o.encoding, o.client_ref, o.provider_id, $4, o.campaign_id,
            o.debt_id, o.consumer_ref, $5::numeric, $6, $7, o.id
       FROM sms_messages o WHERE o.id = $1::uuid AND o.corrects_id IS NULL
     ON CONFLICT (corrects_id, status) WHERE corrects_id IS NOT NULL DO NOTHING`,
    [originalId, t.status, t.segments ?? null, t.providerMessageId ?? null, t.costUsd ?? null, t.errorCode ?? null, t.occurredAt],
  );
}

/** An original and its transitions (oldest first). `id` may name the original or any of its transitions. */
export async function findMessage(sql: SqlTx, id: string): Promise<{ original: SmsRow; transitions: SmsRow[] } | null> {
  const rows = await sql.query<SmsRow>(
    `WITH target AS (SELECT coalesce(corrects_id, id) AS oid FROM sms_messages WHERE id = $1::uuid)
     SELECT ${COLUMNS} FROM sms_messages m, target
      WHERE m.id = target.oid OR m.corrects_id = target.oid
      ORDER BY (m.corrects_id IS NOT NULL), m.recorded_at, m.id`,
    [id],
  );
  const [original, ...transitions] = rows;
  if (!original || original.corrects_id !== null) return null;
  return { original, transitions };
}

export interface ListFilters {
  direction?: string;
  status?: string;
  campaignId?: string;
  debtId?: string;
  after?: { at: Date; id: string } | null;
  limit: number;
}

export interface DailyCharges {
  date: string;
  messages: number;
  segments: number;
  /** numeric arrives as a string from pg. */
  cost_usd: string;
}

/** Charged rows (those with a cost_usd: the `sent` transitions) of [from, to) per UTC day, optionally of one campaign. */
export async function dailyCharges(sql: SqlTx, from: Date, to: Date, campaignId: string | null): Promise<DailyCharges[]> {
  return sql.query<DailyCharges>(
    `SELECT to_char((occurred_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS date, count(*)::int AS messages,
              coalesce(sum(segments), 0)::int AS segments, coalesce(sum(cost_usd), 0) AS cost_usd
         FROM sms_messages
        WHERE tenant_id = app_tenant_id() AND cost_usd IS NOT NULL
          AND occurred_at >= $1::timestamptz AND occurred_at < $2::timestamptz
          AND ($3::uuid IS NULL OR campaign_id = $3::uuid)
        GROUP BY 1 ORDER BY 1`,
    [from, to, campaignId],
  );
}

/** What was charged in [from, to), all campaigns, as numeric text. */
export async function chargedBetween(sql: SqlTx, from: Date, to: Date): Promise<string | undefined> {
  const [row] = await sql.query<{ cost: string }>(
    `SELECT coalesce(sum(cost_usd), 0) AS cost FROM sms_messages
        WHERE tenant_id = app_tenant_id() AND cost_usd IS NOT NULL AND occurred_at >= $1::timestamptz AND occurred_at < $2::timestamptz`,
    [from, to],
  );
  return row?.cost;
}

/** Originals and transitions, newest first by (recorded_at, id); fetches limit + 1 for paginate(). */
export async function listRows(sql: SqlTx, f: ListFilters): Promise<SmsRow[]> {
  const where: string[] = ['tenant_id = app_tenant_id()'];
  const values: unknown[] = [];
  const add = (clause: (p: string) => string, value: unknown) => {
    values.push(value);
    where.push(clause(`$${values.length}`));
  };
  if (f.direction) add((p) => `direction = ${p}`, f.direction);
  if (f.status) add((p) => `status = ${p}`, f.status);
  if (f.campaignId) add((p) => `campaign_id = ${p}::uuid`, f.campaignId);
  if (f.debtId) add((p) => `debt_id = ${p}::uuid`, f.debtId);
  if (f.after) {
    values.push(f.after.at, f.after.id);
    where.push(`(recorded_at, id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
  }
  values.push(f.limit + 1);
  return sql.query<SmsRow>(
    `SELECT ${COLUMNS} FROM sms_messages WHERE ${where.join(' AND ')} ORDER BY recorded_at DESC, id DESC LIMIT $${values.length}`,
    values,
  );
}
