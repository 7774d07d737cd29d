import { z } from '../../lib/openapi';
import { BILLING_SCHEMES, ENFORCEMENT_MODES, LEDGER_KINDS, LINE_KINDS, MAX_ALERT_THRESHOLDS } from './billing.rules';

const decimal = (description: string) => z.string().openapi({ description, example: '12.3400' });

export const BalanceSchema = z
  .object({
    cash_usd: decimal('Cash credited; for prepaid, less metered usage beyond the grant (may go negative within the credit limit)'),
    grant_usd: decimal('Promotional grant left; prepaid usage draws it first'),
    deposit_usd: decimal('Security deposit held; not spendable'),
    credit_limit_usd: decimal('Credit the operator extends'),
    available_usd: decimal('cash + grant + credit limit − open holds'),
  })
  .openapi('BillingBalance');

export const CapSchema = z
  .object({
    scheme: z.enum(BILLING_SCHEMES),
    period_key: z.string().openapi({ example: '2026-11', description: 'The UTC calendar month, YYYY-MM' }),
    limit_usd: decimal('The period spend cap'),
    spent_usd: decimal(
      'Metered spend of the period: SMS and voice-AI as charged, answered outbound and inbound minutes and exported WAV files at their rates (seats and DIDs are invoiced, not metered)',
    ),
    used_pct: z.number().nullable().openapi({ description: 'spent / limit in percent, floored to one decimal; null when the limit is not positive' }),
  })
  .openapi('BillingCap');

export const BillingAccountSchema = z
  .object({
    tenant_id: z.string().uuid(),
    currency: z.literal('USD'),
    billing_enabled: z.boolean(),
    scheme: z.enum(BILLING_SCHEMES).nullable(),
    plan_status: z.string().openapi({ description: 'active, trialing, past_due, suspended or cancelled' }),
    enforcement_mode: z.enum(ENFORCEMENT_MODES).nullable(),
    alert_thresholds: z.array(z.number().int()),
    balance: BalanceSchema.nullable(),
    cap: CapSchema.nullable(),
  })
  .openapi('BillingAccount');

const alertFields = {
  threshold_pct: z.number().int().openapi({ description: 'The alert threshold, a percentage of the cap' }),
  scheme: z.enum(BILLING_SCHEMES),
  enforcement_mode: z.enum(ENFORCEMENT_MODES).nullable(),
  spent_usd: decimal('Period spend when the threshold was crossed'),
  limit_usd: decimal('The cap in force then'),
  crossed_at: z.string().openapi({ format: 'date-time' }),
};

export const BillingAlertSchema = z.object(alertFields).openapi('BillingAlert');

export const BillingAlertsSchema = z
  .object({
    tenant_id: z.string().uuid(),
    period_key: z.string().nullable(),
    alerts: z.array(BillingAlertSchema),
  })
  .openapi('BillingAlerts');

export const LineItemSchema = z
  .object({
    kind: z.enum(LINE_KINDS),
    description: z.string(),
    quantity: z.number().int().openapi({ description: 'Billed units (seats, AI calls, minutes, DIDs, DID packs, segments, WAV files)' }),
    unit: z.string().openapi({ description: 'seat_month, ai_call, minute, did_month, pack_of_10, segment, wav_file' }),
    unit_price_usd: decimal('Price per unit; null where rows carry their own prices (sms, voice_ai)').nullable(),
    amount_usd: decimal('The line amount'),
  })
  .openapi('BillingLineItem');

const Period = z.object({ from: z.string().openapi({ format: 'date-time' }), to: z.string().openapi({ format: 'date-time' }) });

export const SummaryQuery = z
  .object({
    from: z.string().datetime({ offset: true }).optional().openapi({ description: 'Window start, inclusive (default: to − 30 days)' }),
    to: z.string().datetime({ offset: true }).optional().openapi({ description: 'Window end, exclusive (default: now)' }),
    format: z.enum(['json', 'csv']).optional().openapi({ description: 'csv answers text/csv; without it an Accept header preferring text/csv does' }),
  })
  .strict();

export const SummarySchema = z
  .object({
    tenant_id: z.string().uuid(),
    tier: z.string(),
    tier_label: z.string(),
    voice_ai_enabled: z.boolean(),
    currency: z.literal('USD'),
    period: Period,
    line_items: z.array(LineItemSchema),
    subtotal_usd: decimal('Sum of the line amounts'),
  })
  .openapi('BillingSummary');

export const InvoiceQuery = z.object({ month: z.string().openapi({ pattern: '^[0-9]{4}-(?:0[1-9]|1[0-2])$', example: '2026-10', description: 'The calendar month, YYYY-MM (UTC)' }) }).strict();

export const InvoiceSchema = z
  .object({
    tenant_id: z.string().uuid(),
    month: z.string(),
    period: Period,
    status: z.enum(['open', 'closed']).openapi({ description: 'closed once the month has ended; an open month still accrues' }),
    currency: z.literal('USD'),
    tier: z.string(),
    voice_ai_enabled: z.boolean(),
    line_items: z.array(LineItemSchema),
    subtotal_usd: decimal('Sum of the line amounts'),
    tax_usd: z.null().openapi({ description: 'Always null: tax location fields exist on the tenant but no rates are configured' }),
    total_usd: decimal('subtotal (no tax computed)'),
  })
  .openapi('BillingInvoice');

const amount = z.union([z.string(), z.number()]).openapi({ description: 'Decimal USD as a string or number, at most 4 decimal places, not negative', example: '100.00' });

export const AdminPlanBody = z
  .object({
    scheme: z.enum(BILLING_SCHEMES).nullable().openapi({ description: 'null turns billing off' }),
    cap_usd: amount.nullable().optional().openapi({ description: 'Monthly spend cap; null = none' }),
    credit_limit_usd: amount.optional(),
  })
  .strict();
export type AdminPlanInput = z.infer<typeof AdminPlanBody>;

export const AdminCreditBody = z
  .object({
    kind: z.string().openapi({ enum: [...LEDGER_KINDS], description: 'cash, grant, deposit, hold or hold_release' }),
    amount_usd: amount,
    note: z.string().max(500).optional(),
  })
  .strict();
export type AdminCreditInput = z.infer<typeof AdminCreditBody>;

export const AdminEnforcementBody = z.object({ mode: z.string().nullable().openapi({ enum: [...ENFORCEMENT_MODES, null], description: 'graduated, hard_block, or null (reads as hard_block)' }) }).strict();
export const AdminThresholdsBody = z
  .object({
    thresholds: z
      .array(z.number().int().openapi({ minimum: 1, maximum: 100 }))
      .openapi({ maxItems: MAX_ALERT_THRESHOLDS, uniqueItems: true, description: `Distinct integer percentages 1..100, at most ${MAX_ALERT_THRESHOLDS}` }),
  })
  .strict();

export const AdminAccountEnvelope = z.object({ account: BillingAccountSchema }).openapi('AdminBillingAccount');
export const AdminCreditResult = z
  .object({
    entry: z.object({ id: z.string().uuid(), kind: z.string(), amount_usd: decimal('As credited'), note: z.string().nullable(), created_at: z.string().openapi({ format: 'date-time' }) }),
    account: BillingAccountSchema,
  })
  .openapi('AdminBillingCredit');
