import type { SqlTx } from '../../lib/tenancy';

export interface CampaignRow {
  id: string;
  campaign_type: string;
  ai_voice: boolean;
}

/** What the preflight needs of the campaign to profile its attempts (null: no such campaign of the tenant). */
export async function selectCampaignProfile(sql: SqlTx, campaignId: string): Promise<CampaignRow | null> {
  const [campaign] = await sql.query<CampaignRow>('SELECT id, campaign_type, ai_voice FROM campaigns WHERE id = $1', [campaignId]);
  return campaign ?? null;
}
