import type { AppDeps } from '../../deps';
import { actorOf, appendAudit } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { conflict, isUniqueViolation, notFound } from '../../lib/errors';
import { withTenant, type Tx } from '../../lib/tenancy';
import { lockOrigin } from './widget-origin.repository';
import { checkLabel, checkOrigin } from './widget-origin.rules';
import type { CreateWidgetOriginInput } from './widget-origin.schemas';
import { widgetOriginView } from './widget-origin.views';

const REGISTERED_HERE = 'this origin is already registered in the tenant (enable it if it is disabled)';
const ENABLED_ELSEWHERE = 'this origin is enabled for another tenant';

/** Every origin of the tenant, disabled ones included, oldest first (a handful per tenant: no pages). */
export async function listWidgetOrigins(deps: AppDeps, tenantId: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.widgetOrigin.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }));
  return { widget_origins: rows.map(widgetOriginView) };
}

/**
 * The unique indexes decide both conflicts (same origin in the tenant; enabled for another
 * tenant), concurrent writers included; the look-up after a violation only names which one it was.
 */
export async function createWidgetOrigin(deps: AppDeps, principal: Principal, body: CreateWidgetOriginInput) {
  const origin = checkOrigin(body.origin);
  const label = checkLabel(body.label);
  const { tenantId } = principal;
  const actor = actorOf(principal);
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      const row = await tx.widgetOrigin.create({ data: { tenantId, origin, label } });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'widget_origin.created',
        subjectType: 'widget_origin',
        subjectId: row.id,
        payload: { origin, label },
      });
      return widgetOriginView(row);
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const mine = await withTenant(deps.db, tenantId, (tx) => tx.widgetOrigin.findFirst({ where: { origin }, select: { id: true } }));
    throw conflict(mine ? REGISTERED_HERE : ENABLED_ELSEWHERE);
  }
}

type Toggle = 'disable' | 'enable';

/** Flips `enabled` under the row lock; a repeat (already in the asked state) writes and records nothing. */
async function toggle(tx: Tx, principal: Principal, id: string, to: Toggle) {
  const row = await lockOrigin(tx, id);
  if (!row) throw notFound();
  const enabled = to === 'enable';
  if (row.enabled === enabled) return widgetOriginView(row);
  const updated = await tx.widgetOrigin.update({ where: { id }, data: { enabled, disabledAt: enabled ? null : new Date() } });
  const actor = actorOf(principal);
  await appendAudit(tx, principal.tenantId, {
    actorType: actor.type,
    actorId: actor.id,
    action: enabled ? 'widget_origin.enabled' : 'widget_origin.disabled',
    subjectType: 'widget_origin',
    subjectId: id,
    payload: { origin: row.origin },
  });
  return widgetOriginView(updated);
}

export function disableWidgetOrigin(deps: AppDeps, principal: Principal, id: string) {
  return withTenant(deps.db, principal.tenantId, (tx) => toggle(tx, principal, id, 'disable'));
}

/** 409 when another tenant has the same origin enabled (widget_origins_enabled_origin_key). */
export async function enableWidgetOrigin(deps: AppDeps, principal: Principal, id: string) {
  try {
    return await withTenant(deps.db, principal.tenantId, (tx) => toggle(tx, principal, id, 'enable'));
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(ENABLED_ELSEWHERE);
    throw err;
  }
}
