import type { SqlTx } from '../../lib/tenancy';
import type { ListPromisesFilters } from './promise.schemas';
import type { PromiseRow } from './promise.views';

const PROMISE_COLUMNS = `p.id, p.debt_id, p.call_attempt_id, p.amount_cents::text AS amount_cents, p.currency,
  p.promised_date::text AS promised_date, p.note, p.status, p.created_at, p.updated_at`;

export interface NewPromise {
  debtId: string;
  callAttemptId: string;
  amountCents: number;
  currency: string;
  promisedDate: string;
  note: string | null;
}

export async function insertPromise(sql: SqlTx, tenantId: string, input: NewPromise): Promise<PromiseRow> {
  const rows = await sql.query<PromiseRow>(
    `INSERT INTO promises AS p (tenant_id, debt_id, call_attempt_id, amount_cents, currency, promised_date, note)
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4::bigint, $5, $6::date, $7)
     RETURNING ${PROMISE_COLUMNS}`,
    [tenantId, input.debtId, input.callAttemptId, input.amountCents, input.currency, input.promisedDate, input.note],
  );
  return rows[0]!;
}

/** One page, newest first ((created_at, id) descending), one statement. */
export async function listPromiseRows(
  sql: SqlTx,
  tenantId: string,
  filters: Omit<ListPromisesFilters, 'limit' | 'cursor'>,
  before: { at: Date; id: string } | null,
  take: number,
): Promise<PromiseRow[]> {
  const values: unknown[] = [tenantId];
  const param = (value: unknown, cast: string) => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const where = ['p.tenant_id = $1::uuid'];
  if (filters.status !== undefined) where.push(`p.status = ${param(filters.status, 'text')}`);
  if (filters.debt_id !== undefined) where.push(`p.debt_id = ${param(filters.debt_id, 'uuid')}`);
  if (before) where.push(`(p.created_at, p.id) < (${param(before.at, 'timestamptz')}, ${param(before.id, 'uuid')})`);
  return sql.query<PromiseRow>(
    `SELECT ${PROMISE_COLUMNS} FROM promises p
      WHERE ${where.join(' AND ')}
      ORDER BY p.created_at DESC, p.id DESC
      LIMIT ${param(take, 'int')}`,
    values,
  );
}

/**
 * Locks the debt of a promise (so concurrent resolutions of one debt's promises serialize) and
 * returns the promise's current status with the debt's state; null when the promise is unknown.
 */
export async function lockPromiseAndDebt(
  sql: SqlTx,
  tenantId: string,
  promiseId: string,
): Promise<{ debt_id: string; status: string; debt_state: string } | null> {
  const rows = await sql.query<{ debt_id: string; status: string; debt_state: string }>(
    `SELECT p.debt_id, p.status, d.state AS debt_state
       FROM promises p JOIN debts d ON d.tenant_id = p.tenant_id AND d.id = p.debt_id
      WHERE p.tenant_id = $1::uuid AND p.id = $2::uuid
      FOR NO KEY UPDATE OF d, p`,
    [tenantId, promiseId],
  );
  return rows[0] ?? null;
}

export async function findPromiseStatus(sql: SqlTx, tenantId: string, promiseId: string): Promise<string | null> {
  const rows = await sql.query<{ status: string }>(`SELECT status FROM promises WHERE tenant_id = $1::uuid AND id = $2::uuid`, [tenantId, promiseId]);
  return rows[0]?.status ?? null;
}

/** Moves a pending promise to `status`; null when it was not pending. */
export async function resolvePromise(sql: SqlTx, tenantId: string, promiseId: string, status: string): Promise<PromiseRow | null> {
  const rows = await sql.query<PromiseRow>(
    `UPDATE promises AS p SET status = $3
      WHERE p.tenant_id = $1::uuid AND p.id = $2::uuid AND p.status = 'pending'
     RETURNING ${PROMISE_COLUMNS}`,
    [tenantId, promiseId, status],
  );
  return rows[0] ?? null;
}

export async function countPendingPromises(sql: SqlTx, tenantId: string, debtId: string): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM promises WHERE tenant_id = $1::uuid AND debt_id = $2::uuid AND status = 'pending'`,
    [tenantId, debtId],
  );
  return rows[0]?.n ?? 0;
}

/** Locks a debt row and returns its state (null: unknown debt). */
export async function lockDebtState(sql: SqlTx, tenantId: string, debtId: string): Promise<string | null> {
  const rows = await sql.query<{ state: string }>(
    `SELECT state FROM debts WHERE tenant_id = $1::uuid AND id = $2::uuid FOR NO KEY UPDATE`,
    [tenantId, debtId],
  );
  return rows[0]?.state ?? null;
}

export async function setDebtState(sql: SqlTx, tenantId: string, debtId: string, state: string): Promise<void> {
  await sql.query(`UPDATE debts SET state = $3 WHERE tenant_id = $1::uuid AND id = $2::uuid`, [tenantId, debtId, state]);
}
