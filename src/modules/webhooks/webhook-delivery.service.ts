import { SERVICE_NAME, SERVICE_VERSION } from '../../config';
import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { conflict, isUniqueViolation, notFound } from '../../lib/errors';
import { webhookMetrics, type WebhookAttemptOutcome } from '../../lib/metrics';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql } from '../../lib/tenancy';
import type { DeliveryView, ListDeliveriesInput } from './webhook-deliveries.schemas';
import * as repo from './webhook-delivery.repository';
import { canRedeliver, DISABLED_GONE, outcomeOf } from './webhook-delivery.rules';
import { postWebhook } from './webhook-http';
import { signatureHeader } from './webhook-signature';
import { signingSecrets } from './webhook.service';

/**
 * Delivery of the outbox (webhook_deliveries). Each delivery is worked in three short steps so no
 * transaction stays open while a receiver thinks: read the row and its endpoint, POST it, record
 * the attempt and the new state. The claim (claimed_until) keeps other dispatchers off the row in
 * between; a dispatcher that dies mid-way leaves a claim that lapses, and the row goes out again
 * (at least once: receivers deduplicate on X-DD-Delivery-Id).
 */

export const USER_AGENT = `${SERVICE_NAME}-webhooks/${SERVICE_VERSION}`;
/**
 * Deliveries in flight at once per dispatcher. A slot mostly waits on a receiver, holding no
 * database connection, so it can be well above the pool size; past 32 the loopback bench gained
 * little on two cores while the pool queue that the dial loop's activities share grew.
 */
export const DEFAULT_CONCURRENCY = 32;
/**
 * How long a claim holds: longer than the slowest delivery (15 s of HTTP plus two short
 * transactions) with room for a loaded database, so a live dispatcher never loses its claim.
 */
export const CLAIM_HOLD_SECONDS = 120;
/** While deliveries are in flight and slots are free, new rows are looked for this often. */
const REFILL_INTERVAL_MS = 250;

type Result = 'delivered' | 'retried' | 'dead' | 'cancelled' | 'gone' | 'skipped' | 'failed';

/** Results that were an attempt on the wire; a cancelled one was sent while its endpoint got disabled. */
const ATTEMPT_OUTCOME: Partial<Record<Result, WebhookAttemptOutcome>> = {
  delivered: 'delivered',
  retried: 'retry',
  dead: 'dead_letter',
  gone: 'disabled',
  cancelled: 'disabled',
};

export interface DeliverDueResult {
  claimed: number;
  delivered: number;
  retried: number;
  dead: number;
  /** Not sent: the endpoint was disabled before the delivery went out. */
  cancelled: number;
  /** Answered 410: the endpoint is now disabled. */
  gone: number;
  /** Already settled by someone else when its turn came. */
  skipped: number;
  /** An internal fault (database); the claim lapses and the delivery goes out again. */
  failed: number;
  /** Stopped at `limit` (or cancelled): more may be due now. */
  more: boolean;
  /** ISO instant of the next pending delivery, null when none. */
  nextDueAt: string | null;
  /**
   * Something is due yet nothing could be claimed: claims held by another dispatcher (or a crashed
   * one's that have not lapsed). Waiting for a notification alone would spin on it.
   */
  dueButHeld: boolean;
}

export interface DeliverDueOptions {
  /** At most this many deliveries per call. */
  limit: number;
  concurrency?: number;
  /** Called as work progresses (the activity heartbeats). */
  heartbeat?: () => void;
  /** Aborted: no new claims; deliveries in flight finish. */
  signal?: AbortSignal;
  now?: () => Date;
}

/** Headers of one attempt; the signature's t is the moment of sending (receivers check it against their clock). */
export function deliveryHeaders(d: { id: string; event: string; body: string }, secrets: { current: string; previous: string | null }, at: Date): Record<string, string> {
  const t = Math.floor(at.getTime() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'X-DD-Event': d.event,
    'X-DD-Delivery-Id': d.id,
    'X-DD-Signature': signatureHeader(secrets.current, d.body, t),
  };
  if (secrets.previous !== null) headers['X-DD-Signature-Previous'] = signatureHeader(secrets.previous, d.body, t);
  return headers;
}

/** One claimed delivery, start to end. */
export async function deliverOne(deps: AppDeps, tenantId: string, deliveryId: string, now: () => Date = () => new Date()): Promise<Result> {
  const log = deps.logger.child({ component: 'webhooks', tenant_id: tenantId, delivery_id: deliveryId });
  const loaded = await withTenantSql(deps.db, tenantId, async (sql) => {
    const row = await repo.loadDelivery(sql, deliveryId);
    if (!row || row.status !== 'pending') return { kind: 'skipped' as const };
    if (!row.enabled) {
      await repo.cancelUnsent(sql, deliveryId);
      return { kind: 'cancelled' as const };
    }
    return { kind: 'send' as const, row };
  });
  if (loaded.kind !== 'send') return loaded.kind;
  const d = loaded.row;

  const startedAt = now();
  const secrets = await signingSecrets(deps, tenantId, d.endpoint_id, startedAt);
  const res = await postWebhook(d.url, deliveryHeaders(d, secrets, startedAt), d.body, {
    allowlist: deps.config.egressAllowlist,
    // Read at call time: tests swap the resolver on a running worker's deps.
    resolve: deps.resolver,
  });
  if (res.error === 'egress_refused') log.warn({ endpoint_id: d.endpoint_id }, 'webhook delivery refused by the egress check');

  const attempt = d.attempts + 1;
  const at = now();
  const outcome = outcomeOf(attempt, res.status, at, { scale: deps.config.WEBHOOK_RETRY_SCALE });
  try {
    const result = await withTenantSql(deps.db, tenantId, async (sql): Promise<Result> => {
      const status = await repo.recordAttempt(sql, {
        tenantId,
        deliveryId,
        endpointId: d.endpoint_id,
        attempt,
        startedAt,
        durationMs: res.durationMs,
        statusCode: res.status,
        error: res.error,
        excerpt: res.excerpt,
        connectedAddress: res.connectedAddress,
        status: outcome.status,
        nextAttemptAt: outcome.nextAttemptAt,
        at,
      });
      if (status === null) return 'skipped';
      if (res.status === 410) {
        const gone = await repo.disableGoneEndpoint(sql, d.endpoint_id, DISABLED_GONE);
        if (gone.disabled) {
          await appendAuditSql(sql, tenantId, [
            {
              actorType: 'system',
              actorId: null,
              action: 'webhook.disabled',
              subjectType: 'webhook_endpoint',
              subjectId: d.endpoint_id,
              payload: { disabled_reason: DISABLED_GONE, delivery_id: deliveryId, cancelled_deliveries: gone.cancelled },
            },
          ]);
          log.info({ endpoint_id: d.endpoint_id, cancelled: gone.cancelled }, 'webhook endpoint answered 410 Gone: disabled');
        }
        return 'gone';
      }
      return status === 'delivered' ? 'delivered' : status === 'dead' ? 'dead' : status === 'pending' ? 'retried' : 'cancelled';
    });
    const measured = ATTEMPT_OUTCOME[result];
    if (measured) webhookMetrics.attempt(measured, d.created_at, at);
    return result;
  } catch (err) {
    // Another dispatcher recorded this very attempt: its record stands.
    if (isUniqueViolation(err)) return 'skipped';
    throw err;
  }
}

/**
 * Claims due deliveries of every tenant and delivers them, at most `concurrency` at a time, until
 * nothing more can be claimed or `limit` were claimed. Slots are refilled as deliveries finish, so
 * one slow receiver (up to 15 s) does not hold up the others.
 */
export async function deliverDue(deps: AppDeps, options: DeliverDueOptions): Promise<DeliverDueResult> {
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  const refillAt = Math.max(1, Math.floor(concurrency / 4));
  const counts: Record<Result, number> = { delivered: 0, retried: 0, dead: 0, cancelled: 0, gone: 0, skipped: 0, failed: 0 };
  const inFlight = new Set<Promise<void>>();
  let claimed = 0;
  let lastClaimEmpty = false;
  const log = deps.logger.child({ component: 'webhooks' });

  const start = (row: repo.ClaimedDelivery) => {
    const p: Promise<void> = deliverOne(deps, row.tenant_id, row.delivery_id, options.now)
      .then(
        (r) => {
          counts[r] += 1;
        },
        (err: unknown) => {
          counts.failed += 1;
          log.error({ err, tenant_id: row.tenant_id, delivery_id: row.delivery_id }, 'webhook delivery failed; it goes out again when its claim lapses');
        },
      )
      .finally(() => {
        inFlight.delete(p);
        options.heartbeat?.();
      });
    inFlight.add(p);
  };

  for (;;) {
    const stopping = options.signal?.aborted === true || claimed >= options.limit;
    const free = concurrency - inFlight.size;
    if (!stopping && (free >= refillAt || inFlight.size === 0)) {
      const rows = await repo.claimDue(deps.db.pool, Math.min(free, options.limit - claimed), CLAIM_HOLD_SECONDS);
      claimed += rows.length;
      lastClaimEmpty = rows.length === 0;
      rows.forEach(start);
      options.heartbeat?.();
    }
    if (inFlight.size === 0) {
      if (lastClaimEmpty || stopping) break;
      continue;
    }
    // Wait for a slot; while only slow receivers are in flight, look for new rows now and then.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([...inFlight, new Promise<void>((r) => (timer = setTimeout(r, REFILL_INTERVAL_MS)))]);
    clearTimeout(timer);
  }

  const exhausted = lastClaimEmpty;
  const { nextDueAt, now } = await repo.nextDue(deps.db.pool);
  return {
    claimed,
    ...counts,
    more: !exhausted,
    nextDueAt: nextDueAt?.toISOString() ?? null,
    dueButHeld: exhausted && nextDueAt !== null && nextDueAt.getTime() <= now.getTime(),
  };
}

// --- the API: reading the outbox of an endpoint and redelivering ---

function deliveryView(row: repo.DeliveryListRow, attempts: repo.AttemptListRow[]): DeliveryView {
  return {
    id: row.id,
    webhook_id: row.endpoint_id,
    event: row.event as DeliveryView['event'],
    event_id: row.event_id,
    occurred_at: row.occurred_at.toISOString(),
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
    delivered_at: row.delivered_at?.toISOString() ?? null,
    dead_at: row.dead_at?.toISOString() ?? null,
    attempt_history: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at.toISOString(),
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
      response_excerpt: a.response_excerpt,
      connected_address: a.connected_address,
    })),
  };
}

function withAttempts(rows: repo.DeliveryListRow[], attempts: repo.AttemptListRow[]): DeliveryView[] {
  const byDelivery = new Map<string, repo.AttemptListRow[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push(a);
    byDelivery.set(a.delivery_id, list);
  }
  return rows.map((r) => deliveryView(r, byDelivery.get(r.id) ?? []));
}

/** Newest first; 404 for an endpoint that is not the tenant's. */
export async function listEndpointDeliveries(deps: AppDeps, tenantId: string, endpointId: string, q: ListDeliveriesInput) {
  const before = q.cursor ? decodeTimestampIdCursor(q.cursor) : null;
  return withTenantSql(deps.db, tenantId, async (sql) => {
    if (!(await repo.endpointExists(sql, endpointId))) throw notFound();
    const rows = await repo.listDeliveries(sql, { endpointId, status: q.status ?? null, before, take: q.limit + 1 });
    const { page, nextCursor } = paginate(rows, q.limit, (r) => [r.created_at.toISOString(), r.id]);
    const attempts = await repo.attemptsOf(
      sql,
      page.map((r) => r.id),
    );
    return { deliveries: withAttempts(page, attempts), next_cursor: nextCursor };
  });
}

/**
 * A dead letter or a cancelled delivery of an enabled endpoint goes back to the queue, due now,
 * with its body and attempt count unchanged (the ladder continues: a dead letter gets one more
 * attempt, then is dead again). The dispatcher is woken in the same commit.
 */
export async function redeliver(deps: AppDeps, tenantId: string, actor: { type: ActorType; id: string | null }, endpointId: string, deliveryId: string) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const row = await repo.lockDeliveryOfEndpoint(sql, endpointId, deliveryId);
    if (!row) throw notFound();
    const allowed = canRedeliver(row.status, row.endpoint_enabled);
    if (!allowed.ok) throw conflict(allowed.reason);
    const requeued = await repo.requeue(sql, deliveryId);
    await appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: 'webhook.redelivered',
        subjectType: 'webhook_endpoint',
        subjectId: endpointId,
        payload: { delivery_id: deliveryId, event: row.event, event_id: row.event_id, previous_status: row.status, attempts: row.attempts },
      },
    ]);
    await repo.notifyOutbox(sql);
    const attempts = await repo.attemptsOf(sql, [deliveryId]);
    return deliveryView(requeued, attempts);
  });
}
