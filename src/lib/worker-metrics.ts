import { CancelledFailure, type Context } from '@temporalio/activity';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import { dialerMetrics, workerMetrics } from './metrics';

/** The dial loop's tick activity: its schedule-to-start delay is the tick lag. */
const DIAL_TICK_ACTIVITY = 'dialTick';

/**
 * Counts every activity task this worker runs by type and outcome. The tick lag is read here
 * because only the activity's context knows when the workflow scheduled the tick.
 */
export const activityMetricsInterceptor: ActivityInterceptorsFactory = (ctx: Context) => {
  const inbound: ActivityInboundCallsInterceptor = {
    async execute(input, next) {
      const { activityType, currentAttemptScheduledTimestampMs } = ctx.info;
      const started = performance.now();
      if (activityType === DIAL_TICK_ACTIVITY) dialerMetrics.tickLag((Date.now() - currentAttemptScheduledTimestampMs) / 1000);
      try {
        const result = await next(input);
        workerMetrics.activity(activityType, 'completed', (performance.now() - started) / 1000);
        return result;
      } catch (err) {
        const cancelled = err instanceof CancelledFailure || (err as Error | null)?.name === 'AbortError';
        workerMetrics.activity(activityType, cancelled ? 'cancelled' : 'failed', (performance.now() - started) / 1000);
        throw err;
      }
    },
  };
  return { inbound };
};
