import type { Database } from '../../lib/db';
import { readAsTenant, type SqlTx } from '../../lib/tenancy';
import type { TenantRecord } from './tenant.views';

// Aliases match the Prisma model's field names so both paths share one view.
const TENANT_COLUMNS = `
  id, account_id AS "accountId", name, status, retention_months AS "retentionMonths", seats, tier,
  voice_ai_enabled AS "voiceAiEnabled", ai_monthly_budget_usd AS "aiMonthlyBudgetUsd",
  ai_max_call_seconds AS "aiMaxCallSeconds", sms_monthly_budget_usd AS "smsMonthlyBudgetUsd",
  human_initiated_enabled AS "humanInitiatedEnabled", max_cps AS "maxCps",
  max_concurrent_channels AS "maxConcurrentChannels", abandon_seller_name AS "abandonSellerName",
  abandon_seller_phone AS "abandonSellerPhone", tax_country AS "taxCountry", tax_region AS "taxRegion",
  tax_postal_code AS "taxPostalCode", agent_wrap_up_seconds AS "agentWrapUpSeconds", plan_status AS "planStatus",
  suspended_at AS "suspendedAt", created_at AS "createdAt",
  updated_at AS "updatedAt"`;

/** The tenant row, read on nearly every request (GET /v1/me): plain SQL, one statement. */
export async function findTenantById(db: Database, tenantId: string): Promise<TenantRecord | null> {
  const rows = await readAsTenant<TenantRecord>(db, tenantId, `SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = current_setting('app.tenant_id')::uuid`);
  return rows[0] ?? null;
}

/** The tenant row, locked until the transaction ends (null: no such tenant). */
export async function lockTenantRow(sql: SqlTx, tenantId: string): Promise<TenantRecord | null> {
  const rows = await sql.query<TenantRecord>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1::uuid FOR UPDATE`, [tenantId]);
  return rows[0] ?? null;
}

export async function tenantExists(sql: SqlTx, tenantId: string): Promise<boolean> {
  const [tenant] = await sql.query<{ id: string }>('SELECT id FROM tenants WHERE id = $1::uuid', [tenantId]);
  return tenant !== undefined;
}

export async function updateRetentionMonths(sql: SqlTx, tenantId: string, months: number): Promise<TenantRecord> {
  const rows = await sql.query<TenantRecord>(`UPDATE tenants SET retention_months = $2::int WHERE id = $1::uuid RETURNING ${TENANT_COLUMNS}`, [
    tenantId,
    months,
  ]);
  return rows[0]!;
}

/** A dashboard user's role and status (null: not a user of the session tenant). */
export async function findUserRole(sql: SqlTx, userId: string): Promise<{ role: string; status: string } | null> {
  const rows = await sql.query<{ role: string; status: string }>('SELECT role, status FROM users WHERE id = $1::uuid', [userId]);
  return rows[0] ?? null;
}
