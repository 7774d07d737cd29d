import { EVENT_CATALOG } from '../../lib/events';
import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { EXCERPT_BYTES } from './webhook-http';

const dateTime = z.string().openapi({ format: 'date-time' });
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const pathUuid = (name: string) =>
  z
    .string()
    .regex(UUID_RE)
    .openapi({ param: { name, in: 'path' }, format: 'uuid', example: '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10' });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'cancelled'] as const;

export const WebhookIdParam = z.object({ id: pathUuid('id') });
export const DeliveryParams = z.object({ id: pathUuid('id'), delivery_id: pathUuid('delivery_id') });

export const ListDeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional().openapi({ description: 'Only deliveries in this status' }),
  limit: limitParam(100, 1000),
  cursor: cursorParam,
});

export const DeliveryAttemptSchema = z
  .object({
    attempt: z.number().int().openapi({ description: '1 for the first try, then one more per retry (a redelivery continues the count)' }),
    started_at: dateTime,
    duration_ms: z.number().int(),
    status_code: z.number().int().nullable().openapi({ description: "The receiver's HTTP status; null when no answer came (see error)" }),
    error: z.string().nullable().openapi({
      description:
        'Why no usable answer came: `egress_refused` (the URL or the address connected to failed the egress check at delivery time: nothing was sent), `dns_error`, `connect_timeout` (5 s), `timeout` (15 s in all), or the network error; null when the receiver answered',
      example: null,
    }),
    response_excerpt: z.string().nullable().openapi({ description: `The first ${EXCERPT_BYTES} bytes of the response body as UTF-8 (the body is read up to 64 KiB); null when no answer came` }),
    connected_address: z.string().nullable().openapi({ description: 'The IP address the request was actually sent to' }),
  })
  .openapi('WebhookDeliveryAttempt');

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ format: 'uuid', description: 'The X-DD-Delivery-Id header of every attempt of this delivery' }),
    webhook_id: z.string().openapi({ format: 'uuid' }),
    event: z.enum(EVENT_CATALOG),
    event_id: z.string().openapi({ description: 'Id of the announced row (unique per endpoint): the event_id of the envelope' }),
    occurred_at: dateTime.openapi({ description: 'When the fact happened (the envelope field; unchanged by retries and redelivery)' }),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description:
        'pending (queued; next_attempt_at says when), delivered (a 2xx came back), dead (the retry ladder ran out: a dead letter), cancelled (the endpoint answered 410 Gone or was disabled before the delivery went out)',
    }),
    attempts: z.number().int().openapi({ description: 'Attempts made so far' }),
    next_attempt_at: dateTime.nullable().openapi({ description: 'When a pending delivery is tried next; null in any other status' }),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: dateTime,
    delivered_at: dateTime.nullable(),
    dead_at: dateTime.nullable(),
    attempt_history: z.array(DeliveryAttemptSchema).openapi({ description: 'Every attempt, oldest first' }),
  })
  .openapi('WebhookDelivery');

export const DeliveryList = z.object({ deliveries: z.array(DeliverySchema), next_cursor: z.string().nullable() }).openapi('WebhookDeliveryList');
export const DeliveryEnvelope = z.object({ delivery: DeliverySchema }).openapi('WebhookDeliveryEnvelope');

export type DeliveryView = z.infer<typeof DeliverySchema>;
export type ListDeliveriesInput = z.infer<typeof ListDeliveriesQuery>;
