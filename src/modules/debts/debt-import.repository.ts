import type { Pool } from 'pg';
import type { SqlTx } from '../../lib/tenancy';

/**
 * Set-based writes of a debt import: each statement handles the whole batch, passed as one jsonb
 * parameter and expanded with jsonb_to_recordset. A JSON null (an omitted field) is SQL NULL,
 * which every update below reads as "keep the stored value" (COALESCE with the stored column).
 */

/** One debt of the batch as the SQL reads it (omitted optional fields are absent keys). */
export interface DebtRow {
  i: number;
  external_ref: string;
  consumer_ref: string;
  debt_type?: string;
  account_number?: string;
  amount_cents?: number;
  currency?: string;
  state?: string;
  campaign_id?: string;
  /** Right-party verification data, already encrypted (CryptoBox); absent = keep the stored value. */
  verify_dob_ciphertext?: string;
  verify_ssn_last4_ciphertext?: string;
  verify_pin_ciphertext?: string;
}

/** The verification columns of a debt, as stored (ciphertext). */
export interface StoredVerification {
  external_ref: string;
  verify_dob_ciphertext: string | null;
  verify_ssn_last4_ciphertext: string | null;
  verify_pin_ciphertext: string | null;
}

/** One contact of the batch, already tied to its debt. */
export interface ContactRow {
  /** Position in the batch (insertion order). */
  ord: number;
  /** Index of the item in the request (consent evidence). */
  idx: number;
  debt_id: string;
  phone_e164: string;
  line_type?: string;
  timezone?: string;
  us_state?: string;
  city?: string;
  postal_code?: string;
  consumer_ref?: string;
  nyc_borough?: string | null;
  postal_state?: string | null;
  /** YYYY-MM-DD; absent = unknown (kept as stored). */
  consent_given_on?: string;
  is_primary: boolean;
  /** The item's first contact of an item naming no primary: primary when the debt has none. */
  fallback: boolean;
  /** The debt was created by this import (it has no stored contacts). */
  is_new: boolean;
}

const DEBT_RECORD = `x(i int, external_ref text, consumer_ref text, debt_type text, account_number text, amount_cents bigint,
  currency text, state text, campaign_id uuid, verify_dob_ciphertext text, verify_ssn_last4_ciphertext text, verify_pin_ciphertext text)`;

const CONTACT_RECORD = `x(ord int, idx int, debt_id uuid, phone_e164 text, line_type text, timezone text, us_state text, city text,
  postal_code text, consumer_ref text, nyc_borough text, postal_state text, is_primary boolean, fallback boolean, is_new boolean)`;

/** Serializes imports of one tenant: overlapping batches never interleave (no deadlocks, exact prior-attempt sums). */
export async function lockTenantImports(sql: SqlTx, tenantId: string): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('debts.import:' || $1::text, 0))`, [tenantId]);
}

/** The subset of `ids` that are campaigns of the tenant. */
export async function existingCampaignIds(sql: SqlTx, tenantId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql.query<{ id: string }>(`SELECT id::text FROM campaigns WHERE tenant_id = $1 AND id = ANY($2::uuid[])`, [tenantId, ids]);
  return new Set(rows.map((r) => r.id));
}

/** Creates the debts whose external_ref is new; returns the created ones. */
export async function insertNewDebts(sql: SqlTx, tenantId: string, debts: DebtRow[]) {
  return sql.query<{ id: string; external_ref: string }>(
    `INSERT INTO debts (tenant_id, external_ref, consumer_ref, debt_type, account_number, amount_cents, currency, state, campaign_id,
                        verify_dob_ciphertext, verify_ssn_last4_ciphertext, verify_pin_ciphertext)
     SELECT $2::uuid, x.external_ref, x.consumer_ref, COALESCE(x.debt_type, 'other'), x.account_number, COALESCE(x.amount_cents, 0),
            COALESCE(x.currency, 'USD'), COALESCE(x.state, 'open'), x.campaign_id,
            x.verify_dob_ciphertext, x.verify_ssn_last4_ciphertext, x.verify_pin_ciphertext
       FROM jsonb_to_recordset($1::jsonb) AS ${DEBT_RECORD}
      ORDER BY x.i
     ON CONFLICT (tenant_id, external_ref) DO NOTHING
     RETURNING id::text, external_ref`,
    [JSON.stringify(debts), tenantId],
  );
}

/**
 * The stored verification ciphertexts of the debts with these refs. A new ciphertext of an
 * unchanged value differs (random IV): the caller compares plaintexts and passes only changes, so
 * a replay leaves the row alone.
 */
export async function storedVerification(sql: SqlTx, tenantId: string, refs: string[]): Promise<StoredVerification[]> {
  if (refs.length === 0) return [];
  return sql.query<StoredVerification>(
    `SELECT external_ref, verify_dob_ciphertext, verify_ssn_last4_ciphertext, verify_pin_ciphertext
       FROM debts WHERE tenant_id = $1::uuid AND external_ref = ANY($2::text[])`,
    [tenantId, refs],
  );
}

/**
 * Corrects existing debts: a given value replaces the stored one, an omitted one keeps it. Rows
 * whose values would not change are not touched (a replay leaves updated_at alone).
 */
export async function updateExistingDebts(sql: SqlTx, tenantId: string, debts: DebtRow[]) {
  return sql.query<{ id: string; external_ref: string }>(
    `UPDATE debts AS d SET
        consumer_ref   = x.consumer_ref,
        debt_type      = COALESCE(x.debt_type, d.debt_type),
        account_number = COALESCE(x.account_number, d.account_number),
        amount_cents   = COALESCE(x.amount_cents, d.amount_cents),
        currency       = COALESCE(x.currency, d.currency),
        state          = COALESCE(x.state, d.state),
        campaign_id    = COALESCE(x.campaign_id, d.campaign_id),
        verify_dob_ciphertext       = COALESCE(x.verify_dob_ciphertext, d.verify_dob_ciphertext),
        verify_ssn_last4_ciphertext = COALESCE(x.verify_ssn_last4_ciphertext, d.verify_ssn_last4_ciphertext),
        verify_pin_ciphertext       = COALESCE(x.verify_pin_ciphertext, d.verify_pin_ciphertext)
       FROM jsonb_to_recordset($1::jsonb) AS ${DEBT_RECORD}
      WHERE d.tenant_id = $2::uuid AND d.external_ref = x.external_ref
        AND (x.consumer_ref, COALESCE(x.debt_type, d.debt_type), COALESCE(x.account_number, d.account_number),
             COALESCE(x.amount_cents, d.amount_cents), COALESCE(x.currency, d.currency), COALESCE(x.state, d.state),
             COALESCE(x.campaign_id, d.campaign_id), COALESCE(x.verify_dob_ciphertext, d.verify_dob_ciphertext),
             COALESCE(x.verify_ssn_last4_ciphertext, d.verify_ssn_last4_ciphertext), COALESCE(x.verify_pin_ciphertext, d.verify_pin_ciphertext))
            IS DISTINCT FROM (d.consumer_ref, d.debt_type, d.account_number, d.amount_cents, d.currency, d.state, d.campaign_id,
                              d.verify_dob_ciphertext, d.verify_ssn_last4_ciphertext, d.verify_pin_ciphertext)
     RETURNING d.id::text, d.external_ref`,
    [JSON.stringify(debts), tenantId],
  );
}

export async function debtIdsByRef(sql: SqlTx, tenantId: string, refs: string[]) {
  if (refs.length === 0) return [];
  return sql.query<{ id: string; external_ref: string }>(
    `SELECT id::text, external_ref FROM debts WHERE tenant_id = $1::uuid AND external_ref = ANY($2::text[])`,
    [tenantId, refs],
  );
}

/**
 * Before contacts are written: a contact named primary demotes its debt's current primary (kept
 * as an ordinary contact), so the one-primary-per-debt index holds when the new primary lands.
 */
export async function demotePrimaries(sql: SqlTx, tenantId: string, primaries: { debt_id: string; phone_e164: string }[]) {
  if (primaries.length === 0) return 0;
  const rows = await sql.query<{ id: string }>(
    `UPDATE debt_contacts AS c SET is_primary = false
       FROM jsonb_to_recordset($1::jsonb) AS x(debt_id uuid, phone_e164 text)
      WHERE c.tenant_id = $2::uuid AND c.debt_id = x.debt_id AND c.is_primary AND c.phone_e164 <> x.phone_e164
     RETURNING c.id`,
    [JSON.stringify(primaries), tenantId],
  );
  return rows.length;
}

/**
 * Upserts contacts by (debt_id, phone_e164). Data fields are additive: a given value corrects the
 * stored one, an omitted one keeps it. nyc_borough and postal_state follow postal_code whenever one is given.
 * A contact stays primary until another contact of its debt is named primary.
 */
export async function upsertContacts(sql: SqlTx, tenantId: string, contactsJson: string) {
  const rows = await sql.query<{ n: number }>(
    `WITH up AS (
       INSERT INTO debt_contacts AS c (tenant_id, debt_id, phone_e164, line_type, timezone, us_state, city, postal_code,
                                      consumer_ref, nyc_borough, postal_state, is_primary)
       SELECT $2::uuid, x.debt_id, x.phone_e164, x.line_type, x.timezone, x.us_state, x.city, x.postal_code, x.consumer_ref,
              x.nyc_borough, x.postal_state,
              x.is_primary OR (x.fallback AND (x.is_new OR NOT EXISTS (
                SELECT 1 FROM debt_contacts p WHERE p.tenant_id = $2::uuid AND p.debt_id = x.debt_id AND p.is_primary)))
         FROM jsonb_to_recordset($1::jsonb) AS ${CONTACT_RECORD}
        ORDER BY x.ord
       ON CONFLICT (debt_id, phone_e164) DO UPDATE SET
         line_type    = COALESCE(EXCLUDED.line_type, c.line_type),
         timezone     = COALESCE(EXCLUDED.timezone, c.timezone),
         us_state     = COALESCE(EXCLUDED.us_state, c.us_state),
         city         = COALESCE(EXCLUDED.city, c.city),
         postal_code  = COALESCE(EXCLUDED.postal_code, c.postal_code),
         consumer_ref = COALESCE(EXCLUDED.consumer_ref, c.consumer_ref),
         nyc_borough  = CASE WHEN EXCLUDED.postal_code IS NULL THEN c.nyc_borough ELSE EXCLUDED.nyc_borough END,
         postal_state = CASE WHEN EXCLUDED.postal_code IS NULL THEN c.postal_state ELSE EXCLUDED.postal_state END,
         is_primary   = c.is_primary OR EXCLUDED.is_primary
       WHERE (COALESCE(EXCLUDED.line_type, c.line_type), COALESCE(EXCLUDED.timezone, c.timezone),
              COALESCE(EXCLUDED.us_state, c.us_state), COALESCE(EXCLUDED.city, c.city),
              COALESCE(EXCLUDED.postal_code, c.postal_code), COALESCE(EXCLUDED.consumer_ref, c.consumer_ref),
              CASE WHEN EXCLUDED.postal_code IS NULL THEN c.nyc_borough ELSE EXCLUDED.nyc_borough END,
              CASE WHEN EXCLUDED.postal_code IS NULL THEN c.postal_state ELSE EXCLUDED.postal_state END,
              c.is_primary OR EXCLUDED.is_primary)
             IS DISTINCT FROM (c.line_type, c.timezone, c.us_state, c.city, c.postal_code, c.consumer_ref, c.nyc_borough,
                               c.postal_state, c.is_primary)
       RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [contactsJson, tenantId],
  );
  return rows[0]?.n ?? 0;
}

/**
 * A line type belongs to the number, not to one debt's contact: each number whose type this import
 * sets takes that type on every contact row of the tenant (the last contact of the batch naming
 * the number wins, as it does for its own row). Returns the other rows it changed.
 */
export async function reclassifyNumbers(sql: SqlTx, tenantId: string, contactsJson: string) {
  const rows = await sql.query<{ n: number }>(
    `WITH typed AS (
       SELECT DISTINCT ON (x.phone_e164) x.phone_e164, x.line_type
         FROM jsonb_to_recordset($1::jsonb) AS x(ord int, phone_e164 text, line_type text)
        WHERE x.line_type IS NOT NULL
        ORDER BY x.phone_e164, x.ord DESC),
     up AS (
       UPDATE debt_contacts AS c SET line_type = t.line_type
         FROM typed t
        WHERE c.tenant_id = $2::uuid AND c.phone_e164 = t.phone_e164 AND c.line_type IS DISTINCT FROM t.line_type
       RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [contactsJson, tenantId],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Prior express consent for every imported contact, voice and SMS (CONTRACT section 5). A row that
 * exists keeps its grant and its revocation (a revoked consent is never re-granted by an import);
 * only its given_on, the day the consumer gave the creditor the number, is set or corrected when
 * the import states one. Returns the consents granted and the existing ones whose date moved.
 */
export async function grantImportConsents(sql: SqlTx, tenantId: string, contactsJson: string, importId: string) {
  const rows = await sql.query<{ granted: number; dated: number }>(
    `WITH up AS (
       INSERT INTO consents AS k (tenant_id, debt_id, phone_e164, channel, source, evidence, given_on)
       SELECT $2::uuid, x.debt_id, x.phone_e164, ch.channel, 'import', jsonb_build_object('import_id', $3::text, 'index', x.idx),
              x.consent_given_on
         FROM jsonb_to_recordset($1::jsonb) AS x(ord int, idx int, debt_id uuid, phone_e164 text, consent_given_on date)
        CROSS JOIN (VALUES ('voice'), ('sms')) AS ch(channel)
        ORDER BY x.ord, ch.channel
       ON CONFLICT (debt_id, phone_e164, channel) DO UPDATE SET given_on = EXCLUDED.given_on
        WHERE EXCLUDED.given_on IS NOT NULL AND k.given_on IS DISTINCT FROM EXCLUDED.given_on
       RETURNING (xmax = 0) AS inserted)
     SELECT count(*) FILTER (WHERE inserted)::int AS granted, count(*) FILTER (WHERE NOT inserted)::int AS dated FROM up`,
    [contactsJson, tenantId, importId],
  );
  return { granted: rows[0]?.granted ?? 0, dated: rows[0]?.dated ?? 0 };
}

/**
 * prior_attempts_7d is a total over the last seven days, not a delta: only what the reports of the
 * last seven days do not already hold is added, so a replay adds nothing and a lower total never
 * removes history.
 */
export async function addPriorAttempts(sql: SqlTx, tenantId: string, reports: { debt_id: string; n: number }[]) {
  if (reports.length === 0) return 0;
  const rows = await sql.query<{ n: number }>(
    `WITH ins AS (
       INSERT INTO debt_prior_attempts (tenant_id, debt_id, attempts)
       SELECT $2::uuid, x.debt_id, x.n - COALESCE(s.total, 0)
         FROM jsonb_to_recordset($1::jsonb) AS x(debt_id uuid, n int)
         LEFT JOIN LATERAL (
           SELECT sum(p.attempts)::int AS total FROM debt_prior_attempts p
            WHERE p.tenant_id = $2::uuid AND p.debt_id = x.debt_id AND p.reported_at > now() - interval '7 days') s ON true
        WHERE x.n - COALESCE(s.total, 0) > 0
       RETURNING attempts)
     SELECT COALESCE(sum(attempts), 0)::int AS n FROM ins`,
    [JSON.stringify(reports), tenantId],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Refreshes the planner statistics of the tables an import writes once they have grown by a tenth
 * since the statistics were taken, over however many imports, or when the rows just written are a
 * tenth of what the statistics estimate for the table or for the importing tenant, once it holds
 * 100 debts (a tenant they have never seen is estimated at one row everywhere); true when it ran
 * ANALYZE. The owner-side function decides; of the tenant's rows it counts at most 100.
 */
export async function refreshImportStatistics(pool: Pool, rowsWritten: number, tenantId: string): Promise<boolean> {
  const { rows } = await pool.query<{ refreshed: boolean }>('SELECT refresh_import_statistics($1::int, $2::uuid) AS refreshed', [rowsWritten, tenantId]);
  return rows[0]?.refreshed ?? false;
}
