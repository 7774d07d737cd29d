import { CancellationScope, continueAsNew, defineSignal, isCancellation, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhook.activities';

/**
 * Ids are per task queue: every deployment (and every test worker) sharing a Temporal namespace
 * runs its own dispatcher against its own database; one id for all would hand one service's
 * outbox to whichever worker started first.
 */
export const WEBHOOK_DISPATCHER_ID = 'webhook-dispatcher';
export function webhookDispatcherWorkflowId(taskQueue: string): string {
  return `${WEBHOOK_DISPATCHER_ID}:${taskQueue}`;
}

/** Deliveries claimed per deliverDueWebhooks call (the loop then comes back to the workflow). */
export const DELIVERIES_PER_CALL = 500;
/** The longest a waiting dispatcher sleeps without looking (a lost notification costs at most this). */
export const IDLE_TIMEOUT_MS = 60_000;
/** Waiting on rows another dispatcher holds: look again this often. */
export const HELD_RECHECK_MS = 1_000;
/** Continue-as-new after this many loops (or sooner when Temporal suggests it): bounded history. */
export const LOOPS_PER_RUN = 200;

const { deliverDueWebhooks } = proxyActivities<WebhookActivities>({
  // A call ends after DELIVERIES_PER_CALL deliveries, 32 at a time, each at most 15 s of HTTP;
  // a worker that dies is noticed by the missing heartbeat long before this.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

const { awaitWebhookOutbox } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: `${IDLE_TIMEOUT_MS + 30_000} milliseconds`,
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/** Look now (a worker started, an operator nudged it): ends the current wait. */
export const webhookWakeSignal = defineSignal('wake');

export interface WebhookDispatcherInput {
  deliveriesPerCall?: number;
  concurrency?: number;
  idleTimeoutMs?: number;
  loopsPerRun?: number;
}

/**
 * The outbox's one long-lived dispatcher: deliver what is due until nothing is, then wait on the
 * webhook_outbox channel (every commit that adds a delivery notifies it) or the next retry's due
 * time, and start over. Commit-to-delivery latency is a notification and two activity hops, with
 * no polling. Both steps retry forever: an outage delays deliveries, it never ends the loop.
 */
export async function webhookDispatcherWorkflow(input: WebhookDispatcherInput = {}): Promise<void> {
  const limit = input.deliveriesPerCall ?? DELIVERIES_PER_CALL;
  let waiting: CancellationScope | null = null;
  let woken = false;
  setHandler(webhookWakeSignal, () => {
    woken = true;
    waiting?.cancel();
  });

  for (let loops = 1; ; loops += 1) {
    const result = await deliverDueWebhooks({ limit, concurrency: input.concurrency });
    if (!result.more && !woken) {
      const scope = new CancellationScope();
      waiting = scope;
      try {
        await scope.run(() => awaitWebhookOutbox({ timeoutMs: input.idleTimeoutMs ?? IDLE_TIMEOUT_MS, minWaitMs: result.dueButHeld ? HELD_RECHECK_MS : 0 }));
      } catch (err) {
        if (!isCancellation(err)) throw err;
      } finally {
        waiting = null;
      }
    }
    woken = false;
    if (loops >= (input.loopsPerRun ?? LOOPS_PER_RUN) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof webhookDispatcherWorkflow>(input);
    }
  }
}
