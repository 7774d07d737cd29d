import { z } from '../../lib/openapi';

const decimal = (description: string) => z.string().openapi({ description, example: '0.2400' });

export const AiUsageQuery = z
  .object({
    from: z.string().datetime({ offset: true }).optional().openapi({ description: 'Window start, inclusive (default: the first instant of the current UTC month)' }),
    to: z.string().datetime({ offset: true }).optional().openapi({ description: 'Window end, exclusive (default: the first instant of the next UTC month)' }),
    campaign_id: z.string().uuid().optional().openapi({ description: 'Only calls of this campaign' }),
    format: z.enum(['json', 'csv']).optional().openapi({ description: 'csv answers text/csv; without it an Accept header preferring text/csv does' }),
  })
  .strict();
export type AiUsageQueryT = z.infer<typeof AiUsageQuery>;

const Figures = {
  calls: z.number().int().openapi({ description: 'Metered calls (one usage row per answered AI call)' }),
  billable_seconds: z.number().int().openapi({ description: 'Sum of each call\'s answer-to-end seconds, each capped at its ceiling' }),
  billable_minutes: z.number().int().openapi({ description: 'Sum of each call\'s started minutes (ceil(seconds / 60) per call)' }),
};

export const AiUsageDay = z
  .object({ date: z.string().openapi({ example: '2026-11-24' }), ...Figures, cost_usd: decimal('Sum of the day\'s rows\' own costs') })
  .openapi('AiUsageDay');

export const AiUsageSchema = z
  .object({
    from: z.string().openapi({ format: 'date-time' }),
    to: z.string().openapi({ format: 'date-time' }),
    campaign_id: z.string().uuid().nullable(),
    minute_rate_usd: decimal('The rate new calls are metered at now (each row keeps the rate it was metered under)'),
    ...Figures,
    estimated_cost_usd: decimal('Sum of each metered row\'s own cost_usd'),
    daily: z.array(AiUsageDay).openapi({ description: 'One entry per UTC date the window touches, oldest first, dates without calls included' }),
  })
  .openapi('AiUsage');
export type AiUsage = z.infer<typeof AiUsageSchema>;
