import type { SqlTx } from './tenancy';

/** The v1 event catalog (SPEC "Events"): closed, six names. */
export const EVENT_CATALOG = ['call.ended', 'call.answered', 'promise.recorded', 'sms.received', 'sms.optout', 'recording.available'] as const;
export type EventName = (typeof EVENT_CATALOG)[number];

/**
 * Live-floor event names beyond the catalog (SPEC leaves the floor's other names open): they reach
 * the tenant's sockets only, never a webhook endpoint, so the closed catalog stays six names.
 */
export const LIVE_ONLY_EVENTS = ['billing.threshold_crossed'] as const;
export type LiveOnlyEventName = (typeof LIVE_ONLY_EVENTS)[number];

/** PostgreSQL channels: the dispatcher wakes on the first, every API process fans the second out to its sockets. */
export const OUTBOX_CHANNEL = 'webhook_outbox';
export const LIVE_CHANNEL = 'live_events';
/** NOTIFY payloads are limited to 8000 bytes; a larger event reaches sockets without its data. */
const LIVE_PAYLOAD_MAX = 7900;

export interface DomainEvent {
  event: EventName;
  /** Id of the announced row (SPEC catalog): unique per endpoint, the idempotency key of receivers. */
  eventId: string;
  /** When the fact happened. */
  occurredAt: Date;
  /** Public projection of the resource, the same shape as its own GET. */
  data: unknown;
  /**
   * What the live floor receives instead of `data`, when the two audiences differ: webhooks go to
   * the tenant's own systems, while the floor reaches every socket of the tenant (agents
   * included), so SMS events are masked there. Absent: the floor gets `data`.
   */
  liveData?: unknown;
}

/** The envelope exactly as it is sent, serialized once. */
export function envelopeOf(tenantId: string, e: DomainEvent): string {
  return JSON.stringify({ event: e.event, event_id: e.eventId, occurred_at: e.occurredAt.toISOString(), tenant_id: tenantId, data: e.data });
}

/**
 * Announces a fact inside the transaction that persisted it: one outbox row per enabled endpoint
 * subscribed to the event (the same serialized envelope for each; a replayed event_id adds
 * nothing), a wake-up for the dispatcher, and the live-floor notification. NOTIFY is delivered at
 * commit, so a rolled-back fact announces nothing.
 */
export async function emitEvent(sql: SqlTx, tenantId: string, e: DomainEvent): Promise<void> {
  const body = envelopeOf(tenantId, e);
  const inserted = await sql.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event, event_id, occurred_at, body)
     SELECT w.tenant_id, w.id, $1, $2, $3, $4 FROM webhook_endpoints w WHERE w.enabled AND $1 = ANY (w.events)
     ON CONFLICT (endpoint_id, event_id) DO NOTHING
     RETURNING id`,
    [e.event, e.eventId, e.occurredAt, body],
  );
  if (inserted.length) await sql.query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL]);
  const liveData = e.liveData === undefined ? e.data : e.liveData;
  await notifyLive(sql, tenantId, e.event, e.eventId, e.occurredAt, liveData);
}

export interface LiveOnlyEvent {
  event: LiveOnlyEventName;
  eventId: string;
  occurredAt: Date;
  data: unknown;
}

/**
 * Announces a fact on the live floor only, inside the transaction that persisted it (delivered at
 * commit, so a rolled-back fact announces nothing). No webhook outbox row: the name is not in the
 * catalog endpoints subscribe to.
 */
export async function emitLiveEvent(sql: SqlTx, tenantId: string, e: LiveOnlyEvent): Promise<void> {
  await notifyLive(sql, tenantId, e.event, e.eventId, e.occurredAt, e.data);
}

async function notifyLive(sql: SqlTx, tenantId: string, event: string, eventId: string, occurredAt: Date, data: unknown): Promise<void> {
  const frame = (d: unknown) => JSON.stringify({ tenant_id: tenantId, event, event_id: eventId, occurred_at: occurredAt.toISOString(), data: d });
  const live = frame(data);
  await sql.query(`SELECT pg_notify($1, $2)`, [LIVE_CHANNEL, Buffer.byteLength(live) <= LIVE_PAYLOAD_MAX ? live : frame(null)]);
}
