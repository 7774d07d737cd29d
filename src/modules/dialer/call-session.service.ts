import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { AppDeps } from '../../deps';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { createSwitchCommands, EslTimeoutError, EslUnavailableError, type SwitchCommands } from '../../switch/esl';
import { ABANDON_AFTER_MS, amdEffective, dispositionOf, promptAt, treatmentOf, type HangupFacts } from '../../../workflows/call-flow';
import type { CallContext, CallRef, ConnectRequest, ConnectResult } from '../../contracts/call-session';
import { speakToCall, type SpeechPart } from '../call-events/call-speech.service';
import { selectArtificialVoiceDisclosure, selectSellerIdentity } from '../call-events/call-speech.repository';
import { sellerMessage } from '../call-events/call-speech.rules';
import { recordCallEvent } from '../call-events/call-event.service';
import { emitEvent } from '../../lib/events';
import { callAttemptView, liveCallData } from '../cdr/call-attempt.views';
import { insertOutcome } from '../cdr/cdr.repository';
import { recordOptOut } from '../compliance/optout.repository';
import { recordCallConversation } from '../compliance/conversation.repository';
import { bridgedAgentLeg } from '../call-control/call-control.switch';
import { endCallsOfAgents, type WrapUp } from '../agent-wrap-up/wrap-up.repository';
import { startWrapUpTimers } from '../agent-wrap-up/wrap-up.service';
import { releaseSeatsOfEndedCalls } from '../agents/agent.repository';
import { leavingAgentsAt } from '../planned-shifts/planned-staffing.service';
import { claimSeatForCall } from './seat-claim.repository';
import { agentBridged, agentsOnCall, fillAnsweredAt, findCallCampaign, findCallNumber, insertKeypress, releaseAgent } from './call-session.repository';

const AGENT_CLAIM_POLL_MS = 200;

/** The agent's leg answered after the abandonment window closed. */
class AgentTooLate extends Error {}
/** Pauses between the in-process tries of the conversation write after a bridge. */
const CONVERSATION_WRITE_RETRY_MS = [100, 400];

function switchCommands(deps: AppDeps, agentDomain?: string | null): SwitchCommands {
  if (!deps.esl) throw new EslUnavailableError('this process has no switch link');
  return createSwitchCommands(deps.esl, { agentDomain: agentDomain ?? undefined });
}

export async function loadCallContext(deps: AppDeps, ref: CallRef): Promise<CallContext> {
  const row = await withTenantSql(deps.db, ref.tenantId, (sql) => findCallCampaign(sql, ref.callAttemptId));
  const type = row?.campaign_type ?? 'manual';
  return {
    campaignId: row?.campaign_id ?? null,
    campaignType: type,
    treatment: treatmentOf(type),
    amd: amdEffective(type, row?.amd_enabled ?? null),
    deferredBridge: row?.deferred_bridge ?? false,
    optoutDigit: row?.optout_digit ?? null,
    ivrMenu: row?.ivr_menu ?? {},
    ttsPrompt: row?.tts_prompt ?? null,
  };
}

/**
 * The write-once fill of answered_at on the original row, announced as `call.answered` in the same
 * transaction (a replayed answer fills nothing and announces nothing).
 */
export async function markAnswered(deps: AppDeps, ref: CallRef, answeredAt: string): Promise<void> {
  await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const row = await fillAnsweredAt(sql, ref.callAttemptId, answeredAt);
    if (row) {
      const view = callAttemptView(row, deps.box);
      await emitEvent(sql, ref.tenantId, { event: 'call.answered', eventId: `${row.id}:answered`, occurredAt: row.answeredAt!, data: view, liveData: liveCallData(view) });
    }
  });
}

/**
 * Takes a dialable agent for a call (seat-claim.repository.ts), any seat before one whose planned
 * shift ends within the horizon pacing leaves it out by. The agent is tied to the call from the
 * claim on (not only once bridged), so whatever releases it later (the session's end, the reaper)
 * can tell whether it still holds this call or has since taken another. `presence` is `ringing`
 * while its leg is being rung (connectAgent), `on_call` for a leg bridged at once.
 */
export async function claimAgent(
  deps: AppDeps,
  tenantId: string,
  callAttemptId: string,
  only: string | null,
  skip: string[],
  presence: 'on_call' | 'ringing' = 'on_call',
): Promise<{ id: string; sip_extension: string } | null> {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    // A named agent is the only choice: the plan cannot reorder a list of one.
    const leaving = only === null ? await leavingAgentsAt(sql, new Date()) : [];
    return claimSeatForCall(sql, { callAttemptId, only, skip, presence, leaving });
  });
}

/**
 * The seats still held by calls that just got their final row (the session's end, the reaper):
 * back to available, or into wrap-up when the tenant has a wrap-up cap. Answers the wrap-ups whose
 * timers the caller starts once the transaction has committed.
 */
export async function releaseAgentsOfCalls(sql: SqlTx, tenantId: string, callAttemptIds: string[]): Promise<WrapUp[]> {
  await releaseSeatsOfEndedCalls(sql, callAttemptIds);
  return endCallsOfAgents(sql, tenantId, callAttemptIds);
}

/**
 * Whether the party an agent was just bridged to is a person: on a call without AMD the answer is
 * the consumer; with AMD only a HUMAN verdict says so. A MACHINE verdict, or one still pending
 * (the bridge came first), proves no conversation here: a pending verdict that turns out human is
 * recorded by the call's final row (finalizeCall).
 */
async function answeredByPerson(deps: AppDeps, commands: SwitchCommands, ref: CallRef): Promise<boolean> {
  const ctx = await loadCallContext(deps, ref);
  if (!ctx.amd) return true;
  const verdict = await commands.getVariable(ref.callUuid, 'amd_result').catch(() => null);
  return verdict?.trim().toUpperCase() === 'HUMAN';
}

/**
 * The telephone conversation an agent bridge proves (CONTRACT section 9), dated at the bridge.
 * The bridge already happened: a failed write is tried again here, briefly, before the error
 * leaves; the activity's own retry then finds the bridge (resumeBridge) instead of taking
 * another agent for a consumer who is already talking to one.
 */
async function recordBridgeConversation(deps: AppDeps, commands: SwitchCommands, ref: CallRef, agentId: string, bridgedAt: Date, resumed: boolean): Promise<void> {
  // The timeline's bridge, once per agent (a resumed connect finds the same bridge).
  await recordCallEvent(deps, ref.tenantId, ref.callAttemptId, { event: 'bridged', at: bridgedAt, data: { agent_id: agentId }, dedupKey: `bridged:${agentId}` });
  if (!(await answeredByPerson(deps, commands, ref))) return;
  const write = () =>
    withTenantSql(deps.db, ref.tenantId, (sql) =>
      recordCallConversation(sql, { callAttemptId: ref.callAttemptId, source: 'agent_bridge', occurredAt: bridgedAt, evidence: { agent_id: agentId, call_uuid: ref.callUuid, resumed } }),
    );
  for (let attempt = 0; ; attempt += 1) {
    try {
      await write();
      return;
    } catch (err) {
      const pause = CONVERSATION_WRITE_RETRY_MS[attempt];
      if (pause === undefined) throw err;
      deps.logger.warn({ tenantId: ref.tenantId, callAttemptId: ref.callAttemptId, err: (err as Error).message }, 'conversation of an agent bridge not written yet; retrying');
      await delay(pause);
    }
  }
}

/**
 * A connect that already bridged an agent (a retried activity, a second transfer request of a
 * menu): the agent that holds this call and is bridged to it on the switch. Only then is the switch
 * asked anything, so a first connect costs one query.
 */
async function resumeBridge(deps: AppDeps, commands: SwitchCommands, ref: CallRef): Promise<{ agentId: string; agentLegUuid: string } | null> {
  const held = await withTenantSql(deps.db, ref.tenantId, (sql) => agentsOnCall(sql, ref.callAttemptId));
  if (held.length === 0) return null;
  const leg = await bridgedAgentLeg(commands, ref.callUuid);
  if (leg === null) return null;
  const agentId = await commands.getVariable(leg, 'dd_agent_id').catch(() => null);
  const agent = held.find((h) => h.id === agentId?.trim());
  return agent ? { agentId: agent.id, agentLegUuid: leg } : null;
}

/**
 * Puts an agent on an answered call: claims a dialable agent (or the named one; presence ringing),
 * rings the agent's extension and bridges it to the consumer (presence on_call), and records the
 * conversation the bridge proves. The agent's leg must be answered and bridged within two seconds of
 * `windowStartMs` (the answer, or the moment a menu caller asked for an agent; 47 CFR
 * 64.1200(a)(7)): a leg still ringing at the deadline, or answered after it, is hung up and the
 * seat is back to available; with no agent on the line by then the call is abandoned and the
 * seller identification message is played.
 */
export async function connectAgent(deps: AppDeps, ref: ConnectRequest): Promise<ConnectResult> {
  const commands = switchCommands(deps, ref.agentDomain);
  const call: CallRef = { tenantId: ref.tenantId, callAttemptId: ref.callAttemptId, callUuid: ref.callUuid };
  const resumed = await resumeBridge(deps, commands, call);
  if (resumed) {
    await recordBridgeConversation(deps, commands, call, resumed.agentId, new Date(), true);
    return { status: 'connected', ...resumed };
  }
  const deadline = ref.windowStartMs + ABANDON_AFTER_MS;
  const unreachable: string[] = [];
  for (;;) {
    const agent = Date.now() < deadline ? await claimAgent(deps, ref.tenantId, ref.callAttemptId, ref.agentId, unreachable, 'ringing') : null;
    if (agent) {
      const legUuid = randomUUID();
      let bridged: { agentId: string; agentLegUuid: string; at: Date } | null = null;
      let late = false;
      try {
        // The job is bounded by what is left of the window: a leg still ringing then is too late.
        await commands.originateAndWait(
          { to: { type: 'agent', extension: agent.sip_extension }, uuid: legUuid, variables: { dd_agent_id: agent.id } },
          Math.max(1, deadline - Date.now()),
        );
        if (Date.now() > deadline) throw new AgentTooLate();
        await commands.bridge(ref.callUuid, legUuid);
        bridged = { agentId: agent.id, agentLegUuid: legUuid, at: new Date() };
        await withTenantSql(deps.db, ref.tenantId, (sql) => agentBridged(sql, agent.id, ref.callAttemptId));
      } catch (err) {
        if (bridged) throw err;
        late = err instanceof AgentTooLate || err instanceof EslTimeoutError;
        await withTenantSql(deps.db, ref.tenantId, (sql) => releaseAgent(sql, agent.id, ref.callAttemptId));
        // Still ringing, or answered too late or for a consumer who is gone: the agent's leg ends.
        await commands.hangup(legUuid).catch(() => undefined);
        if (!(await commands.exists(ref.callUuid).catch(() => false))) return { status: 'gone' };
        if (err instanceof EslUnavailableError && !late) throw err;
        unreachable.push(agent.id);
      }
      // Outside the try: the consumer and the agent are talking, whatever the write does.
      if (bridged) {
        if (ref.transferFrom) {
          await recordCallEvent(deps, ref.tenantId, ref.callAttemptId, {
            event: 'transferred',
            at: bridged.at,
            data: { from: ref.transferFrom, agent_id: bridged.agentId },
            dedupKey: `transferred:${ref.transferFrom}`,
          }).catch((err: unknown) => deps.logger.warn({ err: (err as Error).message, call_id: ref.callUuid }, 'transfer not written to the call timeline'));
        }
        await recordBridgeConversation(deps, commands, call, bridged.agentId, bridged.at, false);
        return { status: 'connected', agentId: bridged.agentId, agentLegUuid: bridged.agentLegUuid };
      }
      if (late) break;
    }
    if (Date.now() >= deadline) break;
    await delay(Math.min(AGENT_CLAIM_POLL_MS, Math.max(1, deadline - Date.now())));
  }
  if (!(await commands.exists(ref.callUuid).catch(() => false))) return { status: 'gone' };
  await speakSellerMessage(deps, call).catch(() => undefined);
  return { status: 'abandoned' };
}

/**
 * The identification message of an abandoned call, spoken (47 CFR 64.1200(a)(7)(i)(A)): the
 * tenant's abandon_seller_name and abandon_seller_phone, on the timeline as `seller_message`.
 */
export async function speakSellerMessage(deps: AppDeps, ref: CallRef): Promise<void> {
  const seller = await withTenantSql(deps.db, ref.tenantId, (sql) => selectSellerIdentity(sql));
  await speakToCall(deps, ref, [{ purpose: 'seller_message', text: sellerMessage(seller.name, seller.phone), data: { seller_name: seller.name, seller_phone: seller.phone } }]);
}

/**
 * The artificial-voice disclosure (47 CFR 64.1200(b)) at the start of what an automated call says:
 * the tenant's stored text, spoken before the message or the first menu.
 */
async function disclosurePart(deps: AppDeps, ref: CallRef): Promise<SpeechPart[]> {
  const text = await withTenantSql(deps.db, ref.tenantId, (sql) => selectArtificialVoiceDisclosure(sql));
  return text ? [{ purpose: 'disclosure', text }] : [];
}

/**
 * A message campaign's call (tts_blast): the disclosure then the campaign's tts_prompt, as one
 * utterance; its end hangs up (the session). With nothing to say the call ends at once.
 */
export async function speakMessage(deps: AppDeps, ref: CallRef): Promise<void> {
  const ctx = await loadCallContext(deps, ref);
  const parts = [...(await disclosurePart(deps, ref)), { purpose: 'tts_prompt' as const, text: ctx.ttsPrompt ?? '' }];
  const said = await speakToCall(deps, ref, parts);
  if (said.status === 'silent') await hangupCall(deps, ref);
}

/** The prompt of the menu at `menuPath` (its own, else at the root the campaign's tts_prompt); the root's after the disclosure. */
export async function speakMenu(deps: AppDeps, ref: CallRef & { menuPath: string }): Promise<void> {
  const ctx = await loadCallContext(deps, ref);
  const prompt = promptAt(ctx.ivrMenu, ref.menuPath, ctx.ttsPrompt) ?? '';
  const parts = [...(ref.menuPath === '' ? await disclosurePart(deps, ref) : []), { purpose: 'menu' as const, text: prompt, data: { menu_path: ref.menuPath } }];
  await speakToCall(deps, ref, parts);
}

/** Hangs the consumer leg up; a leg that is already gone is not an error. */
export async function hangupCall(deps: AppDeps, ref: CallRef): Promise<void> {
  const commands = switchCommands(deps);
  if (await commands.exists(ref.callUuid)) await commands.hangup(ref.callUuid).catch(() => undefined);
}

export async function recordKeypress(
  deps: AppDeps,
  ref: CallRef & { campaignId: string | null; seq: number; digit: string; menuPath: string; action: string | null; pressedAt: string },
): Promise<void> {
  await withTenantSql(deps.db, ref.tenantId, (sql) => insertKeypress(sql, ref));
}

/**
 * The opt-out digit: the number goes on the tenant's do-not-call list (source optout_digit) and
 * every voice consent for it is revoked, in one transaction with its audit entry; then the call
 * ends. Listing is idempotent (one active listing per number and source).
 */
export async function optOutByDigit(deps: AppDeps, ref: CallRef & { digit: string; at: string }): Promise<void> {
  await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const call = await findCallNumber(sql, ref.callAttemptId);
    if (!call) return;
    await recordOptOut(sql, ref.tenantId, {
      phoneE164: call.to_number,
      source: 'optout_digit',
      channel: 'voice',
      reason: 'opt-out key pressed during a call',
      at: ref.at,
      evidence: { call_attempt_id: ref.callAttemptId, call_uuid: ref.callUuid, digit: ref.digit },
      audit: {
        actorType: 'workflow',
        subjectType: 'debt',
        subjectId: call.debt_id,
        payload: { call_attempt_id: ref.callAttemptId, campaign_id: call.campaign_id },
      },
    });
  });
}

/**
 * The final row of a call from its hangup report, and the agent back to available or into
 * wrap-up. Idempotent: a second report of the same hangup appends nothing, and finds a wrap-up the
 * first one started again, so a timer that failed to start is started by the retry.
 */
export async function finalizeCall(
  deps: AppDeps,
  ref: CallRef & { facts: HangupFacts; endedAt: string; answeredAt: string | null; sipResponseCode: number | null; agentId: string | null },
): Promise<{ disposition: string; written: boolean }> {
  const disposition = dispositionOf(ref.facts);
  const { written, wraps } = await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    const id = await insertOutcome(sql, deps.box, ref.tenantId, ref.callAttemptId, {
      disposition,
      endedAt: new Date(ref.endedAt),
      answeredAt: ref.answeredAt ? new Date(ref.answeredAt) : null,
      hangupCause: ref.facts.hangupCause,
      sipResponseCode: ref.sipResponseCode,
      amdVerdict: ref.facts.amdVerdict,
      agentId: ref.agentId,
    });
    // A person answered and an agent was on the line: the conversation the bridge recorded, or,
    // when the AMD verdict was still pending at the bridge, recorded now (dated at the hangup, the
    // latest moment the conversation can have taken place). One row per call either way.
    if (id !== null && disposition === 'answered_human' && ref.agentId !== null) {
      await recordCallConversation(sql, {
        callAttemptId: ref.callAttemptId,
        source: 'agent_bridge',
        occurredAt: ref.endedAt,
        evidence: { agent_id: ref.agentId, call_uuid: ref.callUuid, proven_by: 'hangup', amd_verdict: ref.facts.amdVerdict },
      });
    }
    // Every agent this call still holds, not only the one the session knows: a retried connect
    // may have claimed one whose result the session never saw.
    return { written: id !== null, wraps: await releaseAgentsOfCalls(sql, ref.tenantId, [ref.callAttemptId]) };
  });
  await startWrapUpTimers(deps, ref.tenantId, wraps);
  return { disposition, written };
}
