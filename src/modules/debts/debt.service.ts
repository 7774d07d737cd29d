import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { notFound, unprocessable } from '../../lib/errors';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql } from '../../lib/tenancy';
import { callAttemptView } from '../cdr/call-attempt.views';
import {
  debtExists,
  findDebtDetailRow,
  listCallAttemptRows,
  listContactRows,
  listDebtRows,
  markCeaseAndDesist,
} from './debt.repository';
import type { ListDebtsFilters } from './debt.schemas';
import { debtDetailView, debtSummaryView } from './debt.views';

type Actor = { type: ActorType; id: string | null };

/** How far in the future a received_at may be (clock skew between the caller and us). */
const RECEIVED_AT_SKEW_MS = 5 * 60_000;

export async function listDebts(deps: AppDeps, tenantId: string, query: ListDebtsFilters) {
  const { limit, cursor, ...filters } = query;
  const after = cursor ? decodeTimestampIdCursor(cursor) : null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) => listDebtRows(sql, tenantId, filters, after, limit + 1));
  const { page, nextCursor } = paginate(rows, limit, (r) => [r.created_at.toISOString(), r.id]);
  return { debts: page.map(debtSummaryView), next_cursor: nextCursor };
}

export async function getDebt(deps: AppDeps, tenantId: string, debtId: string) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const row = await findDebtDetailRow(sql, tenantId, debtId);
    if (!row) throw notFound();
    return debtDetailView(row, await listContactRows(sql, tenantId, debtId));
  });
}

export async function listDebtCallAttempts(deps: AppDeps, tenantId: string, debtId: string, limit: number, cursor?: string) {
  const after = cursor ? decodeTimestampIdCursor(cursor) : null;
  const rows = await withTenantSql(deps.db, tenantId, async (sql) => {
    if (!(await debtExists(sql, tenantId, debtId))) throw notFound();
    return listCallAttemptRows(sql, tenantId, debtId, after, limit + 1);
  });
  const { page, nextCursor } = paginate(rows, limit, (r) => [r.insertedAt.toISOString(), r.id]);
  return { call_attempts: page.map((r) => callAttemptView(r, deps.box)), next_cursor: nextCursor };
}

/**
 * FDCPA 1692c(c): the consumer asked in writing that communication about this debt stop. The first
 * notice sets cease_and_desist_at (with an audit row); a repeat keeps the first time and writes
 * nothing. From then on the compliance engine refuses every call and text for the debt.
 */
export async function recordCeaseAndDesist(
  deps: AppDeps,
  tenantId: string,
  actor: Actor,
  debtId: string,
  input: { received_at?: string; note?: string },
) {
  const receivedAt = input.received_at ? new Date(input.received_at) : new Date();
  // Well formed, but later than the moment it is reported: semantics no schema can state (422).
  if (receivedAt.getTime() > Date.now() + RECEIVED_AT_SKEW_MS) throw unprocessable('received_at must not be in the future');
  return withTenantSql(deps.db, tenantId, async (sql) => {
    if (!(await debtExists(sql, tenantId, debtId))) throw notFound();
    if (await markCeaseAndDesist(sql, tenantId, debtId, receivedAt)) {
      await appendAuditSql(sql, tenantId, [{
        actorType: actor.type,
        actorId: actor.id,
        action: 'debt.cease_and_desist',
        subjectType: 'debt',
        subjectId: debtId,
        payload: { received_at: receivedAt.toISOString(), ...(input.note !== undefined ? { note: input.note } : {}) },
      }]);
    }
    const row = await findDebtDetailRow(sql, tenantId, debtId);
    if (!row) throw notFound();
    return debtDetailView(row, await listContactRows(sql, tenantId, debtId));
  });
}
