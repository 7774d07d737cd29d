import type { SqlTx } from '../../lib/tenancy';
import type { SmsAdapterName } from '../sms/adapters/adapter';

/** The columns of an sms_providers row a send needs. */
export interface StoredProvider {
  id: string;
  adapter: SmsAdapterName;
  region: string;
  base_url: string | null;
  api_key_ciphertext: string | null;
}

/**
 * The tenant's oldest active provider, else its account's oldest active account-wide one. The
 * account filter repeats what RLS enforces, so a policy change cannot widen it. Prepared: it runs
 * on every send.
 */
export async function oldestActiveProvider(sql: SqlTx, tenantId: string): Promise<StoredProvider | null> {
  const rows = await sql.query<StoredProvider>(
    `SELECT p.id, p.adapter, p.region, p.base_url, p.api_key_ciphertext
       FROM sms_providers p
      WHERE p.status = 'active'
        AND (p.tenant_id = $1::uuid
             OR (p.tenant_id IS NULL AND p.account_id = (SELECT t.account_id FROM tenants t WHERE t.id = $1::uuid)))
      ORDER BY (p.tenant_id IS NULL), p.created_at, p.id
      LIMIT 1`,
    [tenantId],
    'sms_provider_resolve',
  );
  return rows[0] ?? null;
}
