import { z } from '../../lib/openapi';
import { cursorParam, limitParam } from '../../lib/pagination';
import { PROMISE_CURRENCIES, PROMISE_RESOLUTIONS, PROMISE_STATUSES } from './promise.rules';
import { PromiseSchema } from './promise.views';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Longest promise note, in characters. */
export const MAX_PROMISE_NOTE = 2000;

/**
 * The `promise` object of a disposition. Strict: an unknown key is 400 and nothing is appended.
 * The date window (future, at most 90 days out) is a semantic rule checked by the service (422).
 */
export const PromiseInputSchema = z
  .strictObject({
    amount_cents: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .openapi({ description: 'Integer above 0, in the minor unit of currency' }),
    currency: z.enum(PROMISE_CURRENCIES),
    promised_date: z.iso.date().openapi({
      format: 'date',
      description: 'YYYY-MM-DD, after today (UTC) and at most 90 days out; outside that window is 422 unprocessable',
    }),
    note: z.string().max(MAX_PROMISE_NOTE).nullable().optional().openapi({
      description: `Up to ${MAX_PROMISE_NOTE} characters; separate from the disposition note`,
    }),
  })
  .openapi('PromiseInput');

export type PromiseInput = z.infer<typeof PromiseInputSchema>;

export const ListPromisesQuery = z.object({
  status: z.enum(PROMISE_STATUSES).optional().openapi({ description: 'Only promises in this status (any other value is 400)' }),
  debt_id: z.string().regex(UUID_RE, 'must be a uuid').optional().openapi({ format: 'uuid', description: 'Only promises of this debt' }),
  limit: limitParam(100, 1000),
  cursor: cursorParam,
});

export type ListPromisesFilters = z.infer<typeof ListPromisesQuery>;

export const PromiseList = z
  .object({ promises: z.array(PromiseSchema), next_cursor: z.string().nullable() })
  .openapi('PromiseList');

export const PatchPromiseBody = z
  .strictObject({
    status: z.enum(PROMISE_RESOLUTIONS).openapi({ description: 'kept, broken or cancelled (pending or anything else is 400)' }),
  })
  .openapi('PromisePatch');

export const PromiseEnvelope = z.object({ promise: PromiseSchema });
