import { z } from 'zod';
import { isE164 } from '../../lib/phone';
import type { SmsAdapterName } from '../sms/adapters/adapter';

export type ReceiptStatus = 'delivered' | 'undelivered' | 'failed';

export interface ParsedReceipt {
  kind: 'receipt';
  providerMessageId: string;
  status: ReceiptStatus;
  errorCode: string | null;
  occurredAt: Date;
}

export interface ParsedInbound {
  kind: 'inbound';
  providerMessageId: string;
  from: string;
  to: string;
  text: string;
  occurredAt: Date;
}

export type ParsedWebhook = ParsedReceipt | ParsedInbound;

const PROVIDER_ID_MAX = 200;
const ERROR_CODE_MAX = 100;
/** Far above any concatenated SMS; a provider that sends more is not sending a text message. */
const TEXT_MAX = 10_000;

const providerId = z.string().trim().min(1).max(PROVIDER_ID_MAX);
const timestamp = z.string().optional().nullable();

// Loose objects: providers add fields over time, and an extra field must never lose a receipt.
const GenericReceipt = z.object({
  message_id: providerId,
  status: z.enum(['delivered', 'undelivered', 'failed']),
  error_code: z.union([z.string(), z.number()]).optional().nullable(),
  timestamp,
});
const GenericInbound = z.object({ message_id: providerId, from: z.string(), to: z.string(), text: z.string().max(TEXT_MAX), timestamp });

const CarrierEnvelope = z.object({
  data: z.object({
    id: z.string().optional(),
    event_type: z.string(),
    occurred_at: timestamp,
    payload: z.object({
      id: providerId,
      from: z.object({ phone_number: z.string() }).optional().nullable(),
      to: z.array(z.object({ phone_number: z.string(), status: z.string().optional().nullable() })).optional().nullable(),
      text: z.string().max(TEXT_MAX).optional().nullable(),
      errors: z.array(z.object({ code: z.union([z.string(), z.number()]).optional().nullable() })).optional().nullable(),
    }),
  }),
});

/** carrier_a's per-recipient final states; the ones not listed (queued, sending, sent) are not final and carry nothing to record. */
const CARRIER_STATUS: Record<string, ReceiptStatus> = {
  delivered: 'delivered',
  delivery_failed: 'failed',
  sending_failed: 'failed',
  delivery_unconfirmed: 'undelivered',
  expired: 'undelivered',
};

/** A timestamp the provider sent, or the arrival time when it sent none or nothing readable. */
function when(value: string | null | undefined, now: Date): Date {
  if (!value) return now;
  const t = new Date(value);
  return Number.isNaN(t.getTime()) ? now : t;
}

const code = (v: string | number | null | undefined): string | null => (v === null || v === undefined || v === '' ? null : String(v).slice(0, ERROR_CODE_MAX));

/**
 * A verified body as a receipt or an inbound message (CONTRACT section 4); null when it is neither
 * what this endpoint takes nor well-formed. Never throws: the caller answers `ignored`.
 */
export function parseWebhook(adapter: SmsAdapterName, endpoint: 'dlr' | 'inbound', raw: string, now: Date = new Date()): ParsedWebhook | null {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  if (adapter === 'carrier_a') return parseCarrier(endpoint, json, now);
  if (endpoint === 'dlr') {
    const r = GenericReceipt.safeParse(json);
    if (!r.success) return null;
    return { kind: 'receipt', providerMessageId: r.data.message_id, status: r.data.status, errorCode: code(r.data.error_code), occurredAt: when(r.data.timestamp, now) };
  }
  const r = GenericInbound.safeParse(json);
  if (!r.success || !isE164(r.data.from) || !isE164(r.data.to)) return null;
  return { kind: 'inbound', providerMessageId: r.data.message_id, from: r.data.from, to: r.data.to, text: r.data.text, occurredAt: when(r.data.timestamp, now) };
}

function parseCarrier(endpoint: 'dlr' | 'inbound', json: unknown, now: Date): ParsedWebhook | null {
  const r = CarrierEnvelope.safeParse(json);
  if (!r.success) return null;
  const { event_type: type, occurred_at: at, payload } = r.data.data;
  if (endpoint === 'dlr' && type === 'message.finalized') {
    const status = CARRIER_STATUS[payload.to?.[0]?.status ?? ''];
    if (!status) return null;
    return { kind: 'receipt', providerMessageId: payload.id, status, errorCode: code(payload.errors?.[0]?.code), occurredAt: when(at, now) };
  }
  if (endpoint === 'inbound' && type === 'message.received') {
    const from = payload.from?.phone_number;
    const to = payload.to?.[0]?.phone_number;
    if (!from || !to || !isE164(from) || !isE164(to)) return null;
    return { kind: 'inbound', providerMessageId: payload.id, from, to, text: payload.text ?? '', occurredAt: when(at, now) };
  }
  return null;
}
