import { callbackTimerWorkflow } from '../../../workflows/callback.workflow';
import { callbackWorkflowId } from '../../../workflows/ids';
import type { AppDeps } from '../../deps';
import type { ActorType } from '../../lib/audit';
import { conflict, invalid, notFound, unprocessable } from '../../lib/errors';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { agentExists } from '../cdr/cdr.repository';
import {
  campaignExists,
  findDebtCampaign,
  insertCallback,
  isDebtContact,
  listCallbackRows,
  lockCallback,
  numberHolds,
  setCallbackStatus,
} from './callback.repository';
import { callbackTransition, leadTimeError, quarantineError, type CallbackStatus, type CallbackVerb } from './callback.rules';
import type { CreateCallbackInput, ListCallbacksFilters } from './callback.schemas';
import { callbackView, type CallbackRow, type CallbackView } from './callback.views';
import { appendAuditSql } from '../../lib/audit';

type Actor = { type: ActorType; id: string | null };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function listCallbacks(deps: AppDeps, tenantId: string, query: ListCallbacksFilters, now: Date = new Date()) {
  const { limit, status, ...rest } = query;
  const rows = await withTenantSql(deps.db, tenantId, (sql) =>
    listCallbackRows(sql, tenantId, { ...rest, status: status ?? 'pending' }, now, limit),
  );
  return { callbacks: rows.map(callbackView) };
}

/**
 * Schedules a callback. Checks, in order: the debt (404), agent and campaign (400 invalid), the
 * lead time, that the phone is a contact of the debt, and that the number is not in quarantine
 * (422 each). After the commit, starts its timer workflow (wake the run at scheduled_at, mark it
 * missed CALLBACK_MISS_AFTER_MS later).
 */
export async function createCallback(deps: AppDeps, tenantId: string, actor: Actor, input: CreateCallbackInput, now: Date = new Date()) {
  // A malformed id is answered like an unknown one (SPEC: existence is never leaked).
  if (!UUID_RE.test(input.debt_id)) throw notFound('debt not found');
  const scheduledAt = new Date(input.scheduled_at);
  const callback = await withTenantSql(deps.db, tenantId, async (sql) => {
    const debt = await findDebtCampaign(sql, tenantId, input.debt_id);
    if (!debt) throw notFound('debt not found');
    const agentId = input.agent_id ?? null;
    if (agentId !== null && !(await agentExists(sql, tenantId, agentId))) throw invalid('agent_id is not an agent of this tenant');
    const campaignId = input.campaign_id === undefined ? debt.campaign_id : input.campaign_id;
    if (input.campaign_id && !(await campaignExists(sql, tenantId, input.campaign_id))) {
      throw invalid('campaign_id is not a campaign of this tenant');
    }
    const lead = leadTimeError(scheduledAt, now);
    if (lead) throw unprocessable(lead);
    if (!(await isDebtContact(sql, tenantId, input.debt_id, input.contact_phone))) {
      throw unprocessable('contact_phone is not a contact of the debt');
    }
    const held = quarantineError(await numberHolds(sql, tenantId, input.contact_phone));
    if (held) throw unprocessable(held);

    const row = await insertCallback(sql, tenantId, {
      debtId: input.debt_id,
      contactPhone: input.contact_phone,
      campaignId,
      agentId,
      scheduledAt,
      note: input.note ?? null,
      priority: input.priority ?? 0,
    });
    await appendAuditSql(sql, tenantId, [{
      actorType: actor.type,
      actorId: actor.id,
      action: 'callback.scheduled',
      subjectType: 'debt',
      subjectId: row.debt_id,
      payload: {
        callback_id: row.id,
        contact_phone: row.contact_phone,
        scheduled_at: row.scheduled_at.toISOString(),
        campaign_id: row.campaign_id,
        agent_id: row.agent_id,
        priority: row.priority,
      },
    }]);
    return callbackView(row);
  });
  await startCallbackTimer(deps, tenantId, callback);
  return callback;
}

/**
 * The callback is committed whatever happens here: a timer that failed to start costs only the
 * early wake-up and the automatic miss (the due queue still serves it), so it is logged, not raised.
 */
async function startCallbackTimer(deps: AppDeps, tenantId: string, callback: CallbackView): Promise<void> {
  if (!deps.temporal) return;
  const workflowId = callbackWorkflowId(tenantId, callback.id);
  try {
    await deps.temporal.workflow.start(callbackTimerWorkflow, {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowId,
      args: [
        {
          tenantId,
          callbackId: callback.id,
          campaignId: callback.campaign_id,
          scheduledAt: callback.scheduled_at,
          missAfterMs: deps.config.CALLBACK_MISS_AFTER_MS,
        },
      ],
    });
  } catch (err) {
    deps.logger.warn({ tenantId, callbackId: callback.id, workflowId, err: (err as Error).message }, 'callback timer workflow not started');
  }
}

/** Moves a locked callback to `next` with its audit entry, inside the caller's transaction. */
async function applyCallbackStatus(sql: SqlTx, tenantId: string, actor: Actor, current: CallbackRow, next: CallbackStatus): Promise<CallbackRow> {
  const row = await setCallbackStatus(sql, tenantId, current.id, next);
  await appendAuditSql(sql, tenantId, [{
    actorType: actor.type,
    actorId: actor.id,
    action: `callback.${next}`,
    subjectType: 'debt',
    subjectId: row.debt_id,
    payload: { callback_id: row.id, from: current.status, to: next },
  }]);
  return row;
}

/** complete, cancel or miss: from pending only; done, cancelled and missed are terminal (409). */
export async function transitionCallback(deps: Pick<AppDeps, 'db'>, tenantId: string, actor: Actor, id: string, verb: CallbackVerb) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const current = await lockCallback(sql, tenantId, id);
    if (!current) throw notFound();
    const next = callbackTransition(current.status, verb);
    if (!next) throw conflict(`callback is ${current.status}; only a pending callback can be ${verb === 'complete' ? 'completed' : verb === 'cancel' ? 'cancelled' : 'missed'}`);
    return callbackView(await applyCallbackStatus(sql, tenantId, actor, current, next));
  });
}

/**
 * The timer's miss: a pending callback becomes missed; one the runner dialed (done) or an agent
 * completed or cancelled is left as it is. Null when the callback is unknown to the tenant.
 */
export async function missCallbackIfPending(deps: Pick<AppDeps, 'db'>, tenantId: string, actor: Actor, id: string): Promise<CallbackView | null> {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const current = await lockCallback(sql, tenantId, id);
    if (!current) return null;
    const next = callbackTransition(current.status, 'miss');
    return callbackView(next ? await applyCallbackStatus(sql, tenantId, actor, current, next) : current);
  });
}
