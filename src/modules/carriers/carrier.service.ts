import type { Carrier } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { actorOf, appendAudit } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { invalid, notFound, unprocessable } from '../../lib/errors';
import { withTenant } from '../../lib/tenancy';
import { edgeConfigured, sendToEdge } from '../sip-edge/sip-edge.client';
import { nameOf, sipProxyOf, sourceIpsOf } from './carrier.rules';
import type { CreateCarrierInput } from './carrier.schemas';
import { carrierView } from './carrier.views';
import { assertAccountAdmin } from '../../lib/account-admin';

const SUBJECT = 'carrier';
const scopeOf = (c: Carrier) => (c.tenantId === null ? 'empresa' : 'sede');

/** Own trunks and the account's account-wide ones (RLS decides which rows the tenant sees), oldest first. */
export async function listCarriers(deps: AppDeps, tenantId: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.carrier.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }));
  return { carriers: rows.map(carrierView) };
}

export async function getCarrier(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.carrier.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return carrierView(row);
}

export async function createCarrier(deps: AppDeps, principal: Principal, body: CreateCarrierInput) {
  const tenantId = principal.tenantId;
  const scope = body.scope ?? 'sede';
  const name = nameOf(body.name);
  const sipProxy = sipProxyOf(body.sip_proxy ?? null);
  const sourceIps = sourceIpsOf(body.source_ips ?? []);
  const status = body.status ?? 'active';
  if (status === 'retired') throw invalid('status: a carrier cannot be created retired');
  const actor = actorOf(principal);
  return withTenant(deps.db, tenantId, async (tx) => {
    if (scope === 'empresa') await assertAccountAdmin(tx, principal, 'an account-wide (empresa) carrier');
    const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { accountId: true } });
    const row = await tx.carrier.create({
      data: { accountId: tenant.accountId, tenantId: scope === 'empresa' ? null : tenantId, kind: body.kind, name, sipProxy, sourceIps, status },
    });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'carrier.created',
      subjectType: SUBJECT,
      subjectId: row.id,
      payload: { scope, account_id: row.accountId, kind: row.kind, name, sip_proxy: sipProxy, source_ips: sourceIps, status },
    });
    return carrierView(row);
  });
}

/** The carrier as the caller may act on it: 404 when unseen, 403 for an account-wide one without account_admin. */
async function actionableCarrier(deps: AppDeps, principal: Principal, id: string, what: string): Promise<Carrier> {
  return withTenant(deps.db, principal.tenantId, async (tx) => {
    const row = await tx.carrier.findUnique({ where: { id } });
    if (!row) throw notFound();
    if (row.tenantId === null) await assertAccountAdmin(tx, principal, `${what} an account-wide (empresa) carrier`);
    if (row.kind !== 'byoc') throw unprocessable(`only a byoc trunk is ${what === 'provisioning' ? 'provisioned on' : 'revoked from'} the SIP edge; house trunks are the platform's own`);
    return row;
  });
}

async function recordEdge(deps: AppDeps, principal: Principal, row: Carrier, action: string, edgeStatus: 'provisioned' | 'revoked' | 'sbc_disabled') {
  const actor = actorOf(principal);
  await withTenant(deps.db, principal.tenantId, async (tx) => {
    await tx.carrier.update({ where: { id: row.id }, data: { edgeStatus, edgeUpdatedAt: new Date() } });
    await appendAudit(tx, principal.tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action,
      subjectType: SUBJECT,
      subjectId: row.id,
      payload: { scope: scopeOf(row), edge_status: edgeStatus, sip_proxy: row.sipProxy, source_ips: row.sourceIps },
    });
  });
}

/**
 * Pushes a byoc trunk to the SIP edge. Without an edge the intent is recorded (edge_status
 * sbc_disabled). The edge is called outside any transaction; when it refuses (502 sbc_error)
 * nothing is recorded and edge_status keeps its previous value.
 */
export async function provisionCarrier(deps: AppDeps, principal: Principal, id: string) {
  const row = await actionableCarrier(deps, principal, id, 'provisioning');
  if (row.status !== 'active') throw unprocessable(`only an active trunk can be provisioned (this one is ${row.status})`);
  if (row.sipProxy === null) throw unprocessable('sip_proxy is required to provision a trunk');
  const configured = edgeConfigured(deps);
  if (configured) {
    await sendToEdge(deps, {
      kind: 'trunk.provision',
      id: row.id,
      body: { account_id: row.accountId, tenant_id: row.tenantId, name: row.name, sip_proxy: row.sipProxy, source_ips: row.sourceIps },
    });
  }
  const status = configured ? ('provisioned' as const) : ('sbc_disabled' as const);
  await recordEdge(deps, principal, row, 'carrier.provisioned', status);
  return { status };
}

/** Removes a byoc trunk from the SIP edge (any status; idempotent at the edge). Same edge rules as provision. */
export async function revokeCarrier(deps: AppDeps, principal: Principal, id: string) {
  const row = await actionableCarrier(deps, principal, id, 'revoking');
  const configured = edgeConfigured(deps);
  if (configured) await sendToEdge(deps, { kind: 'trunk.revoke', id: row.id });
  const status = configured ? ('revoked' as const) : ('sbc_disabled' as const);
  await recordEdge(deps, principal, row, 'carrier.revoked', status);
  return { status };
}
