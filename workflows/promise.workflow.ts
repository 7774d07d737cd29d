import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { PromiseActivities } from '../activities/promise.activities';

const { breakPromiseIfPending } = proxyActivities<PromiseActivities>({
  startToCloseTimeout: '30 seconds',
  // Unlimited attempts: a database outage must delay the transition, not lose it. Refusals are
  // non-retryable failures and end the retries at once.
  retry: { maximumInterval: '1 minute' },
});

export interface PromiseDeadlineInput {
  tenantId: string;
  promiseId: string;
  /** YYYY-MM-DD, the consumer's calendar day. */
  promisedDate: string;
}

export interface PromiseDeadlineResult {
  status: string;
}

const DAY_MS = 86_400_000;
const UTC_MINUS_12_OFFSET_MS = 12 * 3_600_000;

/**
 * The instant (epoch ms) at which promisedDate has ended in every time zone: midnight after it at
 * UTC-12, the last zone to leave a day, i.e. the next day at 12:00 UTC. We do not know the
 * consumer's zone, and breaking a promise while it is still the promised day there would be wrong.
 */
export function promiseDeadlineMs(promisedDate: string): number {
  const start = /^\d{4}-\d{2}-\d{2}$/.test(promisedDate) ? Date.parse(`${promisedDate}T00:00:00Z`) : NaN;
  // A plain error would fail the workflow task and retry it forever; a bad input never heals.
  if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== promisedDate) {
    throw ApplicationFailure.nonRetryable(`promisedDate is not a YYYY-MM-DD calendar date: ${promisedDate}`, 'InvalidPromisedDate');
  }
  return start + DAY_MS + UTC_MINUS_12_OFFSET_MS;
}

/**
 * One per promise (id promiseWorkflowId). A promise still pending once its date is over everywhere
 * becomes broken, which releases the debt back to in_collection when it was its last pending one.
 */
export async function promiseDeadlineWorkflow(input: PromiseDeadlineInput): Promise<PromiseDeadlineResult> {
  // Date.now() is the workflow clock here (replay-safe): a past deadline adds no timer.
  const delay = promiseDeadlineMs(input.promisedDate) - Date.now();
  if (delay > 0) await sleep(delay);
  return breakPromiseIfPending({ tenantId: input.tenantId, promiseId: input.promiseId });
}
