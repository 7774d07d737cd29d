import type { Did } from '../../../prisma/generated/client';
import type { SqlTx } from '../../lib/tenancy';
import type { DidSettings } from '../dids/did.rules';

/** Rows shaped like Prisma's Did, so the tenant API's view renders them. */
const DID_COLUMNS = `id, tenant_id AS "tenantId", e164, npa, us_state AS "usState", attestation, status, origin, labels, notes,
  created_at AS "createdAt", updated_at AS "updatedAt", retired_at AS "retiredAt", verification_status AS "verificationStatus",
  verification_method AS "verificationMethod", verification_code_hash AS "verificationCodeHash", verification_attempts AS "verificationAttempts",
  verification_expires_at AS "verificationExpiresAt", verification_sent_at AS "verificationSentAt", verification_sends AS "verificationSends",
  verification_sends_since AS "verificationSendsSince"`;

/**
 * Active house-origin DIDs, in one statement. A number the tenant already holds (any origin, any
 * status) is skipped by ON CONFLICT on the per-tenant unique e164, concurrent calls included; only
 * the rows this call added are answered.
 */
export async function insertHouseDids(sql: SqlTx, tenantId: string, settings: readonly DidSettings[]): Promise<Did[]> {
  return sql.query<Did>(
    `INSERT INTO dids (tenant_id, e164, npa, us_state, attestation, status, origin, labels, notes)
       SELECT $1::uuid, x.e164, x.npa, x.us_state, x.attestation, 'active', 'house', x.labels, NULL
         FROM jsonb_to_recordset($2::jsonb) AS x(e164 text, npa text, us_state text, attestation text, labels text[])
       ON CONFLICT (tenant_id, e164) DO NOTHING
       RETURNING ${DID_COLUMNS}`,
    [tenantId, JSON.stringify(settings.map((s) => ({ e164: s.e164, npa: s.npa, us_state: s.us_state, attestation: s.attestation, labels: s.labels })))],
  );
}

export async function didsByE164(sql: SqlTx, e164s: string[]): Promise<Did[]> {
  return sql.query<Did>(`SELECT ${DID_COLUMNS} FROM dids WHERE e164 = ANY ($1::text[]) ORDER BY e164`, [e164s]);
}
