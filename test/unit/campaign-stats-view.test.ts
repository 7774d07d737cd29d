import { campaignRunStatsView, RATE_PATTERN, RATIO_PATTERN } from '../../src/modules/campaigns/campaign-stats.view';
import type { CampaignRunStats } from '../../src/contracts/campaign-run';

const run = (pacing: Partial<CampaignRunStats['pacing']>): CampaignRunStats => ({
  dialed: 12,
  blocked: 3,
  finished: 9,
  reaped: 1,
  in_flight: 3,
  idle: 'no_agent_capacity',
  pacing: { ratio: 1, abandoned: 0, connected: 0, abandonment_rate: null, tokens: null, ...pacing },
});

describe('campaign run stats view', () => {
  it('renders the ratio and the abandonment rate as decimal strings with four places, the counters unchanged', () => {
    const view = campaignRunStatsView(run({ ratio: 1.0404 * 1.02, abandoned: 7, connected: 193, abandonment_rate: 7 / 200, tokens: 4 }));
    expect(view).toEqual({
      dialed: 12,
      blocked: 3,
      finished: 9,
      reaped: 1,
      in_flight: 3,
      idle: 'no_agent_capacity',
      pacing: { ratio: '1.0612', abandoned: 7, connected: 193, abandonment_rate: '0.0350', tokens: 4 },
    });
  });

  it('keeps a rate without human-answered calls null and renders the bounds', () => {
    expect(campaignRunStatsView(run({})).pacing).toMatchObject({ ratio: '1.0000', abandonment_rate: null });
    expect(campaignRunStatsView(run({ ratio: 3, abandonment_rate: 1 })).pacing).toMatchObject({ ratio: '3.0000', abandonment_rate: '1.0000' });
    expect(campaignRunStatsView(run({ ratio: 0.5, abandonment_rate: 0 })).pacing).toMatchObject({ ratio: '0.5000', abandonment_rate: '0.0000' });
  });

  it('publishes patterns that the rendered values match and numbers do not', () => {
    for (const ratio of [1, 1.23456789, 12.5]) expect(campaignRunStatsView(run({ ratio })).pacing.ratio).toMatch(RATIO_PATTERN);
    for (const rate of [0, 0.00004, 0.5, 0.99996, 1]) expect(campaignRunStatsView(run({ abandonment_rate: rate })).pacing.abandonment_rate).toMatch(RATE_PATTERN);
    expect('1').not.toMatch(RATIO_PATTERN);
    expect('1.5').not.toMatch(RATE_PATTERN);
    expect('0.12345').not.toMatch(RATE_PATTERN);
  });
});
