import { z } from '../../lib/openapi';
import { PROMISE_CURRENCIES, PROMISE_STATUSES } from './promise.rules';

const uuid = z.string().openapi({ format: 'uuid' });
const dateTime = z.string().openapi({ format: 'date-time' });

/** A promise to pay as the API shows it (CONTRACT section 8: exactly these fields). */
export const PromiseSchema = z
  .object({
    id: uuid,
    debt_id: uuid,
    call_attempt_id: uuid.openapi({
      description: 'The CDR row that recorded the promise_to_pay disposition (a correction row; its corrects_id names the call)',
    }),
    amount_cents: z.number().int().openapi({ description: 'Promised amount in the minor unit of currency' }),
    currency: z.enum(PROMISE_CURRENCIES),
    promised_date: z.string().openapi({ format: 'date', description: 'The day the debtor promised to pay (YYYY-MM-DD)' }),
    note: z.string().nullable(),
    status: z.enum(PROMISE_STATUSES),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .openapi('Promise');

export type PromiseView = z.infer<typeof PromiseSchema>;

/** A promises row as the repository reads it: bigint and date as text, so no time zone touches them. */
export interface PromiseRow {
  id: string;
  debt_id: string;
  call_attempt_id: string;
  amount_cents: string;
  currency: string;
  promised_date: string;
  note: string | null;
  status: string;
  created_at: Date;
  updated_at: Date;
}

export function promiseView(r: PromiseRow): PromiseView {
  return {
    id: r.id,
    debt_id: r.debt_id,
    call_attempt_id: r.call_attempt_id,
    amount_cents: Number(r.amount_cents),
    currency: r.currency as PromiseView['currency'],
    promised_date: r.promised_date,
    note: r.note,
    status: r.status as PromiseView['status'],
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
