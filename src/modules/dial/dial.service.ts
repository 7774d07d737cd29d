import { randomInt, randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { AppError, conflict, internal, notFound, throttled, unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { EslUnavailableError, eslErrorToAppError } from '../../switch/esl';
import { callAttemptView } from '../cdr/call-attempt.views';
import { findCallByUuid } from '../cdr/cdr.repository';
import { attemptProfile } from '../compliance/compliance-preflight.service';
import { lockCommunications } from '../compliance/communications-lock.repository';
import { complianceSnapshot, evaluateInTx } from '../compliance/compliance.service';
import type { Gate } from '../compliance/compliance.types';
import { channelsInUse, dialsLastSecond, tenantLimits } from '../dialer/capacity.repository';
import { availableAgents, readCampaign, type PlannedCall } from '../dialer/dial-tick.repository';
import { callerIds, REDIAL_AFTER_MS, RING_TIMEOUT_SEC } from '../dialer/dial-tick.service';
import { placeCallWorkflow } from '../../../workflows/place-call.workflow';
import { placeCallWorkflowId } from '../../../workflows/ids';
import { callInFlight, debtContacts, findAgent, insertAttempt, lockDebt, notPlacedCause, pushNextDialable, reserveAgent } from './dial.repository';
import { releaseReservations } from '../agents/agent.repository';
import type { DialInput, DialResult } from './dial.schemas';
import { billingRefusal } from '../billing/billing.service';
import { TRUNK_CAUSES } from '../carriers/carrier-gateway';

/** The campaign types whose calls a person starts; every other type is dialed by its run. */
export const HUMAN_INITIATED_TYPES: readonly string[] = ['preview', 'manual'];

/** How long a named agent stays reserved for its dial: the consumer's ring timeout plus room for the answer to arrive. */
const RESERVATION_MS = (RING_TIMEOUT_SEC + 15) * 1000;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Recorded =
  | { status: 'blocked'; reason: Gate; decision_id: string }
  | { status: 'recorded'; call: PlannedCall };

/**
 * A human-initiated dial (preview and manual campaigns). One tenant transaction takes the tenant's
 * communications lock (the dial tick's and the SMS sends'), checks the request, applies the rate
 * brake, decides with the engine and, when allowed, records the attempt; only after that commits
 * is the switch told. Every refusal before the engine leaves no trace; the engine's refusal is
 * recorded evidence and a 200.
 */
export async function dial(
  deps: AppDeps,
  tenantId: string,
  actor: { type: string; id: string | null },
  campaignId: string,
  input: DialInput,
): Promise<DialResult> {
  const agentId = input.agent_id ?? null;
  const recorded = await withTenantSql<Recorded>(deps.db, tenantId, async (sql) => {
    const campaign = await readCampaign(sql, campaignId);
    if (!campaign) throw notFound();
    if (!HUMAN_INITIATED_TYPES.includes(campaign.campaign_type)) {
      throw conflict(`dial is for preview and manual campaigns; this campaign is ${campaign.campaign_type} and is dialed by its run`);
    }
    if (campaign.state !== 'running') throw conflict(`the campaign is ${campaign.state}; dial needs it running`);
    const refusal = await billingRefusal(sql);
    if (refusal) throw refusal;

    // The lock every call and text decision of the tenant takes (the loop's and the SMS sends' too):
    // ceilings and cross-channel caps are never overshot. Before the debt's row lock, as they take it.
    await lockCommunications(sql, tenantId);
    const debt = UUID_RE.test(input.debt_id) ? await lockDebt(sql, tenantId, input.debt_id) : null;
    if (!debt) throw notFound('debt not found');
    if (debt.campaign_id !== campaignId) throw unprocessable('the debt does not belong to this campaign');

    const contacts = await debtContacts(sql, tenantId, debt.id);
    let phone: string;
    if (input.phone) {
      if (!contacts.some((c) => c.phone_e164 === input.phone)) throw unprocessable('phone is not a contact of the debt');
      phone = input.phone;
    } else {
      const primary = contacts.find((c) => c.is_primary);
      if (!primary) throw unprocessable('the debt has no primary contact; name the phone to dial');
      phone = primary.phone_e164;
    }

    if (agentId !== null) {
      const agent = await findAgent(sql, tenantId, agentId);
      if (!agent) throw unprocessable('agent_id is not an agent of this tenant');
      if (agent.status !== 'active') throw unprocessable('the agent is not active');
      if (!agent.sip_extension) throw unprocessable('the agent has no sip_extension to bridge the call to');
      // Only the named agent may take the call: one who cannot would leave the consumer to the abandonment message.
      if (agent.presence !== 'available') throw conflict(`the agent is ${agent.presence}, not available`);
      if (agent.device_mode === 'browser' && !agent.registered) throw conflict("the agent's softphone is not registered on the switch");
      if (agent.reserved) throw conflict('the agent is reserved for another dial');
    } else if ((await availableAgents(sql)) === 0) {
      throw conflict('no agent is available (available, reachable and not reserved) to take the call');
    }

    if (!deps.esl?.isUp()) throw eslErrorToAppError(new EslUnavailableError('the switch control link is down'));

    // Read after the lock, so the counts below see every dial and text committed before this one.
    const now = new Date();
    if (await callInFlight(sql, debt.id, phone, now)) throw conflict('a call to this debt or number is still in progress');
    const fromNumbers = await callerIds(sql, campaign);
    if (fromNumbers === null) throw conflict('every DID of the campaign caller_id_pool is parked (not active)');
    const limits = await tenantLimits(sql);
    if (limits.max_cps !== null && (await dialsLastSecond(sql, now)) >= limits.max_cps) {
      throw throttled(`the tenant's max_cps (${limits.max_cps}) is reached; retry with backoff`);
    }
    if (limits.max_concurrent_channels !== null && (await channelsInUse(sql, now)) >= limits.max_concurrent_channels) {
      throw throttled(`every channel of the tenant's max_concurrent_channels (${limits.max_concurrent_channels}) is in use; retry with backoff`);
    }

    const [decision] = await evaluateInTx(sql, [{ debtId: debt.id, phone, campaignId, ...attemptProfile(campaign) }], { actor, now });
    // Evidence that was not written means no decision to show or to dial on.
    if (!decision?.decisionId) throw internal('the compliance decision was not recorded; nothing was dialed');
    if (!decision.allowed) return { status: 'blocked', reason: decision.gate ?? 'tenant_policy', decision_id: decision.decisionId };

    const call = await insertAttempt(sql, {
      id: randomUUID(),
      debtId: debt.id,
      campaignId,
      agentId,
      // Spreads manual dials over the pool as the loop's rotation does.
      fromNumber: fromNumbers.length ? fromNumbers[randomInt(fromNumbers.length)]! : null,
      toNumber: phone,
      startedAt: now,
      snapshot: complianceSnapshot(decision),
    });
    await pushNextDialable(sql, debt.id, now, REDIAL_AFTER_MS);
    if (agentId !== null) await reserveAgent(sql, agentId, call.id, RESERVATION_MS);
    return { status: 'recorded' as const, call };
  });

  if (recorded.status === 'blocked') return recorded;

  const { call } = recorded;
  // The switch is commanded only from activities: the placement runs as a one-step workflow on the
  // worker, and the request waits for it (a few milliseconds: the originate is submitted, not awaited).
  if (!deps.temporal) throw internal('no workflow service is configured; the attempt is recorded and was not placed');
  let outcome: { placed: number; notPlaced: number };
  try {
    outcome = await deps.temporal.workflow.execute(placeCallWorkflow, {
      workflowId: placeCallWorkflowId(tenantId, call.id),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [{ tenantId, callAttemptId: call.id, agentId }],
    });
  } catch (err) {
    deps.logger.error({ err: (err as Error).message, call_attempt_id: call.id }, 'placing a manual dial failed');
    throw new AppError(502, 'dial_error', 'the call could not be placed; the attempt stays recorded (reaped if it never rang)', { call_id: call.id });
  }
  if (outcome.placed === 0) {
    const cause = await withTenantSql(deps.db, tenantId, async (sql) => {
      await releaseReservations(sql, [call.id]);
      return notPlacedCause(sql, call.id);
    });
    // The attempt and its not_placed row stay: the decision was made and the CDR tells what became of it.
    if (cause !== null && (Object.values(TRUNK_CAUSES) as string[]).includes(cause)) {
      throw new AppError(409, 'conflict', `the campaign's trunk cannot carry calls (${cause}); nothing rang`, { call_id: call.id });
    }
    if (cause === 'ESL_UNAVAILABLE') {
      throw new AppError(503, 'esl_unavailable', 'the switch control link went down before the call was sent; nothing rang; retry with backoff', { call_id: call.id });
    }
    throw new AppError(502, 'dial_error', `the switch refused the call (${cause ?? 'UNKNOWN'})`, { call_id: call.id });
  }
  const row = await withTenantSql(deps.db, tenantId, (sql) => findCallByUuid(sql, tenantId, call.id));
  if (!row) throw internal('the placed call attempt could not be read back');
  return { status: 'dialing', call_id: row.callUuid!, call_attempt: callAttemptView(row, deps.box) };
}
