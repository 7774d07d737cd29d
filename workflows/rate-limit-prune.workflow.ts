import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { RateLimitPruneActivities, RateLimitPruneInput, RateLimitPruneNowSignal } from '../src/contracts/rate-limit-prune';

/** Continue-as-new after this many passes (or sooner when Temporal suggests it): bounded history. */
export const PRUNE_PASSES_PER_RUN = 500;
/** A pass stops after this many full batches and goes on at the next one (bounds one pass's history). */
export const MAX_PRUNE_BATCHES_PER_PASS = 50;

const { pruneExpiredRateLimits } = proxyActivities<RateLimitPruneActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', backoffCoefficient: 2 },
});

export const rateLimitPruneNowSignal = defineSignal('prune' satisfies RateLimitPruneNowSignal);

/**
 * Deletes expired rate_limits windows. Every budget key is a new row (an attacker rotating emails
 * writes one per guess), and the limiter itself never deletes; without this loop the table grows
 * without bound.
 */
export async function rateLimitPruneWorkflow(input: RateLimitPruneInput): Promise<void> {
  let woken = false;
  setHandler(rateLimitPruneNowSignal, () => {
    woken = true;
  });
  for (let passes = 1; ; passes += 1) {
    for (let batch = 0; batch < MAX_PRUNE_BATCHES_PER_PASS; batch += 1) {
      const result = await pruneExpiredRateLimits();
      if (!result.more) break;
    }
    await condition(() => woken, input.intervalMs);
    woken = false;
    if (passes >= (input.passesPerRun ?? PRUNE_PASSES_PER_RUN) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof rateLimitPruneWorkflow>(input);
    }
  }
}
