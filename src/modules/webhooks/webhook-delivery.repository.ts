import type { Pool } from 'pg';
import { OUTBOX_CHANNEL } from '../../lib/events';
import type { SqlTx } from '../../lib/tenancy';
import type { DeliveryStatus } from './webhook-delivery.rules';

/** SQL of the outbox: the cross-tenant claim (pool, SECURITY DEFINER) and the per-tenant work (SqlTx). */

export interface ClaimedDelivery {
  delivery_id: string;
  tenant_id: string;
}

/** Claims due deliveries of every tenant for holdSeconds; a crashed dispatcher's claims lapse. */
export async function claimDue(pool: Pool, limit: number, holdSeconds: number): Promise<ClaimedDelivery[]> {
  const res = await pool.query<ClaimedDelivery>({ name: 'webhook_claim_due', text: 'SELECT delivery_id, tenant_id FROM webhook_claim_due($1, $2)', values: [limit, holdSeconds] });
  return res.rows;
}

/** When the next pending delivery falls due (null: none), with the database clock it compares to. */
export async function nextDue(pool: Pick<Pool, 'query'>): Promise<{ nextDueAt: Date | null; now: Date }> {
  const res = await pool.query<{ next_due: Date | null; now: Date }>('SELECT webhook_next_due() AS next_due, clock_timestamp() AS now');
  return { nextDueAt: res.rows[0]!.next_due, now: res.rows[0]!.now };
}

export interface DeliveryToSend {
  id: string;
  endpoint_id: string;
  event: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  url: string;
  enabled: boolean;
  created_at: Date;
}

export async function loadDelivery(sql: SqlTx, id: string): Promise<DeliveryToSend | null> {
  const rows = await sql.query<DeliveryToSend>(
    `SELECT d.id, d.endpoint_id, d.event, d.body, d.status, d.attempts, e.url, e.enabled, d.created_at
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.id = $1`,
    [id],
    'webhook_delivery_load',
  );
  return rows[0] ?? null;
}

/** A delivery whose endpoint was disabled before it went out: nothing is sent. */
export async function cancelUnsent(sql: SqlTx, id: string): Promise<boolean> {
  const rows = await sql.query(`UPDATE webhook_deliveries SET status = 'cancelled', claimed_until = NULL WHERE id = $1 AND status = 'pending' RETURNING id`, [id]);
  return rows.length > 0;
}

export interface AttemptRecord {
  tenantId: string;
  deliveryId: string;
  endpointId: string;
  /** attempts + 1 of the row as it was read before sending. */
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
  connectedAddress: string | null;
  /** The delivery's state after this attempt, as the ladder says. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  at: Date;
}

/**
 * The attempt row and the delivery's new state in one statement. UNIQUE (delivery_id, attempt)
 * makes a second dispatcher whose claim overlapped this one (a lapsed claim) fail here instead of
 * recording the same attempt twice. A delivery cancelled while in flight (its endpoint was
 * disabled) stays cancelled unless the receiver took it: then it was delivered. Returns the status
 * the row ended in.
 */
export async function recordAttempt(sql: SqlTx, a: AttemptRecord): Promise<DeliveryStatus | null> {
  const rows = await sql.query<{ status: DeliveryStatus }>(
    `WITH attempt AS (
       INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, endpoint_id, attempt, started_at, duration_ms, status_code, error, response_excerpt, connected_address)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     )
     UPDATE webhook_deliveries d
        SET attempts = $4, last_status_code = $7, last_error = $8, claimed_until = NULL,
            status = CASE WHEN d.status = 'pending' OR $11::text = 'delivered' THEN $11::text ELSE d.status END,
            next_attempt_at = CASE WHEN d.status = 'pending' AND $11::text = 'pending' THEN $12::timestamptz ELSE d.next_attempt_at END,
            delivered_at = CASE WHEN $11::text = 'delivered' THEN $13::timestamptz ELSE d.delivered_at END,
            dead_at = CASE WHEN d.status = 'pending' AND $11::text = 'dead' THEN $13::timestamptz ELSE d.dead_at END
      WHERE d.id = $2 AND d.attempts = $4 - 1
      RETURNING d.status`,
    [a.tenantId, a.deliveryId, a.endpointId, a.attempt, a.startedAt, a.durationMs, a.statusCode, a.error, a.excerpt, a.connectedAddress, a.status, a.nextAttemptAt, a.at],
    'webhook_attempt_record',
  );
  return rows[0]?.status ?? null;
}

/** 410 Gone: the endpoint is off and nothing queued for it goes out. Returns how many deliveries were cancelled. */
export async function disableGoneEndpoint(sql: SqlTx, endpointId: string, reason: string): Promise<{ disabled: boolean; cancelled: number }> {
  const disabled = await sql.query(`UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2 WHERE id = $1 AND enabled RETURNING id`, [endpointId, reason]);
  const cancelled = await sql.query(
    `UPDATE webhook_deliveries SET status = 'cancelled', claimed_until = NULL WHERE endpoint_id = $1 AND status = 'pending' RETURNING id`,
    [endpointId],
  );
  return { disabled: disabled.length > 0, cancelled: cancelled.length };
}

// --- reading and redelivery (the API) ---

export interface DeliveryListRow {
  id: string;
  endpoint_id: string;
  event: string;
  event_id: string;
  occurred_at: Date;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  dead_at: Date | null;
}

const LIST_COLUMNS = `d.id, d.endpoint_id, d.event, d.event_id, d.occurred_at, d.status, d.attempts, d.next_attempt_at, d.last_status_code,
  d.last_error, d.created_at, d.delivered_at, d.dead_at`;

export async function endpointExists(sql: SqlTx, endpointId: string): Promise<{ enabled: boolean } | null> {
  const rows = await sql.query<{ enabled: boolean }>('SELECT enabled FROM webhook_endpoints WHERE id = $1', [endpointId]);
  return rows[0] ?? null;
}

/** Newest first by (created_at, id); `before` is the last row of the previous page. */
export async function listDeliveries(
  sql: SqlTx,
  q: { endpointId: string; status: DeliveryStatus | null; before: { at: Date; id: string } | null; take: number },
): Promise<DeliveryListRow[]> {
  return sql.query<DeliveryListRow>(
    `SELECT ${LIST_COLUMNS} FROM webhook_deliveries d
      WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.status = $2)
        AND ($3::timestamptz IS NULL OR (d.created_at, d.id) < ($3::timestamptz, $4::uuid))
      ORDER BY d.created_at DESC, d.id DESC LIMIT $5`,
    [q.endpointId, q.status, q.before?.at ?? null, q.before?.id ?? null, q.take],
  );
}

export interface AttemptListRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  connected_address: string | null;
}

export async function attemptsOf(sql: SqlTx, deliveryIds: string[]): Promise<AttemptListRow[]> {
  if (deliveryIds.length === 0) return [];
  return sql.query<AttemptListRow>(
    `SELECT delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt, connected_address
       FROM webhook_delivery_attempts WHERE delivery_id = ANY ($1::uuid[]) ORDER BY delivery_id, attempt`,
    [deliveryIds],
  );
}

export async function lockDeliveryOfEndpoint(sql: SqlTx, endpointId: string, deliveryId: string): Promise<(DeliveryListRow & { endpoint_enabled: boolean }) | null> {
  const rows = await sql.query<DeliveryListRow & { endpoint_enabled: boolean }>(
    `SELECT ${LIST_COLUMNS}, e.enabled AS endpoint_enabled
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.id = $1 AND d.endpoint_id = $2 FOR UPDATE OF d`,
    [deliveryId, endpointId],
  );
  return rows[0] ?? null;
}

/** Back in the queue, due now, its attempt count kept (the ladder continues from where it stopped). */
export async function requeue(sql: SqlTx, deliveryId: string): Promise<DeliveryListRow> {
  const rows = await sql.query<DeliveryListRow>(
    `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = clock_timestamp(), claimed_until = NULL, dead_at = NULL
      WHERE d.id = $1 RETURNING ${LIST_COLUMNS}`,
    [deliveryId],
  );
  return rows[0]!;
}

/** Wakes the dispatcher when the transaction commits. */
export async function notifyOutbox(sql: SqlTx): Promise<void> {
  await sql.query('SELECT pg_notify($1, $2)', [OUTBOX_CHANNEL, '']);
}
