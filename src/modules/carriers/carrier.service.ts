import type { Carrier } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { actorOf, appendAudit } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { isInternalHostName } from '../../lib/egress';
import { AppError, conflict, invalid, notFound, unprocessable } from '../../lib/errors';
import { withTenant, type Tx } from '../../lib/tenancy';
import { edgeConfigured, sendToEdge } from '../sip-edge/sip-edge.client';
import { assertPublicSipProxy, assertPublicSources, carrierGatewayName, nameOf, sipProxyHostOf, sipProxyOf, sourceIpsOf } from './carrier.rules';
import type { CreateCarrierInput, UpdateCarrierInput } from './carrier.schemas';
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

/**
 * Where a trunk's signalling goes (sip_proxy) and comes from (source_ips) passes the egress check's
 * public-address rules unless the operator allowlisted it (SIP_EDGE_ALLOWLIST): a tenant must not
 * point the shared SIP edge at the platform's own network. A host name is resolved with the
 * deployment's resolver and every address it gives is judged. 422 unprocessable naming the field
 * (the shape is valid; the address is refused).
 */
async function assertPublicEdge(deps: AppDeps, sipProxy: string | null, sourceIps: readonly string[]): Promise<void> {
  const allowlist = deps.config.sipEdgeAllowlist;
  assertPublicSources(sourceIps, allowlist);
  if (sipProxy === null) return;
  const host = sipProxyHostOf(sipProxy);
  const lookup = 'name' in host && !allowlist.includes(host.name) && !isInternalHostName(host.name);
  const resolved = lookup ? await deps.resolver((host).name).catch(() => null) : null;
  assertPublicSipProxy(sipProxy, resolved, allowlist);
}

const notACarrier = (field: string) =>
  `${field} must be the id of one of the tenant's active carriers (its own or its account's), or null for the deployment default`;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The switch gateway of a carrier a tenant names by id, in a run's `gateway` option or a campaign's
 * `carrier` (`field`): row-level security shows its own carriers and its account's, never another
 * tenant's; the carrier must be active; the gateway string is derived from the id. 400 invalid
 * naming the field otherwise.
 */
export async function carrierGatewayOf(tx: Tx, carrierId: string, field = 'gateway'): Promise<string> {
  if (!UUID_RE.test(carrierId)) throw invalid(notACarrier(field));
  const row = await tx.carrier.findUnique({ where: { id: carrierId }, select: { id: true, status: true } });
  if (!row) throw invalid(notACarrier(field));
  if (row.status !== 'active') throw invalid(`${field}: carrier ${row.id} is ${row.status}; ${notACarrier(field)}`);
  return carrierGatewayName(row.id);
}

export async function createCarrier(deps: AppDeps, principal: Principal, body: CreateCarrierInput) {
  const tenantId = principal.tenantId;
  const scope = body.scope ?? 'sede';
  const name = nameOf(body.name);
  const sipProxy = sipProxyOf(body.sip_proxy ?? null);
  const sourceIps = sourceIpsOf(body.source_ips ?? []);
  const status = body.status ?? 'active';
  if (status === 'retired') throw invalid('status: a carrier cannot be created retired');
  await assertPublicEdge(deps, sipProxy, sourceIps);
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

/**
 * Renames a trunk or changes its status. Disabling or retiring takes effect at the next dial of
 * every campaign and run that names it (carrier-gateway.ts): their calls are not placed while it
 * is not active. Retired is final (409 conflict). A patch that changes nothing writes nothing.
 */
export async function updateCarrier(deps: AppDeps, principal: Principal, id: string, body: UpdateCarrierInput) {
  const name = body.name === undefined ? undefined : nameOf(body.name);
  const actor = actorOf(principal);
  return withTenant(deps.db, principal.tenantId, async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM carriers WHERE id = ${id}::uuid FOR UPDATE`;
    const row = locked.length ? await tx.carrier.findUnique({ where: { id } }) : null;
    if (!row) throw notFound();
    if (row.tenantId === null) await assertAccountAdmin(tx, principal, 'changing an account-wide (empresa) carrier');
    const data: { name?: string; status?: string } = {};
    if (name !== undefined && name !== row.name) data.name = name;
    if (body.status !== undefined && body.status !== row.status) {
      if (row.status === 'retired') throw conflict('a retired carrier stays retired');
      data.status = body.status;
    }
    if (Object.keys(data).length === 0) return carrierView(row);
    const updated = await tx.carrier.update({ where: { id }, data });
    await appendAudit(tx, principal.tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'carrier.updated',
      subjectType: SUBJECT,
      subjectId: row.id,
      payload: { scope: scopeOf(row), changed: Object.keys(data), from: { name: row.name, status: row.status }, to: { name: updated.name, status: updated.status } },
    });
    return carrierView(updated);
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
  // Re-judged at the push: a row stored before these rules, or a name re-pointed since, must not reach the edge.
  await assertPublicEdge(deps, row.sipProxy, row.sourceIps).catch((err: unknown) => {
    throw err instanceof AppError && (err.code === 'invalid' || err.code === 'unprocessable') ? unprocessable(`${err.message}; the trunk cannot be provisioned`) : err;
  });
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
