import { promiseWorkflowId } from '../../../workflows/ids';
import { promiseDeadlineWorkflow } from '../../../workflows/promise.workflow';
import type { AppDeps } from '../../deps';
import type { ActorType } from '../../lib/audit';
import { conflict, notFound } from '../../lib/errors';
import { emitEvent } from '../../lib/events';
import { decodeTimestampIdCursor, paginate } from '../../lib/pagination';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { PROMISE_TO_PAY } from '../cdr/cdr.rules';
import {
  countPendingPromises,
  insertPromise,
  type NewPromise,
  findPromiseStatus,
  listPromiseRows,
  lockPromiseAndDebt,
  resolvePromise,
  setDebtState,
} from './promise.repository';
import { canResolvePromise, DEBT_STATE_AFTER_PROMISES, type PromiseResolution } from './promise.rules';
import type { ListPromisesFilters } from './promise.schemas';
import { promiseView, type PromiseRow } from './promise.views';
import { appendAuditSql } from '../../lib/audit';

type Actor = { type: ActorType; id: string | null };

/**
 * A promise made on a call, with what every promise commits, whoever took it (an agent's
 * disposition, the AI agent): the row, `promise.recorded`, and the debt moved to promise_to_pay.
 * The caller holds the debt's state lock (`debtStateBefore`, a promisable state), writes its own
 * audit entry in the same transaction, and starts the deadline after the commit.
 */
export async function recordCallPromise(
  sql: SqlTx,
  tenantId: string,
  input: NewPromise,
  debtStateBefore: string,
): Promise<{ promise: PromiseRow; debtState: { from: string; to: string } | null }> {
  const promise = await insertPromise(sql, tenantId, input);
  await emitEvent(sql, tenantId, { event: 'promise.recorded', eventId: promise.id, occurredAt: promise.created_at, data: promiseView(promise) });
  if (debtStateBefore === PROMISE_TO_PAY) return { promise, debtState: null };
  await setDebtState(sql, tenantId, input.debtId, PROMISE_TO_PAY);
  return { promise, debtState: { from: debtStateBefore, to: PROMISE_TO_PAY } };
}

/**
 * The broken-promise timer of a committed promise. The promise is committed whatever happens
 * here: a deadline that failed to start only leaves the promise for an agent to resolve, so it is
 * logged, not raised.
 */
export async function startPromiseDeadline(deps: AppDeps, tenantId: string, promiseId: string, promisedDate: string): Promise<void> {
  if (!deps.temporal) return;
  const workflowId = promiseWorkflowId(tenantId, promiseId);
  try {
    await deps.temporal.workflow.start(promiseDeadlineWorkflow, {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowId,
      args: [{ tenantId, promiseId, promisedDate }],
    });
  } catch (err) {
    deps.logger.warn({ tenantId, promiseId, workflowId, err: (err as Error).message }, 'promise deadline workflow not started');
  }
}

export async function listPromises(deps: AppDeps, tenantId: string, query: ListPromisesFilters) {
  const { limit, cursor, ...filters } = query;
  const before = cursor ? decodeTimestampIdCursor(cursor) : null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) => listPromiseRows(sql, tenantId, filters, before, limit + 1));
  const { page, nextCursor } = paginate(rows, limit, (r) => [r.created_at.toISOString(), r.id]);
  return { promises: page.map(promiseView), next_cursor: nextCursor };
}

/**
 * pending to kept, broken or cancelled; any other move is 409. When the debt is in promise_to_pay
 * and this was its last pending promise, the debt returns to in_collection in the same transaction
 * (lead selection skips promise_to_pay debts, so a resolved promise must release the debt).
 */
export async function resolvePromiseStatus(deps: Pick<AppDeps, 'db'>, tenantId: string, actor: Actor, promiseId: string, status: PromiseResolution) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const current = await lockPromiseAndDebt(sql, tenantId, promiseId);
    if (!current) throw notFound();
    const refused = conflict(`promise is ${current.status}; only a pending promise can become ${status}`);
    if (!canResolvePromise(current.status, status)) throw refused;
    const row = await resolvePromise(sql, tenantId, promiseId, status);
    if (!row) throw refused;
    let debtState: { from: string; to: string } | null = null;
    if (current.debt_state === 'promise_to_pay' && (await countPendingPromises(sql, tenantId, row.debt_id)) === 0) {
      await setDebtState(sql, tenantId, row.debt_id, DEBT_STATE_AFTER_PROMISES);
      debtState = { from: current.debt_state, to: DEBT_STATE_AFTER_PROMISES };
    }
    await appendAuditSql(sql, tenantId, [{
      actorType: actor.type,
      actorId: actor.id,
      action: `promise.${status}`,
      subjectType: 'debt',
      subjectId: row.debt_id,
      payload: { promise_id: row.id, from: 'pending', to: status, debt_state: debtState },
    }]);
    return promiseView(row);
  });
}

/** The promise's status now; null when the promise is unknown to the tenant. */
export async function promiseStatus(deps: Pick<AppDeps, 'db'>, tenantId: string, promiseId: string): Promise<string | null> {
  return withTenantSql(deps.db, tenantId, (sql) => findPromiseStatus(sql, tenantId, promiseId));
}
