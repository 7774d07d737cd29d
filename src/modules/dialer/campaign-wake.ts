import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { CAMPAIGN_RUN_WAKE_SIGNAL, campaignRunWorkflowId } from '../../contracts/campaign-run';
import type { Database } from '../../lib/db';
import type { Logger } from '../../lib/logger';
import { withTenantSql } from '../../lib/tenancy';
import { runningCampaignIds } from './next-wake.repository';

export interface WakeDeps {
  db: Database;
  temporal: Client | null;
  logger: Logger;
}

/**
 * Tells campaign runs that something they may act on changed (leads, a seat, a callback): an idle
 * run ticks now instead of at its computed wake-up. Called after the change committed. Best
 * effort by design: a campaign with no open run has nothing to wake (the signal finds no
 * workflow), and a signal lost to an unreachable Temporal costs at most the run's backstop
 * (IDLE_BACKSTOP_MS), never the change itself, so no caller fails for it.
 */
export async function wakeCampaignRuns(deps: Pick<WakeDeps, 'temporal' | 'logger'>, tenantId: string, campaignIds: Iterable<string>): Promise<void> {
  const temporal = deps.temporal;
  if (!temporal) return;
  await Promise.all(
    [...new Set(campaignIds)].map((campaignId) =>
      temporal.workflow
        .getHandle(campaignRunWorkflowId(tenantId, campaignId))
        .signal(CAMPAIGN_RUN_WAKE_SIGNAL)
        .catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return;
          deps.logger.warn({ tenant_id: tenantId, campaign_id: campaignId, err: (err as Error).message }, 'campaign run not woken; its backstop will tick it');
        }),
    ),
  );
}

/** The campaign types whose loop waits for seats (the agent types the loop dials). */
const SEAT_CAMPAIGN_TYPES = ['predictive', 'progressive'] as const;

/** Wakes the tenant's running campaigns of these types (a tenant-wide change may give each work). */
export async function wakeRunningCampaignRuns(deps: WakeDeps, tenantId: string, campaignTypes: readonly string[]): Promise<void> {
  if (!deps.temporal) return;
  const ids = await withTenantSql(deps.db, tenantId, (sql) => runningCampaignIds(sql, campaignTypes)).catch((err: unknown) => {
    deps.logger.warn({ tenant_id: tenantId, err: (err as Error).message }, 'running campaigns not read; their backstop will tick them');
    return [];
  });
  await wakeCampaignRuns(deps, tenantId, ids);
}

/** A seat of the tenant may have become reachable (checked in, registered, resumed): wakes the runs that wait for seats. */
export function wakeSeatedCampaignRuns(deps: WakeDeps, tenantId: string): Promise<void> {
  return wakeRunningCampaignRuns(deps, tenantId, SEAT_CAMPAIGN_TYPES);
}
