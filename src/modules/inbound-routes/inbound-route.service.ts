import type { InboundRoute } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { conflict, isUniqueViolation, notFound, unprocessable } from '../../lib/errors';
import { withTenant, type Tx } from '../../lib/tenancy';
import { edgeConfigured, sendToEdge } from '../sip-edge/sip-edge.client';
import { applyRouteWrite, e164Of, newRoute, type RouteSettings } from './inbound-route.rules';
import type { CreateInboundRouteInput, PatchInboundRouteInput } from './inbound-route.schemas';
import { inboundRouteView, routeData, routeSettings } from './inbound-route.views';

type Actor = { type: ActorType; id: string | null };

const SUBJECT = 'inbound_route';
const TAKEN = 'this number already has an active inbound route (in this or another tenant); disable that route first';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A number is routed only by the tenant holding it: an ACTIVE DID of the tenant with that e164. */
async function assertNumberHeld(tx: Tx, e164: string): Promise<void> {
  const did = await tx.did.findFirst({ where: { e164, status: 'active' }, select: { id: true } });
  if (!did) throw unprocessable(`e164: ${e164} is not an active DID of the tenant; register it in /v1/dids first`);
}

/**
 * The destination must resolve inside the tenant: agent → an active agent with that sip_extension;
 * ivr → a campaign with an ivr_menu (null: the default menu); queue → any label (admission is the
 * tenant flag's business at call time). ai_enabled needs the tenant's voice AI.
 */
async function assertDestination(tx: Tx, tenantId: string, next: RouteSettings): Promise<void> {
  if (next.dest_type === 'agent') {
    if (next.dest_ref === null) throw unprocessable('dest_ref: an agent route names the sip_extension of an active agent');
    const agent = await tx.agent.findFirst({ where: { sipExtension: next.dest_ref, status: 'active' }, select: { id: true } });
    if (!agent) throw unprocessable(`dest_ref: no active agent of the tenant has sip_extension '${next.dest_ref}'`);
  } else if (next.dest_type === 'ivr' && next.dest_ref !== null) {
    const campaign = UUID_RE.test(next.dest_ref) ? await tx.campaign.findUnique({ where: { id: next.dest_ref }, select: { ivrMenu: true } }) : null;
    const menu = campaign?.ivrMenu;
    if (!menu || typeof menu !== 'object' || Object.keys(menu).length === 0) {
      throw unprocessable('dest_ref: an ivr route names the id of a campaign of the tenant with an ivr_menu, or null for the default menu');
    }
  }
  if (next.ai_enabled) {
    const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { voiceAiEnabled: true } });
    if (!tenant.voiceAiEnabled) throw unprocessable('ai_enabled needs the tenant voice_ai_enabled');
  }
}

async function lockRoute(tx: Tx, id: string): Promise<InboundRoute> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM inbound_routes WHERE id = ${id}::uuid FOR UPDATE`;
  const row = locked.length ? await tx.inboundRoute.findUnique({ where: { id } }) : null;
  if (!row) throw notFound();
  return row;
}

async function audit(tx: Tx, tenantId: string, actor: Actor, action: string, id: string, payload: Record<string, unknown>) {
  await appendAudit(tx, tenantId, { actorType: actor.type, actorId: actor.id, action, subjectType: SUBJECT, subjectId: id, payload });
}

/** The partial unique index on active numbers is the arbiter across tenants (RLS hides the other route). */
async function uniqueNumber<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(TAKEN);
    throw err;
  }
}

export async function listInboundRoutes(deps: AppDeps, tenantId: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.inboundRoute.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }));
  return { inbound_routes: rows.map(inboundRouteView) };
}

export async function getInboundRoute(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.inboundRoute.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return inboundRouteView(row);
}

export async function createInboundRoute(deps: AppDeps, tenantId: string, actor: Actor, body: CreateInboundRouteInput) {
  const e164 = e164Of(body.e164);
  const { next } = applyRouteWrite(newRoute(body.dest_type), body);
  return uniqueNumber(() =>
    withTenant(deps.db, tenantId, async (tx) => {
      await assertNumberHeld(tx, e164);
      await assertDestination(tx, tenantId, next);
      const row = await tx.inboundRoute.create({
        data: { tenantId, e164, destType: next.dest_type, destRef: next.dest_ref, recording: next.recording, aiEnabled: next.ai_enabled, notes: next.notes },
      });
      await audit(tx, tenantId, actor, 'inbound_route.created', row.id, { e164, ...next });
      return inboundRouteView(row);
    }),
  );
}

/**
 * The destination rules run again when the destination or ai_enabled changes, and the number
 * rules when the route comes back to active. A patch that changes nothing writes nothing. The
 * edge hears of a change on the next provision.
 */
export async function updateInboundRoute(deps: AppDeps, tenantId: string, actor: Actor, id: string, body: PatchInboundRouteInput) {
  return uniqueNumber(() =>
    withTenant(deps.db, tenantId, async (tx) => {
      const row = await lockRoute(tx, id);
      const { next, changed } = applyRouteWrite(routeSettings(row), body);
      if (changed.length === 0) return inboundRouteView(row);
      if (changed.includes('status') && next.status === 'active') await assertNumberHeld(tx, row.e164);
      if (changed.some((k) => k === 'dest_type' || k === 'dest_ref' || k === 'ai_enabled')) await assertDestination(tx, tenantId, next);
      const updated = await tx.inboundRoute.update({ where: { id }, data: routeData(next, changed) });
      await audit(tx, tenantId, actor, 'inbound_route.updated', id, { changed, values: Object.fromEntries(changed.map((k) => [k, next[k]])) });
      return inboundRouteView(updated);
    }),
  );
}

function edgeBody(r: InboundRoute) {
  return { tenant_id: r.tenantId, e164: r.e164, dest_type: r.destType, dest_ref: r.destRef, recording: r.recording, ai_enabled: r.aiEnabled };
}

/**
 * Pushes an active route to the SIP edge (an upsert there). Without an edge the intent is recorded
 * (sbc_disabled). The edge is called outside any transaction; a refusal (502 sbc_error) records nothing.
 */
export async function provisionInboundRoute(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.inboundRoute.findUnique({ where: { id } }));
  if (!row) throw notFound();
  if (row.status !== 'active') throw unprocessable('only an active route can be provisioned; set status active first');
  const configured = edgeConfigured(deps);
  if (configured) await sendToEdge(deps, { kind: 'inbound_route.provision', id, body: edgeBody(row) });
  const status = configured ? ('provisioned' as const) : ('sbc_disabled' as const);
  const updated = await withTenant(deps.db, tenantId, async (tx) => {
    const saved = await tx.inboundRoute.update({ where: { id }, data: { edgeStatus: status, edgeUpdatedAt: new Date() } });
    await audit(tx, tenantId, actor, 'inbound_route.provisioned', id, { edge_status: status, ...edgeBody(row) });
    return saved;
  });
  return { inbound_route: inboundRouteView(updated), status };
}

/**
 * Disables the route here first, whatever the edge says: a refusing edge must never keep a number
 * routed in the platform. Then, when the edge carries the route (edge_status provisioned), it is
 * told to drop it; a refusal is 502 sbc_error with the route already disabled here, and a retry
 * tells the edge again (the route stays marked provisioned until the edge accepts).
 */
export async function disableInboundRoute(deps: AppDeps, tenantId: string, actor: Actor, id: string) {
  let row = await withTenant(deps.db, tenantId, async (tx) => {
    const current = await lockRoute(tx, id);
    if (current.status === 'disabled') return current;
    const saved = await tx.inboundRoute.update({ where: { id }, data: { status: 'disabled' } });
    await audit(tx, tenantId, actor, 'inbound_route.disabled', id, { previous_status: current.status });
    return saved;
  });
  if (row.edgeStatus === 'provisioned' && edgeConfigured(deps)) {
    await sendToEdge(deps, { kind: 'inbound_route.disable', id });
    row = await withTenant(deps.db, tenantId, async (tx) => {
      const saved = await tx.inboundRoute.update({ where: { id }, data: { edgeStatus: 'revoked', edgeUpdatedAt: new Date() } });
      await audit(tx, tenantId, actor, 'inbound_route.edge_revoked', id, { e164: saved.e164 });
      return saved;
    });
  }
  return inboundRouteView(row);
}
