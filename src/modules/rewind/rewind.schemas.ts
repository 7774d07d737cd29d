import { z } from '../../lib/openapi';

const filterFields = {
  dispositions: z.array(z.string().min(1).max(64)).max(50).optional().openapi({ description: 'Match the debt’s latest disposition (the final state of its latest attempt)' }),
  max_attempts: z.number().int().min(0).max(10_000).optional().openapi({ description: 'At most this many original (placed) attempts' }),
  last_attempt_older_than_days: z.number().int().min(0).max(3650).optional().openapi({ description: 'The latest attempt is older than this many days (debts never attempted match)' }),
  amd_verdicts: z.unknown().optional().openapi({ not: {}, description: 'Reserved (SPEC): present with any value is 422 unprocessable' }),
};

export const RewindFilterBody = z.strictObject(filterFields).openapi('RewindFilter');

export const RewindBody = z
  .strictObject({
    ...filterFields,
    keep_scheduled_callbacks: z.boolean().default(true).openapi({ description: 'false cancels the campaign’s pending callbacks of the rewound debts' }),
  })
  .openapi('Rewind');

/** Query form of the preview: the same filters, dispositions comma-separated. */
export const RewindPreviewQuery = z.object({
  dispositions: z.string().optional().openapi({ description: 'Comma-separated' }),
  max_attempts: z.coerce.number().int().min(0).max(10_000).optional().openapi({ type: 'integer', minimum: 0, maximum: 10_000 }),
  last_attempt_older_than_days: z.coerce.number().int().min(0).max(3650).optional().openapi({ type: 'integer', minimum: 0, maximum: 3650 }),
  amd_verdicts: z.string().optional().openapi({ not: {}, description: 'Reserved (SPEC): present with any value is 422 unprocessable' }),
});

export const RewindPreviewResponse = z
  .object({
    matching: z.number().int(),
    excluded_by_compliance: z.number().int().openapi({ description: 'Of the matching debts, how many the compliance engine would refuse right now (informational)' }),
    debt_ids: z.array(z.string().uuid()).openapi({ description: 'The matching debts (at most 1000)' }),
  })
  .openapi('RewindPreview');

export const RewindResponse = z.object({ requeued: z.number().int(), callbacks_cancelled: z.number().int() }).openapi('RewindResult');

export interface RewindFilter {
  dispositions?: string[];
  max_attempts?: number;
  last_attempt_older_than_days?: number;
  amd_verdicts?: unknown;
}
