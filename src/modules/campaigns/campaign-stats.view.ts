import type { CampaignRunStats } from '../../contracts/campaign-run';

/**
 * Decimal places of the pacing ratio and the abandonment rate in the stats view. SPEC renders
 * decimal fields as JSON strings; a fixed precision keeps the text stable between samples (the
 * run's ratio is a float that drifts in its last bits) and is what the schema's pattern states.
 */
export const PACING_DECIMALS = 4;
/** What the ratio and the rate look like rendered (the schema's patterns). */
export const RATIO_PATTERN = new RegExp(`^\\d+\\.\\d{${PACING_DECIMALS}}$`);
export const RATE_PATTERN = new RegExp(`^(0\\.\\d{${PACING_DECIMALS}}|1\\.0{${PACING_DECIMALS}})$`);

export type CampaignRunStatsView = Omit<CampaignRunStats, 'pacing'> & {
  pacing: Omit<CampaignRunStats['pacing'], 'ratio' | 'abandonment_rate'> & { ratio: string; abandonment_rate: string | null };
};

const decimal = (n: number): string => n.toFixed(PACING_DECIMALS);

/**
 * The run's counters as GET /v1/campaigns/{id}/stats and the websocket campaign.stats event show
 * them: the run answers numbers (its query is part of the workflow and stays free of formatting),
 * the API renders the two decimal fields once, here.
 */
export function campaignRunStatsView(stats: CampaignRunStats): CampaignRunStatsView {
  const { ratio, abandonment_rate, ...counts } = stats.pacing;
  return {
    ...stats,
    pacing: { ...counts, ratio: decimal(ratio), abandonment_rate: abandonment_rate === null ? null : decimal(abandonment_rate) },
  };
}
