import type { SqlTx } from '../../lib/tenancy';

/** The tenant's abandoned-call identification (tenants.abandon_seller_name, abandon_seller_phone). */
export async function selectSellerIdentity(sql: SqlTx): Promise<{ name: string | null; phone: string | null }> {
  const [row] = await sql.query<{ name: string | null; phone: string | null }>(
    'SELECT abandon_seller_name AS name, abandon_seller_phone AS phone FROM tenants WHERE id = app_tenant_id()',
  );
  return row ?? { name: null, phone: null };
}

/** The tenant's stored artificial-voice disclosure (47 CFR 64.1200(b)), or null. */
export async function selectArtificialVoiceDisclosure(sql: SqlTx): Promise<string | null> {
  const [row] = await sql.query<{ text: string }>('SELECT text FROM artificial_voice_disclosures WHERE tenant_id = app_tenant_id()');
  return row?.text ?? null;
}
