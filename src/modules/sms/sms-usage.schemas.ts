import { z } from '../../lib/openapi';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const SmsUsageQuerySchema = z.object({
  from: z.iso.datetime({ offset: true }).optional().openapi({ format: 'date-time', description: 'Inclusive start (RFC 3339); default the first instant of the current UTC month' }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ format: 'date-time', description: 'Exclusive end (RFC 3339); default the first instant of the next UTC month' }),
  campaign_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid', description: 'Only this campaign (unknown or foreign: zeros)' }),
});

export const SmsUsageSchema = z
  .object({
    from: z.string().openapi({ format: 'date-time' }),
    to: z.string().openapi({ format: 'date-time' }),
    campaign_id: z.string().nullable().openapi({ format: 'uuid' }),
    price_per_segment_usd: z.number().openapi({ description: 'The price now in force (deployment setting SMS_PRICE_PER_SEGMENT_USD); past rows keep the price they were charged at' }),
    messages: z.number().int().openapi({ description: 'Messages charged in the window (sent transitions)' }),
    segments: z.number().int(),
    cost_usd: z.number(),
    month_to_date_cost_usd: z.number().openapi({ description: 'Charged this UTC month, all campaigns: the figure sms_monthly_budget_usd caps' }),
    budget_usd: z.number().nullable().openapi({ description: 'The tenant sms_monthly_budget_usd (null: no cap)' }),
    daily: z.array(
      z.object({
        date: z.string().openapi({ format: 'date', description: 'UTC day' }),
        messages: z.number().int(),
        segments: z.number().int(),
        cost_usd: z.number(),
      }),
    ).openapi({ description: 'One entry per UTC day with charges, oldest first (days without charges are omitted)' }),
  })
  .openapi('SmsUsage');
