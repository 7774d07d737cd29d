import type { DialCallbackInput, DialCallbackResult } from '../../contracts/callback';
import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { treatmentOf } from '../../../workflows/call-flow';
import { callbackWorkflowId } from '../../../workflows/ids';
import { releaseReservations } from '../agents/agent.repository';
import { billingRefusal } from '../billing/billing.service';
import { lockCommunications } from '../compliance/communications-lock.repository';
import { complianceSnapshot, evaluateInTx } from '../compliance/compliance.service';
import { callInFlight, findAgent, lockDebt, pushNextDialable, reserveAgent } from '../dial/dial.repository';
import { channelsInUse, dialsLastSecond, tenantLimits } from '../dialer/capacity.repository';
import { availableAgents, readCampaign, type CampaignRow } from '../dialer/dial-tick.repository';
import { callerIds, placeCalls, REDIAL_AFTER_MS, RING_TIMEOUT_SEC, tickRowId } from '../dialer/dial-tick.service';
import { activeDidNumbers, findCallbackCall, insertCallbackCall, lockCallback, setCallbackStatus, type CallbackCall } from './callback.repository';

/** How long the named agent stays reserved for the callback's call: the consumer's ring timeout plus room for the answer to arrive. */
const RESERVATION_MS = (RING_TIMEOUT_SEC + 15) * 1000;

/** The campaign a callback's call is placed for: one whose calls go to a live agent, or none. */
interface Placement {
  campaignId: string | null;
  campaignType: string;
  amdEnabled: boolean | null;
}

type Recorded = { kind: 'result'; result: DialCallbackResult } | { kind: 'recorded'; call: CallbackCall; placement: Placement };

const wait = (reason: string, blocked = false): Recorded => ({ kind: 'result', result: { outcome: 'wait', reason, blocked } });

/**
 * The caller id of a callback's call: the campaign's (its pool's active DIDs, else its legacy
 * caller_ids) when it has one; otherwise one of the tenant's active DIDs, in the destination's
 * area code when the tenant has one there. Null: no number to present (the pool is parked, or
 * the tenant has no active DID), and the callback waits rather than ringing from nowhere.
 */
async function callerIdFor(sql: SqlTx, campaign: CampaignRow | null, to: string, seed: string): Promise<string | null> {
  const own = campaign ? await callerIds(sql, campaign) : [];
  if (own === null) return null;
  const pool = own.length ? own : await activeDidNumbers(sql);
  if (pool.length === 0) return null;
  const local = pool.filter((n) => n.slice(0, 5) === to.slice(0, 5));
  const from = local.length ? local : pool;
  let h = 0;
  for (const ch of seed) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return from[h % from.length]!;
}

/**
 * One try of the timer at dialing a callback it owns (one naming its agent, or of no campaign),
 * in one tenant transaction: the communications lock (the dial loop's and the SMS sends'), the
 * named agent dialable now (active, available, reachable, not reserved: CONTRACT section 10) or,
 * with no agent named, any dialable seat; the debt locked with no call in flight; a caller id;
 * the tenant's max_cps and channels; then the compliance engine, as for an automated dial (no
 * human-initiated exemption). Allowed: the attempt (with the agent), the debt's redial rest, the
 * agent's reservation and the callback done (audited callback.dialed) commit together, then the
 * call goes to the switch carrying dd_agent_id, so the call session bridges that agent only.
 * Anything that is not dialable now answers `wait` and is decided again at the next try.
 * A retried try finds the attempt an earlier one recorded (its id derives from the try) and only
 * places it. Null: the callback is not the tenant's.
 */
export async function dialCallback(deps: AppDeps, input: DialCallbackInput): Promise<DialCallbackResult | null> {
  const callAttemptId = tickRowId(`callback:${input.callbackId}`, input.attempt);
  const earlier = await withTenantSql(deps.db, input.tenantId, (sql) => findCallbackCall(sql, callAttemptId));
  if (earlier) return place(deps, input.tenantId, earlier, await placementOf(deps, input.tenantId, earlier.campaign_id));

  const recorded = await withTenantSql<Recorded | null>(deps.db, input.tenantId, async (sql) => {
    const callback = await lockCallback(sql, input.tenantId, input.callbackId);
    if (!callback) return null;
    if (callback.status !== 'pending') return { kind: 'result', result: { outcome: 'closed', status: callback.status } };
    if (callback.agent_id === null && callback.campaign_id !== null) return { kind: 'result', result: { outcome: 'run' } };
    if (!deps.esl?.isUp()) return wait('switch_unavailable');
    if (await billingRefusal(sql)) return wait('billing_blocked');

    // A campaign whose calls are not agent calls (a message, a menu, an AI agent, texts) lends the
    // callback nothing: the consumer asked for a person, so the call is an agent call of no campaign.
    const read = callback.campaign_id ? await readCampaign(sql, callback.campaign_id) : null;
    const campaign = read && treatmentOf(read.campaign_type) === 'agent' ? read : null;

    await lockCommunications(sql, input.tenantId);
    if (callback.agent_id !== null) {
      const agent = await findAgent(sql, input.tenantId, callback.agent_id);
      if (!agent || agent.status !== 'active' || !agent.sip_extension) return wait('agent_inactive');
      if (agent.presence !== 'available') return wait(`agent_${agent.presence}`);
      if (agent.device_mode === 'browser' && !agent.registered) return wait('agent_not_registered');
      if (agent.reserved) return wait('agent_reserved');
    } else if ((await availableAgents(sql)) === 0) {
      return wait('no_agent_available');
    }

    const now = new Date();
    const debt = await lockDebt(sql, input.tenantId, callback.debt_id);
    if (!debt) return null;
    if (await callInFlight(sql, debt.id, callback.contact_phone, now)) return wait('call_in_flight');
    const from = await callerIdFor(sql, campaign, callback.contact_phone, callback.id);
    if (from === null) return wait('no_caller_id');
    const limits = await tenantLimits(sql);
    if (limits.max_cps !== null && (await dialsLastSecond(sql, now)) >= limits.max_cps) return wait('capacity_full');
    if (limits.max_concurrent_channels !== null && (await channelsInUse(sql, now)) >= limits.max_concurrent_channels) return wait('capacity_full');

    const [decision] = await evaluateInTx(
      sql,
      [{ debtId: debt.id, phone: callback.contact_phone, campaignId: campaign ? callback.campaign_id : null, channel: 'voice', initiation: 'automated', artificialVoice: false }],
      { actor: { type: 'workflow', id: callbackWorkflowId(input.tenantId, callback.id) }, now },
    );
    if (!decision?.allowed || decision.decisionId === null) return wait(decision?.gate ?? 'unrecorded', true);

    const call = await insertCallbackCall(sql, {
      id: callAttemptId,
      debtId: debt.id,
      campaignId: campaign ? callback.campaign_id : null,
      agentId: callback.agent_id,
      fromNumber: from,
      toNumber: callback.contact_phone,
      startedAt: now,
      snapshot: complianceSnapshot(decision),
    });
    await pushNextDialable(sql, debt.id, now, REDIAL_AFTER_MS);
    if (callback.agent_id !== null) await reserveAgent(sql, callback.agent_id, call.id, RESERVATION_MS);
    await setCallbackStatus(sql, input.tenantId, callback.id, 'done');
    await appendAuditSql(sql, input.tenantId, [
      {
        actorType: 'workflow',
        actorId: callbackWorkflowId(input.tenantId, callback.id),
        action: 'callback.dialed',
        subjectType: 'callback',
        subjectId: callback.id,
        payload: { from: 'pending', to: 'done', call_attempt_id: call.id, agent_id: callback.agent_id, campaign_id: call.campaign_id },
      },
    ]);
    const placement: Placement = campaign
      ? { campaignId: callback.campaign_id, campaignType: campaign.campaign_type, amdEnabled: campaign.amd_enabled }
      : { campaignId: null, campaignType: 'callback', amdEnabled: null };
    return { kind: 'recorded', call, placement };
  });
  if (recorded === null) return null;
  if (recorded.kind === 'result') return recorded.result;
  return place(deps, input.tenantId, recorded.call, recorded.placement);
}

async function placementOf(deps: AppDeps, tenantId: string, campaignId: string | null): Promise<Placement> {
  if (campaignId === null) return { campaignId: null, campaignType: 'callback', amdEnabled: null };
  const campaign = await withTenantSql(deps.db, tenantId, (sql) => readCampaign(sql, campaignId));
  return { campaignId, campaignType: campaign?.campaign_type ?? 'manual', amdEnabled: campaign?.amd_enabled ?? null };
}

/**
 * Sends the recorded call (placeCalls: a call already sent is not sent again). The named agent's
 * reservation ends at once when the switch did not take the call.
 */
async function place(deps: AppDeps, tenantId: string, call: CallbackCall, placement: Placement): Promise<DialCallbackResult> {
  const outcome = await placeCalls(
    deps,
    tenantId,
    { id: placement.campaignId, campaign_type: placement.campaignType, amd_enabled: placement.amdEnabled },
    [call],
    { gateway: null, agent_domain: null },
    call.agent_id ? { dd_agent_id: call.agent_id } : {},
  );
  const placed = call.call_uuid !== null || outcome.placed > 0;
  if (!placed) await withTenantSql(deps.db, tenantId, (sql) => releaseReservations(sql, [call.id]));
  return { outcome: 'dialed', status: 'done', callAttemptId: call.id, placed };
}
