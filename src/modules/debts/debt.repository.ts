import type { CallAttempt } from '../../../prisma/generated/client';
import type { SqlTx } from '../../lib/tenancy';
import { callAttemptColumns } from '../cdr/call-attempt.views';
import type { ListDebtsFilters } from './debt.schemas';

/** A debt as the summary projection reads it (one row per debt, primary contact joined). */
export interface DebtSummaryRow {
  id: string;
  tenant_id: string;
  campaign_id: string | null;
  campaign_name: string | null;
  external_ref: string;
  consumer_ref: string;
  debt_type: string;
  /** bigint, as pg returns it. */
  amount_cents: string;
  currency: string;
  state: string;
  last_conversation_at: Date | null;
  next_dialable_at: Date | null;
  primary_phone: string | null;
  primary_line_type: string | null;
  primary_timezone: string | null;
  primary_us_state: string | null;
  primary_city: string | null;
  contact_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface DebtDetailRow extends DebtSummaryRow {
  account_number: string | null;
  prior_attempts_7d: number;
  cease_and_desist_at: Date | null;
  requeued_at: Date | null;
}

export interface ContactRow {
  id: string;
  phone_e164: string;
  line_type: string | null;
  timezone: string | null;
  us_state: string | null;
  city: string | null;
  postal_code: string | null;
  consumer_ref: string | null;
  nyc_borough: string | null;
  is_primary: boolean;
  created_at: Date;
  updated_at: Date;
  voice_granted_at: Date | null;
  voice_source: string | null;
  voice_revoked_at: Date | null;
  sms_granted_at: Date | null;
  sms_source: string | null;
  sms_revoked_at: Date | null;
}

// Contacts are reached by debt id (row-level security still applies): naming tenant_id there too
// makes the planner AND in the tenant-wide phone index, a scan of every contact of the tenant per row.
const SUMMARY_COLUMNS = `d.id, d.tenant_id, d.campaign_id, c.name AS campaign_name, d.external_ref, d.consumer_ref, d.debt_type,
  d.amount_cents, d.currency, d.state, d.last_conversation_at, d.next_dialable_at,
  p.phone_e164 AS primary_phone, p.line_type AS primary_line_type, p.timezone AS primary_timezone,
  p.us_state AS primary_us_state, p.city AS primary_city,
  (SELECT count(*)::int FROM debt_contacts k WHERE k.debt_id = d.id) AS contact_count,
  d.created_at, d.updated_at`;

/** The summary's joins over `source` (the debts table, or a page of it) aliased d. */
const summaryFrom = (source: string) => `${source} d
  LEFT JOIN campaigns c ON c.id = d.campaign_id
  LEFT JOIN debt_contacts p ON p.tenant_id = d.tenant_id AND p.debt_id = d.id AND p.is_primary`;

/** One page of debts in (created_at, id) order, one statement, filters exactly as GET /v1/debts takes them. */
export async function listDebtRows(
  sql: SqlTx,
  tenantId: string,
  filters: Omit<ListDebtsFilters, 'limit' | 'cursor'>,
  after: { at: Date; id: string } | null,
  take: number,
): Promise<DebtSummaryRow[]> {
  const values: unknown[] = [tenantId];
  const where = ['d.tenant_id = $1::uuid'];
  const param = (value: unknown, cast: string) => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  if (filters.campaign_id !== undefined) where.push(`d.campaign_id = ${param(filters.campaign_id, 'uuid')}`);
  if (filters.state !== undefined) where.push(`d.state = ${param(filters.state, 'text')}`);
  if (filters.min_amount_cents !== undefined) where.push(`d.amount_cents >= ${param(filters.min_amount_cents, 'bigint')}`);
  if (filters.max_amount_cents !== undefined) where.push(`d.amount_cents <= ${param(filters.max_amount_cents, 'bigint')}`);
  if (filters.dialable_by !== undefined) {
    where.push(`(d.next_dialable_at IS NULL OR d.next_dialable_at <= ${param(filters.dialable_by, 'timestamptz')})`);
  }
  if (filters.phone !== undefined) {
    where.push(
      `EXISTS (SELECT 1 FROM debt_contacts k WHERE k.tenant_id = d.tenant_id AND k.debt_id = d.id AND k.phone_e164 = ${param(filters.phone, 'text')})`,
    );
  }
  if (filters.consumer_ref !== undefined) where.push(`d.consumer_ref = ${param(filters.consumer_ref, 'text')}`);
  if (filters.external_ref !== undefined) where.push(`d.external_ref = ${param(filters.external_ref, 'text')}`);
  if (after) where.push(`(d.created_at, d.id) > (${param(after.at, 'timestamptz')}, ${param(after.id, 'uuid')})`);
  // Page first, then join: the page comes off debts_page_idx in order and only its rows meet the
  // contacts and campaigns. Joined in one statement, the planner (misled by statistics a bulk import
  // left stale) hash-joined every contact of the tenant before it could stop at the page.
  return sql.query<DebtSummaryRow>(
    `WITH page AS MATERIALIZED (
       SELECT d.* FROM debts d
        WHERE ${where.join(' AND ')}
        ORDER BY d.created_at, d.id
        LIMIT ${param(take, 'int')}
     )
     SELECT ${SUMMARY_COLUMNS} FROM ${summaryFrom('page')}
      ORDER BY d.created_at, d.id`,
    values,
  );
}

export async function findDebtDetailRow(sql: SqlTx, tenantId: string, debtId: string): Promise<DebtDetailRow | null> {
  const rows = await sql.query<DebtDetailRow>(
    `SELECT ${SUMMARY_COLUMNS}, d.account_number, d.cease_and_desist_at, d.requeued_at,
            (SELECT COALESCE(sum(a.attempts), 0)::int FROM debt_prior_attempts a
              WHERE a.tenant_id = d.tenant_id AND a.debt_id = d.id AND a.reported_at > now() - interval '7 days') AS prior_attempts_7d
       FROM ${summaryFrom('debts')}
      WHERE d.tenant_id = $1::uuid AND d.id = $2::uuid`,
    [tenantId, debtId],
  );
  return rows[0] ?? null;
}

/** The debt's contacts with their voice and SMS consent: primary first, then oldest first. */
export async function listContactRows(sql: SqlTx, tenantId: string, debtId: string): Promise<ContactRow[]> {
  return sql.query<ContactRow>(
    `SELECT k.id, k.phone_e164, k.line_type, k.timezone, k.us_state, k.city, k.postal_code, k.consumer_ref, k.nyc_borough,
            k.is_primary, k.created_at, k.updated_at,
            v.granted_at AS voice_granted_at, v.source AS voice_source, v.revoked_at AS voice_revoked_at,
            s.granted_at AS sms_granted_at, s.source AS sms_source, s.revoked_at AS sms_revoked_at
       FROM debt_contacts k
       LEFT JOIN consents v ON v.tenant_id = k.tenant_id AND v.debt_id = k.debt_id AND v.phone_e164 = k.phone_e164 AND v.channel = 'voice'
       LEFT JOIN consents s ON s.tenant_id = k.tenant_id AND s.debt_id = k.debt_id AND s.phone_e164 = k.phone_e164 AND s.channel = 'sms'
      WHERE k.tenant_id = $1::uuid AND k.debt_id = $2::uuid
      ORDER BY k.is_primary DESC, k.created_at, k.phone_e164`,
    [tenantId, debtId],
  );
}

export async function debtExists(sql: SqlTx, tenantId: string, debtId: string): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM debts WHERE tenant_id = $1::uuid AND id = $2::uuid`, [tenantId, debtId]);
  return rows.length > 0;
}

/**
 * A page of a debt's CDR, originals and corrections together in insertion order. The originals
 * come through the (tenant_id, debt_id) index and their corrections through corrects_id.
 */
export async function listCallAttemptRows(
  sql: SqlTx,
  tenantId: string,
  debtId: string,
  after: { at: Date; id: string } | null,
  take: number,
): Promise<CallAttempt[]> {
  const values: unknown[] = [tenantId, debtId, take];
  let cursor = '';
  if (after) {
    values.push(after.at, after.id);
    cursor = 'AND (a.inserted_at, a.id) > ($4::timestamptz, $5::uuid)';
  }
  return sql.query<CallAttempt>(
    `SELECT * FROM (
       SELECT ${callAttemptColumns('a')} FROM call_attempts a
        WHERE a.tenant_id = $1::uuid AND a.debt_id = $2::uuid AND a.corrects_id IS NULL ${cursor}
       UNION ALL
       SELECT ${callAttemptColumns('a')} FROM call_attempts a
        WHERE a.tenant_id = $1::uuid
          AND a.corrects_id IN (SELECT o.id FROM call_attempts o WHERE o.tenant_id = $1::uuid AND o.debt_id = $2::uuid AND o.corrects_id IS NULL)
          ${cursor}
     ) r
     ORDER BY r."insertedAt", r.id
     LIMIT $3::int`,
    values,
  );
}

/** Sets cease_and_desist_at once; returns whether this call set it (false: it was already set). */
export async function markCeaseAndDesist(sql: SqlTx, tenantId: string, debtId: string, receivedAt: Date): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE debts SET cease_and_desist_at = $3::timestamptz
      WHERE tenant_id = $1::uuid AND id = $2::uuid AND cease_and_desist_at IS NULL
     RETURNING id`,
    [tenantId, debtId, receivedAt],
  );
  return rows.length > 0;
}

