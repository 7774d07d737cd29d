/** The rate_limits prune loop's interface (workflow, activities, worker start). */

/** Per task queue, like the other periodic loops: every deployment sharing a namespace prunes from its own worker. */
export function rateLimitPruneWorkflowId(taskQueue: string): string {
  return `rate-limit-prune:${taskQueue}`;
}

/** Ends the current wait (a worker restart, a test). */
export const RATE_LIMIT_PRUNE_NOW_SIGNAL = 'prune';
export type RateLimitPruneNowSignal = typeof RATE_LIMIT_PRUNE_NOW_SIGNAL;

export interface RateLimitPruneInput {
  intervalMs: number;
  passesPerRun?: number;
}

export interface RateLimitPruneResult {
  deleted: number;
  /** A full batch: more expired rows may be left. */
  more: boolean;
}

export interface RateLimitPruneActivities {
  pruneExpiredRateLimits(): Promise<RateLimitPruneResult>;
}
