import { recordCallEvent } from '../call-events/call-event.service';
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { dialerMetrics } from '../../lib/metrics';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { createSwitchCommands, EslCommandError, EslTimeoutError, EslUnavailableError, type SwitchCommands } from '../../switch/esl';
import { amdEffective, treatmentOf } from '../../../workflows/call-flow';
import { insertOutcome } from '../cdr/cdr.repository';
import { releaseAgentsOfCalls } from './call-session.service';
import { startWrapUpTimers } from '../agent-wrap-up/wrap-up.service';
import { lockCommunications } from '../compliance/communications-lock.repository';
import { attemptProfile } from '../compliance/compliance-preflight.service';
import { complianceSnapshot, evaluateInTx } from '../compliance/compliance.service';
import { claimDialableLeads } from '../leads/lead.repository';
import { channelsInUse, dialsLastSecond } from './capacity.repository';
import { AbandonmentController, linesToDial, pacingModeOf, type PacingState } from './pacing';
import { nextPlannedGainAt, plannedStaffingForTick } from '../planned-shifts/planned-staffing.service';
import { smsBlastTick } from './sms-blast.service';
import { aiVoiceLines } from '../ai-calls/ai-dial.service';
import type { RunnerOptions } from './runner-options';
import type { DialTickInput, DialTickResult, RunCounters, TickResult } from '../../contracts/campaign-run';
import { nextTick, windowOpensAt, type CallingWindow } from './next-wake';
import { nextLeadDueAt, nextSeatFreeAt } from './next-wake.repository';
import { billingRefusal } from '../billing/billing.service';
import { campaignTrunk, ensureGateway, type Trunk } from '../carriers/carrier-gateway';
import { activeElsewhereSql } from '../dids/did.repository';
import {
  activePoolNumbers,
  availableAgents,
  claimDueCallbacks,
  claimUnsentAttempts,
  countRunCalls,
  expiredCalls,
  findAttempts,
  findRecordedCall,
  markCallbacksDialed,
  readCampaign,
  readCampaignType,
  readPlacementCampaign,
  recordAttempts,
  restDecidedDebts,
  restRefusedCallbacks,
  ringingCalls,
  type AttemptToRecord,
  type CampaignRow,
  type PlannedCall,
} from './dial-tick.repository';

/** After a placed attempt the debt rests this long before the loop dials it again. */
export const REDIAL_AFTER_MS = 4 * 3600 * 1000;
/** Ring time of a consumer leg before the switch gives up (NO_ANSWER). */
export const RING_TIMEOUT_SEC = 45;

/** The tick's input and result are the campaign run contract's (src/contracts/campaign-run.ts). */
export type TickInput = DialTickInput;
export type { RunCounters, TickResult };

/**
 * The id of the i-th attempt row of a tick, derived from the tick key: a retried tick activity
 * finds the rows its earlier try committed instead of deciding and inserting a second batch.
 */
export function tickRowId(tickKey: string, index: number): string {
  const h = createHash('sha256').update(`${tickKey}#${index}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}


/**
 * The caller ids this tick may present: the ACTIVE DIDs of caller_id_pool (re-resolved every tick,
 * so a quarantined number stops at once), or the legacy caller_ids when the pool is empty. An
 * empty result for a non-empty pool means every DID is parked: the campaign dials nothing.
 * A legacy caller id another tenant has since made its active DID is left out (CONTRACT.md section
 * 13): it was checked when the campaign was written, but a number nobody held then may be claimed
 * later. With every one left out the campaign presents what a campaign without caller_ids does.
 */
export async function callerIds(sql: SqlTx, campaign: CampaignRow): Promise<string[] | null> {
  if (campaign.caller_id_pool.length === 0) {
    const taken = new Set(await activeElsewhereSql(sql, campaign.caller_ids));
    return taken.size ? campaign.caller_ids.filter((e164) => !taken.has(e164)) : campaign.caller_ids;
  }
  const numbers = await activePoolNumbers(sql, campaign.caller_id_pool);
  return numbers.length ? numbers : null;
}

interface Decided {
  state: string | null;
  calls: PlannedCall[];
  blocked: number;
  idle: string | null;
  tokens: number | null;
  overDialAllowed: boolean;
  /** The gate of each refusal, counted once the transaction committed. */
  blockedGates?: string[];
}

/**
 * One tenant transaction: re-read the campaign, size the tick, claim candidates (due callbacks
 * first), decide them with the engine and record the attempts. Evidence and attempt rows commit
 * together, before anything is sent to the switch.
 */
async function decideAndRecord(deps: AppDeps, input: TickInput, ratio: number, ids: string[], now: Date): Promise<Decided> {
  return withTenantSql(deps.db, input.tenantId, async (sql) => {
    const campaign = await readCampaign(sql, input.campaignId);
    const overDialAllowed = Boolean(campaign?.abandon_seller_name && campaign?.abandon_seller_phone);
    const none = (idle: string, tokens: number | null = null): Decided => ({ state: campaign?.state ?? null, calls: [], blocked: 0, idle, tokens, overDialAllowed });
    if (!campaign) return none('campaign_gone');
    if (campaign.state !== 'running') return none('not_running');
    const treatment = treatmentOf(campaign.campaign_type);
    const mode = pacingModeOf(campaign.campaign_type);
    if (treatment === 'none') return none('type_not_dialed_by_loop');
    if (mode === 'none') return none('human_initiated_only');
    if (await billingRefusal(sql)) return none('billing_blocked');
    // A trunk that cannot carry calls (disabled, retired): no lead is claimed or decided until it can.
    const trunk = await campaignTrunk(sql, input.campaignId, input.options.gateway);
    if (!trunk.ok) return none(trunk.cause.toLowerCase());

    // Capacity is the tenant's, shared by its campaigns: reserve it one tick at a time. The lock is
    // the one every call and text decision takes, so the caps that count both channels hold.
    await lockCommunications(sql, input.tenantId);
    const fromNumbers = await callerIds(sql, campaign);
    if (fromNumbers === null) return none('caller_id_pool_parked');
    const cpsLeft = campaign.max_cps === null ? null : Math.max(0, campaign.max_cps - (await dialsLastSecond(sql, now)));
    const channelsLeft =
      campaign.max_concurrent_channels === null ? Infinity : Math.max(0, campaign.max_concurrent_channels - (await channelsInUse(sql, now)));
    const capacity = Math.min(cpsLeft ?? Infinity, channelsLeft);
    let lines: number;
    if (treatment === 'ai') {
      const ai = await aiVoiceLines(sql, input.campaignId, now, capacity, await ringingCalls(sql, input.campaignId, now));
      if (ai.refusal) return none(ai.refusal, cpsLeft);
      if (ai.lines <= 0) return none(capacity <= 0 ? 'capacity_full' : 'ai_concurrency_full', cpsLeft);
      lines = ai.lines;
    } else if (treatment === 'agent') {
      lines = linesToDial({
        mode,
        availableAgents: await availableAgents(sql),
        plan: await plannedStaffingForTick(sql, now),
        ringing: await ringingCalls(sql, input.campaignId, now),
        ratio,
        overDialAllowed,
        capacity,
      });
    } else {
      lines = Math.floor(capacity);
    }
    const want = Math.min(lines, input.options.batch_size);
    if (want <= 0) return none(capacity <= 0 ? 'capacity_full' : 'no_agent_capacity', cpsLeft);

    const callbacks = await claimDueCallbacks(sql, input.campaignId, now, want);
    const leads = await claimDialableLeads(
      sql,
      input.campaignId,
      now,
      want - callbacks.length,
      callbacks.map((c) => c.debt_id),
    );
    const candidates = [
      ...callbacks.map((c) => ({ debtId: c.debt_id, phone: c.contact_phone, callbackId: c.id })),
      ...leads.map((l) => ({ debtId: l.debtId, phone: l.phone, callbackId: null as string | null })),
    ];
    if (candidates.length === 0) return none('no_dialable_leads', cpsLeft);

    const profile = attemptProfile(campaign);
    const decisions = await evaluateInTx(
      sql,
      candidates.map((c) => ({ debtId: c.debtId, phone: c.phone, campaignId: input.campaignId, ...profile })),
      { actor: { type: 'workflow', id: input.workflowId }, now },
    );
    const planned: AttemptToRecord[] = [];
    const refusedDebts: string[] = [];
    const blockedGates: string[] = [];
    // A lead refused for quiet hours rests until its calling window opens when that comes before
    // the cooldown ends: the run wakes for it then (the engine decides again at that moment).
    const cooldownEnd = new Date(now.getTime() + input.options.blocked_cooldown_ms);
    const restUntil: string[] = [];
    const window: CallingWindow = {
      start: campaign.calling_window_start,
      end: campaign.calling_window_end,
      defaultTimezone: campaign.default_timezone,
      destinationLocal: campaign.calling_window_destination_local,
    };
    decisions.forEach((decision, i) => {
      const c = candidates[i]!;
      // A refusal whose evidence could not be recorded has no decision id: never dial on it.
      if (!decision.allowed || decision.decisionId === null) {
        refusedDebts.push(c.debtId);
        blockedGates.push(decision.gate ?? 'unrecorded');
        const opens = decision.gate === 'quiet_hours' ? windowOpensAt(now, decision.zones, window) : null;
        restUntil.push((opens !== null && opens < cooldownEnd ? opens : cooldownEnd).toISOString());
        return;
      }
      const from = fromNumbers.length ? fromNumbers[(planned.length + hashIndex(input.tickKey)) % fromNumbers.length]! : null;
      planned.push({ id: ids[planned.length]!, debt_id: c.debtId, to_number: c.phone, from_number: from, snapshot: complianceSnapshot(decision) });
    });

    const calls = planned.length ? await recordAttempts(sql, planned, input.campaignId, now, treatment === 'ai') : [];
    await restDecidedDebts(sql, planned.map((p) => p.debt_id), refusedDebts, now, REDIAL_AFTER_MS, restUntil);
    // A refused callback rests like a refused lead instead of taking every tick's batch.
    const refusedCallbacks = candidates.filter((c, i) => c.callbackId !== null && !(decisions[i]!.allowed && decisions[i]!.decisionId !== null));
    if (refusedCallbacks.length) {
      await restRefusedCallbacks(sql, refusedCallbacks.map((c) => c.callbackId), now, input.options.blocked_cooldown_ms);
    }
    // A callback the loop placed has been honoured; an agent still records the conversation's outcome.
    const dialedCallbacks = candidates
      .map((c, i) => ({ c, call: planned.find((p) => p.debt_id === c.debtId && decisions[i]!.allowed) }))
      .filter((x) => x.c.callbackId !== null && x.call);
    if (dialedCallbacks.length) {
      await markCallbacksDialed(sql, dialedCallbacks.map((x) => x.c.callbackId));
      await appendAuditSql(
        sql,
        input.tenantId,
        dialedCallbacks.map((x) => ({
          actorType: 'workflow' as const,
          actorId: input.workflowId,
          action: 'callback.dialed',
          subjectType: 'callback',
          subjectId: x.c.callbackId,
          payload: { from: 'pending', to: 'done', call_attempt_id: x.call!.id },
        })),
      );
    }
    return {
      state: campaign.state,
      calls,
      blocked: refusedDebts.length,
      blockedGates,
      idle: null,
      tokens: cpsLeft === null ? null : Math.max(0, cpsLeft - calls.length),
      overDialAllowed,
    };
  });
}

/** Spreads consecutive ticks over the caller-id pool. */
function hashIndex(key: string): number {
  return createHash('sha256').update(key).digest().readUInt16BE(0);
}

/**
 * Sends the recorded attempts to the switch. Each row's call_uuid is filled (the documented
 * write-once fill) and committed before its originate is sent, so a retried tick never sends a
 * call twice: a row with a call_uuid counts as sent. The cost is the narrow window between that
 * commit and the send: a worker killed there leaves an attempt that was recorded but never rang,
 * which the reaper closes. For a collector an unplaced call is harmless; a doubled one is not.
 */
export async function placeCalls(
  deps: AppDeps,
  tenantId: string,
  /** `id` null: a call of no campaign (a callback without one), through the deployment default trunk. */
  campaign: { id: string | null; campaign_type: string; amd_enabled: boolean | null },
  calls: PlannedCall[],
  options: Pick<RunnerOptions, 'gateway' | 'agent_domain'>,
  extraVariables: Record<string, string> = {},
): Promise<{ placed: number; notPlaced: number }> {
  const pending = calls.filter((c) => c.call_uuid === null);
  if (pending.length === 0) return { placed: 0, notPlaced: 0 };
  const claimed = await withTenantSql(deps.db, tenantId, (sql) => claimUnsentAttempts(sql, pending.map((c) => c.id)));
  const mine = new Set(claimed.map((r) => r.id));
  // The trunk is read again at every placement: a carrier disabled or retired since the run started carries nothing.
  const campaignId = campaign.id;
  const trunk: Trunk =
    campaignId === null ? { ok: true, gateway: null, carrierId: null } : await withTenantSql(deps.db, tenantId, (sql) => campaignTrunk(sql, campaignId, options.gateway));
  const esl = deps.esl;
  const gateway = trunk.ok ? (trunk.gateway ?? undefined) : undefined;
  const commands = esl ? createSwitchCommands(esl, { gateway, agentDomain: options.agent_domain ?? undefined }) : null;
  const refusal = await trunkRefusal(trunk, commands);
  const amd = amdEffective(campaign.campaign_type, campaign.amd_enabled);
  let placed = 0;
  let notPlaced = 0;
  for (const call of pending.filter((c) => mine.has(c.id))) {
    const sentAt = new Date();
    if (refusal !== null) {
      notPlaced += 1;
      deps.logger.warn({ call_attempt_id: call.id, cause: refusal }, 'trunk cannot carry the call; recorded not_placed');
      await recordNotPlaced(deps, tenantId, call.id, refusal);
      continue;
    }
    try {
      if (!commands) throw new EslUnavailableError('this process has no switch link');
      await commands.originate({
        to: { type: 'pstn', number: call.to_number },
        uuid: call.id,
        callerIdNumber: call.from_number ?? undefined,
        timeoutSec: RING_TIMEOUT_SEC,
        amd,
        // Read back by the event relay: the call session needs the tenant, the attempt and where agents live.
        variables: {
          dd_tenant_id: tenantId,
          ...(campaign.id ? { dd_campaign_id: campaign.id } : {}),
          dd_call_attempt_id: call.id,
          ...(options.agent_domain ? { dd_agent_domain: options.agent_domain } : {}),
          ...extraVariables,
        },
      });
      placed += 1;
      dialerMetrics.dialed(campaign.campaign_type, 1);
      await timelineOriginate(deps, tenantId, call.id, sentAt, amd);
    } catch (err) {
      // A timed-out command may have reached the switch: the call may ring, so leave it to the
      // call's events or the reaper. A link that was down or a refusal means nothing rang.
      if (err instanceof EslTimeoutError) {
        placed += 1;
        dialerMetrics.dialed(campaign.campaign_type, 1);
        await timelineOriginate(deps, tenantId, call.id, sentAt, amd);
        continue;
      }
      if (!(err instanceof EslUnavailableError) && !(err instanceof EslCommandError)) throw err;
      notPlaced += 1;
      const cause = err instanceof EslCommandError ? err.switchCause : 'ESL_UNAVAILABLE';
      deps.logger.warn({ call_attempt_id: call.id, cause }, 'originate failed; recorded not_placed');
      await recordNotPlaced(deps, tenantId, call.id, cause);
    }
  }
  return { placed, notPlaced };
}

/** The final row of an attempt the switch never took; `cause` says why (a switch cause, ESL_UNAVAILABLE, TRUNK_*). */
async function recordNotPlaced(deps: AppDeps, tenantId: string, callAttemptId: string, cause: string): Promise<void> {
  await withTenantSql(deps.db, tenantId, (sql) =>
    insertOutcome(sql, deps.box, tenantId, callAttemptId, {
      disposition: 'not_placed',
      endedAt: new Date(),
      answeredAt: null,
      hangupCause: cause,
      sipResponseCode: null,
      amdVerdict: null,
      agentId: null,
    }),
  );
}

/**
 * Why no call of this placement may go out through its trunk, or null: the carrier is not active
 * (its gateway is then removed from the switch, best effort), or the switch does not have the
 * carrier's gateway even after loading it from the configuration binding (INVALID_GATEWAY, the
 * switch's own word). Without a switch link the originate path records ESL_UNAVAILABLE itself.
 */
async function trunkRefusal(trunk: Trunk, commands: SwitchCommands | null): Promise<string | null> {
  if (!trunk.ok) {
    await commands?.killGateway(trunk.gateway).catch(() => undefined);
    return trunk.cause;
  }
  if (trunk.gateway === null || !commands) return null;
  try {
    return (await ensureGateway(commands, trunk.gateway)) ? null : 'INVALID_GATEWAY';
  } catch (err) {
    if (err instanceof EslCommandError) return err.switchCause;
    if (err instanceof EslUnavailableError) return 'ESL_UNAVAILABLE';
    if (err instanceof EslTimeoutError) return 'ESL_TIMEOUT';
    throw err;
  }
}

/**
 * The call's first timeline line (CONTRACT section 11), dated at the send. The call is on its way
 * whatever this write does: a failure is logged, not raised (a retried tick would not resend it).
 */
async function timelineOriginate(deps: AppDeps, tenantId: string, callAttemptId: string, at: Date, amd: boolean): Promise<void> {
  await recordCallEvent(deps, tenantId, callAttemptId, { event: 'originate', at, data: { amd }, dedupKey: 'originate' }).catch((err: unknown) =>
    deps.logger.warn({ call_attempt_id: callAttemptId, err: (err as Error).message }, 'originate not written to the call timeline'),
  );
}

/** Places one recorded attempt (a human-initiated dial): the activity behind placeCallWorkflow. */
export async function placeRecordedCall(
  deps: AppDeps,
  input: { tenantId: string; callAttemptId: string; agentId: string | null },
): Promise<{ placed: number; notPlaced: number }> {
  const row = await withTenantSql(deps.db, input.tenantId, (sql) => findRecordedCall(sql, input.callAttemptId));
  if (!row) throw ApplicationFailure.nonRetryable(`call attempt ${input.callAttemptId} not found`, 'CallAttemptNotFound');
  return placeCalls(
    deps,
    input.tenantId,
    { id: row.campaign_id, campaign_type: row.campaign_type, amd_enabled: row.amd_enabled },
    [row],
    { gateway: null, agent_domain: null },
    input.agentId ? { dd_agent_id: input.agentId } : {},
  );
}

/**
 * Calls of the campaign still open `call_ttl_ms` after they were placed: a `reaped` final row,
 * then a hang-up on the switch when the channel still exists (a lost event must not keep a
 * channel, or a capacity slot, forever).
 */
async function reapExpired(deps: AppDeps, input: TickInput, now: Date): Promise<number> {
  const reaped = await withTenantSql(deps.db, input.tenantId, async (sql) => {
    const rows = await expiredCalls(sql, input.campaignId, now, input.options.call_ttl_ms);
    const done: string[] = [];
    for (const row of rows) {
      const id = await insertOutcome(sql, deps.box, input.tenantId, row.id, {
        disposition: 'reaped',
        endedAt: now,
        answeredAt: null,
        hangupCause: 'ALLOTTED_TIMEOUT',
        sipResponseCode: null,
        amdVerdict: null,
        agentId: null,
      });
      if (id && row.call_uuid) done.push(row.call_uuid);
    }
    const wraps = await releaseAgentsOfCalls(sql, input.tenantId, rows.map((r) => r.id));
    return { count: rows.length, uuids: done, wraps };
  });
  // Not raised: the reaped calls are not reaped again, so a retry of this tick would not find their
  // wrap-ups. The call session still open on a reaped call finds its wrap-up again when the hang-up
  // below reaches it; without one, the seat waits for POST /v1/agents/{id}/wrap-up.
  await startWrapUpTimers(deps, input.tenantId, reaped.wraps).catch((err: unknown) =>
    deps.logger.warn({ tenant_id: input.tenantId, campaign_id: input.campaignId, err: (err as Error).message }, 'wrap-up timer not started for a reaped call'),
  );
  if (deps.esl?.isUp()) {
    const commands = createSwitchCommands(deps.esl);
    for (const uuid of reaped.uuids) {
      await commands.hangup(uuid, 'ALLOTTED_TIMEOUT').catch(() => undefined);
    }
  }
  return reaped.count;
}

/** What the run has done since it started, from the CDR (the first final row of each call is its engine outcome). */
export async function runCounters(deps: AppDeps, tenantId: string, campaignId: string, since: Date): Promise<RunCounters> {
  return withTenantSql(deps.db, tenantId, (sql) => countRunCalls(sql, campaignId, since));
}

/** Defaults of a predictive campaign that leaves its pacing fields null. */
export const DEFAULT_PACING = { minRatio: 1, maxRatio: 3, threshold: 0.03 };

/**
 * Feeds the calls connected and abandoned since the previous tick to the predictive controller
 * and returns its next state. The bounds are re-read every tick, so a PATCH applies at once.
 */
export async function pace(deps: AppDeps, input: TickInput, run: RunCounters): Promise<PacingState> {
  const campaign = await withTenantSql(deps.db, input.tenantId, (sql) => readCampaign(sql, input.campaignId));
  const minRatio = campaign?.min_dial_ratio ? Number(campaign.min_dial_ratio) : DEFAULT_PACING.minRatio;
  const maxRatio = Math.max(minRatio, campaign?.max_dial_ratio ? Number(campaign.max_dial_ratio) : DEFAULT_PACING.maxRatio);
  const threshold = campaign?.abandonment_threshold ? Number(campaign.abandonment_threshold) : DEFAULT_PACING.threshold;
  const controller = new AbandonmentController({ minRatio, maxRatio, threshold, initialRatio: minRatio }, { ...input.pacing, recent: [...input.pacing.recent] });
  const last = input.lastCounters;
  controller.record(Math.max(0, run.connected - (last?.connected ?? 0)), Math.max(0, run.abandoned - (last?.abandoned ?? 0)));
  // Only a predictive run over-dials (the other types dial one line per seat), and only while it
  // dials: a run with nothing placed and nothing in flight has no evidence to move its ratio on.
  const dialing = run.in_flight > 0 || run.dialed > (last?.dialed ?? 0);
  if (campaign && pacingModeOf(campaign.campaign_type) === 'predictive' && dialing) controller.adjust();
  const state = controller.snapshot;
  // The bounds hold from the first tick on (a PATCH of them applies at once), adjusted or not.
  return { ...state, ratio: Math.min(maxRatio, Math.max(minRatio, state.ratio)) };
}

/**
 * One tick of a campaign run, then when to tick again (next-wake.ts): a run that found nothing to
 * do learns the earliest moment a lead, a callback or a seat becomes due, read set-based only then.
 */
export async function dialTick(deps: AppDeps, input: TickInput, now: Date = new Date()): Promise<DialTickResult> {
  const { unpaced, ...result } = await tickOnce(deps, input, now);
  const idleFor = result.state === 'running' && result.placed + result.blocked + result.notPlaced + result.run.in_flight === 0 ? result.idle : null;
  const due =
    idleFor === 'no_dialable_leads'
      ? [await withTenantSql(deps.db, input.tenantId, (sql) => nextLeadDueAt(sql, input.campaignId, now))]
      : idleFor === 'no_agent_capacity'
        ? await withTenantSql(deps.db, input.tenantId, async (sql) => [await nextSeatFreeAt(sql, now), await nextPlannedGainAt(sql, now)])
        : [];
  const next = nextTick({ tick: { ...result, inFlight: result.run.in_flight, unpaced }, due, now, tickMs: input.options.tick_ms });
  return { ...result, next };
}

/**
 * One tick of a campaign run: reap, then (unless an earlier try of this tick already recorded
 * its batch) decide and record a batch, then place what is recorded and not yet sent.
 */
async function tickOnce(deps: AppDeps, input: TickInput, now: Date): Promise<TickResult & { unpaced: number }> {
  // A text campaign sends through the SMS path (sms-blast.service.ts): no switch, no CDR, no pacing.
  const kind = await withTenantSql(deps.db, input.tenantId, (sql) => readCampaignType(sql, input.campaignId));
  if (kind === 'sms_blast') return { ...(await smsBlastTick(deps, input, now)), unpaced: 0 };
  const tickStarted = performance.now();
  const reaped = await reapExpired(deps, input, now);
  const paced = await runCounters(deps, input.tenantId, input.campaignId, new Date(input.runStartedAt));
  const pacing = await pace(deps, input, paced);
  const ids = Array.from({ length: input.options.batch_size }, (_, i) => tickRowId(input.tickKey, i));
  const earlier = await withTenantSql(deps.db, input.tenantId, (sql) => findAttempts(sql, ids));
  let decided: Decided;
  if (earlier.length) {
    const campaign = await withTenantSql(deps.db, input.tenantId, (sql) => readCampaign(sql, input.campaignId));
    decided = { state: campaign?.state ?? null, calls: earlier, blocked: 0, idle: null, tokens: null, overDialAllowed: false };
  } else if (!deps.esl?.isUp()) {
    const campaign = await withTenantSql(deps.db, input.tenantId, (sql) => readCampaign(sql, input.campaignId));
    decided = { state: campaign?.state ?? null, calls: [], blocked: 0, idle: 'switch_unavailable', tokens: null, overDialAllowed: false };
  } else {
    decided = await decideAndRecord(deps, input, pacing.ratio, ids, now);
  }
  let outcome = { placed: 0, notPlaced: 0 };
  if (decided.calls.length) {
    const campaign = await withTenantSql(deps.db, input.tenantId, (sql) => readPlacementCampaign(sql, input.campaignId));
    outcome = await placeCalls(deps, input.tenantId, campaign!, decided.calls, input.options);
  }
  dialerMetrics.blocked(decided.blockedGates ?? []);
  const counted = await runCounters(deps, input.tenantId, input.campaignId, new Date(input.runStartedAt));
  // The next tick feeds the controller what connected or was abandoned since `paced`: a call that
  // ended while this tick ran is counted then, never skipped (it is not in what this tick paced on).
  const run = { ...counted, connected: paced.connected, abandoned: paced.abandoned };
  dialerMetrics.answered(input.campaignId, paced.connected - (input.lastCounters?.connected ?? 0), paced.abandoned - (input.lastCounters?.abandoned ?? 0));
  dialerMetrics.inFlight(input.campaignId, decided.state === 'running' ? run.in_flight : null);
  dialerMetrics.tickDuration((performance.now() - tickStarted) / 1000);
  return {
    state: decided.state,
    placed: outcome.placed,
    blocked: decided.blocked,
    reaped,
    notPlaced: outcome.notPlaced,
    idle: decided.idle,
    tokens: decided.tokens,
    overDialAllowed: decided.overDialAllowed,
    pacing,
    run,
    unpaced: counted.connected - paced.connected + (counted.abandoned - paced.abandoned),
  };
}
