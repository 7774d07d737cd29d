import type { Agent } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { conflict, isUniqueViolation, notFound } from '../../lib/errors';
import { withTenant, type Tx } from '../../lib/tenancy';
import { asPresence, checkSipExtension, normalizeNewAgent, presenceMove, type DeviceMode, type NewAgentInput, type PresenceAction } from './agent.rules';
import { agentView, softphoneView } from './agent.views';

type Actor = { type: ActorType; id: string | null };

const DUPLICATE_EMAIL = 'an agent with this email already exists in the tenant';
const DUPLICATE_EXTENSION = 'an agent with this sip_extension already exists in the tenant';
const DUPLICATE = 'an agent with this email or sip_extension already exists in the tenant';

const AUDIT_ACTIONS: Record<PresenceAction, string> = {
  checkin: 'agent.checked_in',
  checkout: 'agent.checked_out',
  pause: 'agent.paused',
  resume: 'agent.resumed',
  wrap_up: 'agent.wrap_up_ended',
};

/** Every agent of the tenant, oldest first (a roster is small: no pages). */
export async function listAgents(deps: AppDeps, tenantId: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.agent.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }));
  return { agents: rows.map(agentView) };
}

export async function getAgent(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.agent.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return agentView(row);
}

/**
 * Email (case-insensitive) and sip_extension are unique per tenant: the unique indexes
 * agents_email_key and agents_extension_key enforce it, so a race loses with a unique violation
 * (409); the look-up before the insert only names which of the two collided.
 */
export async function createAgent(deps: AppDeps, tenantId: string, actor: Actor, input: NewAgentInput) {
  const next = normalizeNewAgent(input);
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      if (await tx.agent.findFirst({ where: { email: { equals: next.email, mode: 'insensitive' } }, select: { id: true } })) {
        throw conflict(DUPLICATE_EMAIL);
      }
      if (next.sip_extension !== null && (await tx.agent.findFirst({ where: { sipExtension: next.sip_extension }, select: { id: true } }))) {
        throw conflict(DUPLICATE_EXTENSION);
      }
      const row = await tx.agent.create({
        data: { tenantId, name: next.name, email: next.email, role: next.role, sipExtension: next.sip_extension },
      });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'agent.created',
        subjectType: 'agent',
        subjectId: row.id,
        payload: { role: next.role, sip_extension: next.sip_extension },
      });
      return agentView(row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(DUPLICATE);
    throw err;
  }
}

async function lockById(tx: Tx, id: string): Promise<Agent | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM agents WHERE id = ${id}::uuid FOR UPDATE`;
  return locked.length ? tx.agent.findUnique({ where: { id } }) : null;
}

async function lockByExtension(tx: Tx, extension: string): Promise<Agent | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM agents WHERE sip_extension = ${extension} FOR UPDATE`;
  const id = locked[0]?.id;
  return id ? tx.agent.findUnique({ where: { id } }) : null;
}

/**
 * Applies one presence move under a row lock (the dial loop claims seats with a conditional
 * UPDATE, so the two serialize on the row). An idempotent repeat writes and records nothing.
 */
async function move(tx: Tx, tenantId: string, actor: Actor, row: Agent, action: PresenceAction, deviceMode?: DeviceMode): Promise<Agent> {
  const from = asPresence(row.presence);
  const { to, changed } = presenceMove(from, action);
  const modeChanged = deviceMode !== undefined && deviceMode !== row.deviceMode;
  if (!changed && !modeChanged) return row;
  const updated = await tx.agent.update({
    where: { id: row.id },
    data: { presence: to, ...(modeChanged ? { deviceMode } : {}) },
  });
  await appendAudit(tx, tenantId, {
    actorType: actor.type,
    actorId: actor.id,
    action: changed ? AUDIT_ACTIONS[action] : 'agent.device_mode_changed',
    subjectType: 'agent',
    subjectId: row.id,
    payload: { from, to, ...(modeChanged ? { device_mode: deviceMode } : {}) },
  });
  return updated;
}

/** offline → available (available again is an idempotent 200); any other presence is 409; an inactive seat is 409. */
export function checkin(deps: AppDeps, tenantId: string, actor: Actor, body: { sip_extension: string; device_mode?: DeviceMode }) {
  const extension = checkSipExtension(body.sip_extension);
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockByExtension(tx, extension);
    if (!row) throw notFound('no agent of the tenant has this sip_extension');
    if (row.status !== 'active') throw conflict('the agent is inactive and cannot check in');
    const updated = await move(tx, tenantId, actor, row, 'checkin', body.device_mode);
    return { agent: agentView(updated), softphone: softphoneView(updated) };
  });
}

/** any → offline (offline again is an idempotent 200). */
export function checkout(deps: AppDeps, tenantId: string, actor: Actor, body: { sip_extension: string }) {
  const extension = checkSipExtension(body.sip_extension);
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockByExtension(tx, extension);
    if (!row) throw notFound('no agent of the tenant has this sip_extension');
    return { agent: agentView(await move(tx, tenantId, actor, row, 'checkout')) };
  });
}

/** pause, resume or wrap_up on the agent with this id; 409 when the presence does not allow it. */
export function changePresence(deps: AppDeps, tenantId: string, actor: Actor, id: string, action: 'pause' | 'resume' | 'wrap_up') {
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockById(tx, id);
    if (!row) throw notFound();
    return { agent: agentView(await move(tx, tenantId, actor, row, action)) };
  });
}
