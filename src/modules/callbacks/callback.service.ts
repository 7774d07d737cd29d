import type { AppDeps } from '../../deps';
import type { ActorType } from '../../lib/audit';
import { conflict, invalid, notFound, unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { agentExists } from '../cdr/cdr.repository';
import { insertAuditRow } from '../debts/debt.repository';
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
import { callbackTransition, leadTimeError, quarantineError, type CallbackVerb } from './callback.rules';
import type { CreateCallbackInput, ListCallbacksFilters } from './callback.schemas';
import { callbackView } from './callback.views';

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
 * (422 each).
 */
export async function createCallback(deps: AppDeps, tenantId: string, actor: Actor, input: CreateCallbackInput, now: Date = new Date()) {
  // A malformed id is answered like an unknown one (SPEC: existence is never leaked).
  if (!UUID_RE.test(input.debt_id)) throw notFound('debt not found');
  const scheduledAt = new Date(input.scheduled_at);
  return withTenantSql(deps.db, tenantId, async (sql) => {
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
    await insertAuditRow(sql, tenantId, {
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
    });
    return callbackView(row);
  });
}

/** complete, cancel or miss: from pending only; done, cancelled and missed are terminal (409). */
export async function transitionCallback(deps: AppDeps, tenantId: string, actor: Actor, id: string, verb: CallbackVerb) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const current = await lockCallback(sql, tenantId, id);
    if (!current) throw notFound();
    const next = callbackTransition(current.status, verb);
    if (!next) throw conflict(`callback is ${current.status}; only a pending callback can be ${verb === 'complete' ? 'completed' : verb === 'cancel' ? 'cancelled' : 'missed'}`);
    const row = await setCallbackStatus(sql, tenantId, id, next);
    await insertAuditRow(sql, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: `callback.${next}`,
      subjectType: 'debt',
      subjectId: row.debt_id,
      payload: { callback_id: row.id, from: current.status, to: next },
    });
    return callbackView(row);
  });
}
