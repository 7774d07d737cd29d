import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { conflict, invalid, isUniqueViolation, notFound } from '../../lib/errors';
import { createdAtKey, createdAtPageArgs, paginate } from '../../lib/pagination';
import { withTenant, type Tx } from '../../lib/tenancy';
import { activeElsewhere } from '../dids/did.repository';
import { carrierGatewayOf } from '../carriers/carrier.service';
import { applyCampaignWrite, NEW_CAMPAIGN, type CampaignSettings, type CampaignWrite } from './campaign.rules';
import { campaignData, campaignSettings, campaignView } from './campaign.views';

type Actor = { type: ActorType; id: string | null };

const ALL_SETTINGS = Object.keys(NEW_CAMPAIGN) as (keyof CampaignSettings)[];
const DUPLICATE_NAME = 'a campaign with this name already exists (names are unique per tenant, case-insensitive)';

/** Every id of the pool must be a DID of the tenant's registry (any status: DIDs are never deleted). */
async function assertPoolInRegistry(tx: Tx, pool: string[]): Promise<void> {
  if (pool.length === 0) return;
  const found = await tx.did.findMany({ where: { id: { in: pool } }, select: { id: true } });
  const known = new Set(found.map((d) => d.id.toLowerCase()));
  const missing = pool.find((id) => !known.has(id));
  if (missing !== undefined) throw invalid(`caller_id_pool: '${missing}' is not a DID of this tenant's registry`);
}

/**
 * A legacy caller id may not be another tenant's active DID (CONTRACT.md section 13): presenting it
 * would route the debtor's callback to that tenant's number. Only a yes/no crosses the tenant line.
 */
async function assertCallerIdsNotForeign(tx: Tx, callerIds: string[]): Promise<void> {
  const [taken] = await activeElsewhere(tx, callerIds);
  if (taken !== undefined) throw invalid(`caller_ids: '${taken}' is an active DID of another tenant and cannot be presented as a caller id`);
}

/**
 * An sms_blast campaign texts from its own numbers only (CONTRACT.md section 13: an SMS `from` is an
 * active DID of the tenant): the active DIDs of caller_id_pool, or, with an empty pool, caller_ids,
 * each of which must then be an active DID of the tenant. Checked whenever the result is an
 * sms_blast campaign and its type or senders change; a DID parked later stops being used at the
 * next tick (the blast sends nothing while none is active).
 */
async function assertSmsSenders(tx: Tx, next: CampaignSettings): Promise<void> {
  if (next.campaign_type !== 'sms_blast') return;
  if (next.caller_id_pool.length > 0) {
    const active = await tx.did.count({ where: { id: { in: next.caller_id_pool }, status: 'active' } });
    if (active === 0) throw invalid('caller_id_pool: an sms_blast campaign texts from the active DIDs of its pool, and none of them is active');
    return;
  }
  if (next.caller_ids.length === 0) {
    throw invalid("an sms_blast campaign needs a sender: caller_id_pool (ids of the tenant's DIDs) or caller_ids (the tenant's active DIDs)");
  }
  const active = await tx.did.findMany({ where: { e164: { in: next.caller_ids }, status: 'active' }, select: { e164: true } });
  const own = new Set(active.map((d) => d.e164));
  const stranger = next.caller_ids.find((e164) => !own.has(e164));
  if (stranger !== undefined) throw invalid(`caller_ids: '${stranger}' is not an active DID of this tenant; an sms_blast campaign texts only from its own active DIDs`);
}

const SMS_SENDER_FIELDS: readonly (keyof CampaignSettings)[] = ['campaign_type', 'caller_id_pool', 'caller_ids'];

/** The campaign's AI agent must be one of the tenant's agents not retired. */
async function assertAiAgent(tx: Tx, agentId: string | null): Promise<void> {
  if (agentId === null) return;
  const agent = await tx.aiAgent.findUnique({ where: { id: agentId }, select: { status: true } });
  if (!agent || agent.status === 'retired') throw invalid(`ai_agent_id: '${agentId}' is not an AI agent of this tenant that is not retired`);
}

const pick = (s: CampaignSettings, keys: readonly (keyof CampaignSettings)[]) => Object.fromEntries(keys.map((k) => [k, s[k]]));

export async function listCampaigns(deps: AppDeps, tenantId: string, limit: number, cursor?: string) {
  const rows = await withTenant(deps.db, tenantId, (tx) => tx.campaign.findMany(createdAtPageArgs(cursor, limit)));
  const { page, nextCursor } = paginate(rows, limit, createdAtKey);
  return { campaigns: page.map(campaignView), next_cursor: nextCursor };
}

export async function getCampaign(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.campaign.findUnique({ where: { id } }));
  if (!row) throw notFound();
  return campaignView(row);
}

/** A new campaign in state draft. The body is checked before any database work. */
export async function createCampaign(deps: AppDeps, tenantId: string, actor: Actor, write: CampaignWrite & { name: string }) {
  const { next } = applyCampaignWrite(NEW_CAMPAIGN, write);
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      await assertPoolInRegistry(tx, next.caller_id_pool);
      await assertCallerIdsNotForeign(tx, next.caller_ids);
      await assertSmsSenders(tx, next);
      await assertAiAgent(tx, next.ai_agent_id);
      if (next.carrier !== null) await carrierGatewayOf(tx, next.carrier, 'carrier');
      const row = await tx.campaign.create({ data: { ...campaignData(next, ALL_SETTINGS), tenantId, name: next.name } });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'campaign.created',
        subjectType: 'campaign',
        subjectId: row.id,
        payload: { state: row.state, settings: pick(next, ALL_SETTINGS) },
      });
      return campaignView(row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(DUPLICATE_NAME);
    throw err;
  }
}

/**
 * Applies a patch under a row lock, so the rules between fields (window order, min <= max
 * ratio, sms_body for sms_blast) hold against concurrent patches. A patch that changes nothing
 * writes nothing and records no audit entry.
 */
export async function updateCampaign(deps: AppDeps, tenantId: string, actor: Actor, id: string, write: CampaignWrite) {
  try {
    return await withTenant(deps.db, tenantId, async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM campaigns WHERE id = ${id}::uuid FOR UPDATE`;
      const row = locked.length ? await tx.campaign.findUnique({ where: { id } }) : null;
      if (!row) throw notFound();
      const { next, changed } = applyCampaignWrite(campaignSettings(row), write);
      if (changed.length === 0) return campaignView(row);
      if (changed.includes('caller_id_pool')) await assertPoolInRegistry(tx, next.caller_id_pool);
      if (changed.includes('caller_ids')) await assertCallerIdsNotForeign(tx, next.caller_ids);
      if (changed.some((key) => SMS_SENDER_FIELDS.includes(key))) await assertSmsSenders(tx, next);
      if (changed.includes('ai_agent_id')) await assertAiAgent(tx, next.ai_agent_id);
      if (changed.includes('carrier') && next.carrier !== null) await carrierGatewayOf(tx, next.carrier, 'carrier');
      const updated = await tx.campaign.update({ where: { id }, data: campaignData(next, changed) });
      await appendAudit(tx, tenantId, {
        actorType: actor.type,
        actorId: actor.id,
        action: 'campaign.updated',
        subjectType: 'campaign',
        subjectId: row.id,
        payload: { changed, values: pick(next, changed) },
      });
      return campaignView(updated);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(DUPLICATE_NAME);
    throw err;
  }
}
