import { Context } from '@temporalio/activity';
import type { PoolClient } from 'pg';
import type { AppDeps } from '../src/deps';
import { OUTBOX_CHANNEL } from '../src/lib/events';
import { nextDue } from '../src/modules/webhooks/webhook-delivery.repository';
import { deliverDue, type DeliverDueResult } from '../src/modules/webhooks/webhook-delivery.service';

export interface DeliverDueInput {
  limit: number;
  concurrency?: number;
}

export interface AwaitOutboxInput {
  /** Return after this long at the latest (the workflow then looks again). */
  timeoutMs: number;
  /**
   * Do not return for a due row before this long (a notification still wakes at once): set when
   * the due rows are held by another dispatcher, so waiting on them does not spin.
   */
  minWaitMs?: number;
}

export type AwaitOutboxReason = 'notified' | 'due' | 'timeout' | 'cancelled' | 'stopping';

export interface WebhookActivityOptions {
  /**
   * Aborted when the worker begins its shutdown. An idle wait has nothing to finish, so it returns
   * at once instead of holding the worker's drain for the whole grace; the workflow's next step
   * goes to a worker that is still polling.
   */
  stopping?: AbortSignal;
}

const HEARTBEAT_MS = 5_000;

/**
 * Waits for work on a dedicated connection: LISTEN first, then read the next due time, so a row
 * committed between the caller's last claim and this LISTEN is seen (its due time is now) rather
 * than missed (its NOTIFY went out before anyone listened).
 */
async function awaitOutbox(
  deps: AppDeps,
  input: AwaitOutboxInput,
  ctx: Context | null,
  stopping: AbortSignal | undefined,
): Promise<{ reason: AwaitOutboxReason }> {
  const client: PoolClient = await deps.db.pool.connect();
  let broken: Error | undefined;
  let wake: (reason: AwaitOutboxReason) => void = () => undefined;
  const woken = new Promise<AwaitOutboxReason>((resolve) => (wake = resolve));
  const onNotification = (msg: { channel: string }) => {
    if (msg.channel === OUTBOX_CHANNEL) wake('notified');
  };
  // A checked-out client has no pool error handler: an unhandled 'error' would end the process.
  const onError = (err: Error) => {
    broken = err;
    wake('timeout');
  };
  const signal = ctx?.cancellationSignal;
  const onAbort = () => wake('cancelled');
  const onStopping = () => wake('stopping');
  let timer: NodeJS.Timeout | undefined;
  let beat: NodeJS.Timeout | undefined;
  client.on('notification', onNotification);
  client.on('error', onError);
  signal?.addEventListener('abort', onAbort);
  stopping?.addEventListener('abort', onStopping);
  try {
    if (signal?.aborted) return { reason: 'cancelled' };
    if (stopping?.aborted) return { reason: 'stopping' };
    await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    const { nextDueAt, now } = await nextDue(client);
    const started = now.getTime();
    const due = nextDueAt?.getTime() ?? Number.POSITIVE_INFINITY;
    const minWait = input.minWaitMs ?? 0;
    if (due <= started && minWait <= 0) return { reason: 'due' };
    const wakeAt = Math.min(started + input.timeoutMs, Math.max(due, started + minWait));
    const dueFirst = due <= started + input.timeoutMs;
    timer = setTimeout(() => wake(dueFirst ? 'due' : 'timeout'), Math.max(0, wakeAt - started));
    beat = setInterval(() => ctx?.heartbeat(), HEARTBEAT_MS);
    const reason = await woken;
    if (broken) throw broken;
    return { reason };
  } finally {
    clearTimeout(timer);
    clearInterval(beat);
    signal?.removeEventListener('abort', onAbort);
    stopping?.removeEventListener('abort', onStopping);
    client.removeListener('notification', onNotification);
    if (!broken) await client.query(`UNLISTEN ${OUTBOX_CHANNEL}`).catch((err: Error) => (broken = err));
    client.removeListener('error', onError);
    // A connection that failed is dropped rather than handed to the next caller still listening.
    client.release(broken ?? false);
  }
}

/** Context of the running activity; null when called outside one (tests, benches). */
function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

/**
 * The outbound webhook dispatcher's two steps. deliverDueWebhooks drains what is due (claims are
 * cross-tenant, each delivery is worked in its tenant's transaction); awaitWebhookOutbox sleeps
 * until a commit announces a new row, the next retry falls due, or the timeout.
 */
export function createWebhookActivities(deps: AppDeps, options: WebhookActivityOptions = {}) {
  return {
    async deliverDueWebhooks(input: DeliverDueInput): Promise<DeliverDueResult> {
      const ctx = activityContext();
      return deliverDue(deps, {
        limit: input.limit,
        concurrency: input.concurrency,
        heartbeat: () => ctx?.heartbeat(),
        signal: ctx?.cancellationSignal,
      });
    },
    async awaitWebhookOutbox(input: AwaitOutboxInput): Promise<{ reason: AwaitOutboxReason }> {
      return awaitOutbox(deps, input, activityContext(), options.stopping);
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
