import type { Agent } from '../../../prisma/generated/client';
import type { AppDeps } from '../../deps';
import { actorOf, appendAudit, type ActorType } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { conflict, forbidden, isUniqueViolation, notFound } from '../../lib/errors';
import { withTenant, type Tx } from '../../lib/tenancy';
import { issueSipCredential, revokeLiveSipCredentials } from '../sip-credentials/sip-credential.repository';
import { SIP_REVOKED_CHECKED_OUT, SIP_REVOKED_SUPERSEDED } from '../sip-credentials/sip-credential.rules';
import { teardownAgentSip } from '../sip-credentials/sip-teardown.service';
import { wakeSeatedCampaignRuns } from '../dialer/campaign-wake';
import { asPresence, checkSipExtension, clearsWrapUp, normalizeNewAgent, presenceMove, type DeviceMode, type NewAgentInput, type PresenceAction } from './agent.rules';
import { agentView, softphoneView } from './agent.views';
import { lockAgentById, lockAgentByExtension } from './agent.repository';

type Actor = { type: ActorType; id: string | null };

const NOT_OWN_AGENT = 'a widget token (ddw_) acts only on its own agent';

/**
 * 403 when a widget principal names another agent of its tenant. Runs after the look-up, so an
 * unknown or foreign agent is still the 404 every principal gets.
 */
function assertOwnAgent(principal: Principal, agentId: string): void {
  if (principal.kind === 'widget' && principal.agentId !== agentId) throw forbidden(NOT_OWN_AGENT);
}

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

export async function getAgent(deps: AppDeps, principal: Principal, id: string) {
  const row = await withTenant(deps.db, principal.tenantId, (tx) => tx.agent.findUnique({ where: { id } }));
  if (!row) throw notFound();
  assertOwnAgent(principal, row.id);
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
    data: {
      presence: to,
      ...(modeChanged ? { deviceMode } : {}),
      ...(changed && clearsWrapUp(from, action) ? { wrapUpUntil: null } : {}),
      // A seat in wrap-up still names the call it wraps up (so a retried call end finds the same
      // wrap-up); leaving wrap-up ends that tie.
      ...(changed && from === 'wrap_up' ? { activeCallAttemptId: null } : {}),
    },
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

/**
 * offline → available (available again is an idempotent 200); any other presence is 409; an
 * inactive seat is 409. A browser seat gets a fresh ephemeral SIP credential on every check-in (a
 * repeat included, so a reloaded softphone can have its password again) and the previous one is
 * revoked as superseded; an external seat gets none and keeps none live.
 */
export async function checkin(deps: AppDeps, principal: Principal, body: { sip_extension: string; device_mode?: DeviceMode }) {
  const extension = checkSipExtension(body.sip_extension);
  const { tenantId } = principal;
  const actor = actorOf(principal);
  const answer = await withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockAgentByExtension(tx, extension);
    if (!row) throw notFound('no agent of the tenant has this sip_extension');
    assertOwnAgent(principal, row.id);
    if (row.status !== 'active') throw conflict('the agent is inactive and cannot check in');
    const updated = await move(tx, tenantId, actor, row, 'checkin', body.device_mode);
    if (updated.deviceMode !== 'browser') {
      await revokeLiveSipCredentials(tx, row.id, SIP_REVOKED_SUPERSEDED);
      return { agent: agentView(updated), softphone: softphoneView(updated, null, deps.config) };
    }
    const credential = await issueSipCredential(tx, deps.box, tenantId, row.id, deps.config.SIP_CREDENTIAL_TTL_SECONDS);
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: 'agent.sip_credential_issued',
      subjectType: 'agent',
      subjectId: row.id,
      payload: { credential_id: credential.id, expires_at: credential.expiresAt.toISOString() },
    });
    return { agent: agentView(updated), softphone: softphoneView(updated, credential, deps.config) };
  });
  const phone = answer.softphone;
  if (deps.softphones && phone.sip_username && phone.sip_password && phone.sip_credential_expires_at) {
    deps.softphones.checkedIn({
      agentId: answer.agent.id,
      extension: phone.sip_extension,
      domain: phone.domain,
      username: phone.sip_username,
      password: phone.sip_password,
      expiresAt: new Date(phone.sip_credential_expires_at),
    });
  }
  await wakeSeatedCampaignRuns(deps, tenantId);
  return answer;
}

/**
 * any → offline (offline again is an idempotent 200), then the SIP teardown after the commit (it
 * runs a workflow). A repeat runs the teardown again, so it is also how a failed one is retried.
 */
export async function checkout(deps: AppDeps, principal: Principal, body: { sip_extension: string }) {
  const extension = checkSipExtension(body.sip_extension);
  const { tenantId } = principal;
  const actor = actorOf(principal);
  const agent = await withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockAgentByExtension(tx, extension);
    if (!row) throw notFound('no agent of the tenant has this sip_extension');
    assertOwnAgent(principal, row.id);
    return move(tx, tenantId, actor, row, 'checkout');
  });
  if (deps.softphones && agent.sipExtension) deps.softphones.checkedOut({ agentId: agent.id, extension: agent.sipExtension, domain: deps.config.SIP_DOMAIN ?? null });
  const sipTeardown = await teardownAgentSip(deps, tenantId, agent.id, SIP_REVOKED_CHECKED_OUT);
  return { agent: agentView(agent), sip_teardown: sipTeardown };
}

/** pause, resume or wrap_up on the agent with this id; 409 when the presence does not allow it. */
export async function changePresence(deps: AppDeps, principal: Principal, id: string, action: 'pause' | 'resume' | 'wrap_up') {
  const answer = await withTenant(deps.db, principal.tenantId, async (tx) => {
    const row = await lockAgentById(tx, id);
    if (!row) throw notFound();
    assertOwnAgent(principal, row.id);
    return { agent: agentView(await move(tx, principal.tenantId, actorOf(principal), row, action)) };
  });
  // resume and the end of a wrap-up make the seat available: runs that wait for a seat tick now.
  if (action !== 'pause') await wakeSeatedCampaignRuns(deps, principal.tenantId);
  return answer;
}
