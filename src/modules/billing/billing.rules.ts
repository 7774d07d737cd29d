/**
 * Billing arithmetic. Money is held as bigint micro-dollars (1 USD = 1_000_000): the ledgers store up
 * to 6 decimals (SMS unit prices) and a JS float cannot hold 0.1 exactly. Amounts are rendered as
 * decimal strings with 4 places, rounded half up.
 */

export const BILLING_SCHEMES = ['prepaid', 'postpaid', 'subscription'] as const;
export type BillingScheme = (typeof BILLING_SCHEMES)[number];
export const ENFORCEMENT_MODES = ['graduated', 'hard_block'] as const;
export type EnforcementMode = (typeof ENFORCEMENT_MODES)[number];
export const LEDGER_KINDS = ['cash', 'grant', 'deposit', 'hold', 'hold_release'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];
export const MAX_ALERT_THRESHOLDS = 10;

/**
 * Price constants of the invoice (SPEC Limits fixes the floor, the DID pack and the voice-AI minimum;
 * the rest are this deployment's list prices). One place, so a price change is one edit.
 */
export const PRICES = {
  /** Per billed seat per calendar month. */
  seatUsd: '99.0000',
  /** Billed seats never go below this (SPEC: 3-seat billing floor). */
  seatFloor: 3,
  /** Per answered minute of an outbound call, each call billed per started minute. */
  houseMinuteUsd: '0.0150',
  /**
   * Per answered minute of an inbound call (a consumer calling a DID), each call billed per started
   * minute: the carrier's inbound leg costs less than an outbound termination.
   */
  inboundMinuteUsd: '0.0100',
  /**
   * Monthly rent of a house DID (a number the platform provisions for the tenant), for every month it
   * is held at some moment; customer DIDs are the tenant's own numbers and pay no rent.
   */
  didRentUsd: '1.0000',
  /** DIDs of each origin (house, customer) included before packs are billed. */
  didIncluded: 10,
  didPackSize: 10,
  didPackUsd: '25.0000',
  /** Voice-AI line while the add-on is enabled: max(metered, this). */
  voiceAiMinimumUsd: '200.0000',
  /**
   * Per WAV file a completed recording export delivered: the archive carries uncompressed audio
   * (about 1 MB a minute), stored and served from the object store.
   */
  wavFileUsd: '0.0100',
} as const;

const MICROS = 1_000_000n;
const USD_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

/** A decimal string (PostgreSQL numeric text) as micro-dollars; more than 6 places is rounded half up. */
export function toMicros(text: string): bigint {
  const m = USD_RE.exec(text.trim());
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = (m[3] ?? '').padEnd(7, '0');
  let micros = BigInt(m[2]!) * MICROS + BigInt(frac.slice(0, 6));
  if (Number(frac[6]) >= 5) micros += 1n;
  return m[1] ? -micros : micros;
}

/** Micro-dollars as a decimal string with 4 places, half up (away from zero). */
export function usd(micros: bigint): string {
  const neg = micros < 0n;
  const abs = neg ? -micros : micros;
  const tenThousandths = (abs + 50n) / 100n;
  const text = `${tenThousandths / 10_000n}.${String(tenThousandths % 10_000n).padStart(4, '0')}`;
  return neg && tenThousandths !== 0n ? `-${text}` : text;
}

/**
 * An operator's amount: a JSON number or a decimal string, at most 4 decimal places, not negative,
 * at most 10 integer digits (numeric(14,4)). null when it breaks a rule.
 */
export function parseAmountInput(value: string | number): bigint | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  const m = /^(\d{1,10})(?:\.(\d{1,4}))?$/.exec(text);
  if (!m) return null;
  return BigInt(m[1]!) * MICROS + BigInt((m[2] ?? '').padEnd(6, '0'));
}

/** used_pct: spent / limit as a percentage floored to one decimal; null when the limit is not positive. */
export function usedPct(spent: bigint, limit: bigint | null): number | null {
  if (limit === null || limit <= 0n) return null;
  const tenths = (spent * 1000n) / limit;
  return Number(tenths) / 10;
}

/** The thresholds spend has reached: spent ≥ limit × pct / 100, compared exactly. */
export function reachedThresholds(thresholds: readonly number[], spent: bigint, limit: bigint | null): number[] {
  if (limit === null || limit <= 0n) return [];
  return [...new Set(thresholds)].filter((pct) => spent * 100n >= limit * BigInt(pct)).sort((a, b) => a - b);
}

export interface Funds {
  cash: bigint;
  grant: bigint;
  deposit: bigint;
  creditLimit: bigint;
  openHolds: bigint;
}

/** SPEC: available = cash + grant + credit limit − open holds (the deposit is security, not spendable). */
export const availableOf = (f: Funds): bigint => f.cash + f.grant + f.creditLimit - f.openHolds;

/**
 * Prepaid spend draws the grant first, then cash (cash may go negative: the credit limit covers it).
 * Other schemes are invoiced, so their credits stay as credited.
 */
export function drawDown(scheme: BillingScheme, credited: { cash: bigint; grant: bigint }, spent: bigint): { cash: bigint; grant: bigint } {
  if (scheme !== 'prepaid') return credited;
  const fromGrant = spent < credited.grant ? spent : credited.grant;
  return { grant: credited.grant - fromGrant, cash: credited.cash - (spent - fromGrant) };
}

export type BlockReason = 'cap_reached' | 'funds_exhausted';

/**
 * Why the tenant is blocked, if it is: the period cap is reached (both modes: graduated warns at the
 * lower thresholds and suspends at 100 %), or a prepaid tenant has nothing available.
 */
export function blockReason(scheme: BillingScheme | null, spent: bigint, cap: bigint | null, available: bigint): BlockReason | null {
  if (scheme === null) return null;
  if (cap !== null && cap > 0n && spent >= cap) return 'cap_reached';
  if (scheme === 'prepaid' && available <= 0n) return 'funds_exhausted';
  return null;
}

/** 'YYYY-MM' of a UTC instant. */
export const periodKeyOf = (at: Date): string => at.toISOString().slice(0, 7);

/** The calendar month 'YYYY-MM' as a half-open UTC window; null when the text is not a month. */
export function monthWindow(month: string): { from: Date; to: Date } | null {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]) - 1;
  return { from: new Date(Date.UTC(y, mo, 1)), to: new Date(Date.UTC(y, mo + 1, 1)) };
}

/** SPEC's line item kinds, in its order. */
export const LINE_KINDS = ['seats', 'voice_ai', 'house_minutes', 'inbound_minutes', 'did_rent', 'did_overage', 'did_overage_customer', 'sms', 'wav_surcharge'] as const;
export type LineKind = (typeof LINE_KINDS)[number];

export interface LineItem {
  kind: LineKind;
  description: string;
  quantity: number;
  unit: string;
  unit_price_usd: string | null;
  amount_usd: string;
}

export interface Usage {
  seats: number;
  houseDids: number;
  customerDids: number;
  answeredMinutes: number;
  /** Answered minutes of inbound calls (per started minute). */
  inboundMinutes: number;
  smsSegments: number;
  smsCost: bigint;
  aiCalls: number;
  aiCost: bigint;
  voiceAiEnabled: boolean;
  /** WAV files delivered by recording exports completed in the period. */
  wavFiles: number;
}

const line = (kind: LineKind, description: string, quantity: number, unit: string, unitPrice: string | null, amount: bigint): LineItem => ({
  kind,
  description,
  quantity,
  unit,
  unit_price_usd: unitPrice,
  amount_usd: usd(amount),
});

export const billedSeats = (seats: number): number => Math.max(PRICES.seatFloor, seats);

/** DID packs beyond the included allowance: ceil(over / pack size). */
export function didPacks(count: number): number {
  const over = Math.max(0, count - PRICES.didIncluded);
  return Math.ceil(over / PRICES.didPackSize);
}

/**
 * The line items of a period. `minimums` applies the monthly voice-AI minimum (the invoice does; the
 * summary of an arbitrary window shows the metered cost).
 */
export function lineItems(u: Usage, minimums: boolean): LineItem[] {
  const seats = billedSeats(u.seats);
  const housePacks = didPacks(u.houseDids);
  const customerPacks = didPacks(u.customerDids);
  const minimum = toMicros(PRICES.voiceAiMinimumUsd);
  const aiAmount = !u.voiceAiEnabled ? 0n : minimums && u.aiCost < minimum ? minimum : u.aiCost;
  return [
    line('seats', `${seats} billed seats (tenant seats ${u.seats}, floor ${PRICES.seatFloor})`, seats, 'seat_month', PRICES.seatUsd, BigInt(seats) * toMicros(PRICES.seatUsd)),
    line(
      'voice_ai',
      u.voiceAiEnabled ? (minimums ? `metered ${usd(u.aiCost)} USD, monthly minimum ${PRICES.voiceAiMinimumUsd} USD` : `metered ${usd(u.aiCost)} USD`) : 'voice-AI add-on off',
      u.aiCalls,
      'ai_call',
      null,
      aiAmount,
    ),
    line('house_minutes', 'answered outbound minutes, per started minute', u.answeredMinutes, 'minute', PRICES.houseMinuteUsd, BigInt(u.answeredMinutes) * toMicros(PRICES.houseMinuteUsd)),
    line('inbound_minutes', 'answered inbound minutes, per started minute', u.inboundMinutes, 'minute', PRICES.inboundMinuteUsd, BigInt(u.inboundMinutes) * toMicros(PRICES.inboundMinuteUsd)),
    line('did_rent', `${u.houseDids} house DIDs held in the period`, u.houseDids, 'did_month', PRICES.didRentUsd, BigInt(u.houseDids) * toMicros(PRICES.didRentUsd)),
    line('did_overage', `${u.houseDids} house DIDs held in the period, ${PRICES.didIncluded} included`, housePacks, 'pack_of_10', PRICES.didPackUsd, BigInt(housePacks) * toMicros(PRICES.didPackUsd)),
    line('did_overage_customer', `${u.customerDids} customer DIDs held in the period, ${PRICES.didIncluded} included`, customerPacks, 'pack_of_10', PRICES.didPackUsd, BigInt(customerPacks) * toMicros(PRICES.didPackUsd)),
    line('sms', 'charged SMS segments (ledger prices)', u.smsSegments, 'segment', null, u.smsCost),
    line('wav_surcharge', 'WAV files delivered by completed recording exports', u.wavFiles, 'wav_file', PRICES.wavFileUsd, BigInt(u.wavFiles) * toMicros(PRICES.wavFileUsd)),
  ];
}

export const subtotalOf = (items: LineItem[]): bigint => items.reduce((s, i) => s + toMicros(i.amount_usd), 0n);
