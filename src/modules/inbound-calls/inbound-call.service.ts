import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { createSwitchCommands, EslUnavailableError, type SwitchCommands } from '../../switch/esl';
import { assertUuid } from '../../switch/esl/commands';
import type { InboundCallInput, InboundCallRef, InboundRecordingStart, OpenedInboundCall } from '../../contracts/inbound-call';
import { claimAgent, markAnswered, releaseAgentsOfCalls } from '../dialer/call-session.service';
import { insertOutcome } from '../cdr/cdr.repository';
import { recordCallEvent } from '../call-events/call-event.service';
import { speakToCall } from '../call-events/call-speech.service';
import { recordCallConversation } from '../compliance/conversation.repository';
import { startWrapUpTimers } from '../agent-wrap-up/wrap-up.service';
import { startCallRecording } from '../recordings/recording-capture.service';
import { agentIdByExtension, callDebtId, campaignMenu, insertInboundAttempt, setPresence } from './inbound-call.repository';

/**
 * How long a caller waits for a seat before the call ends unanswered by an agent. The two-second
 * rule governs calls the dialer places; a consumer who called waits like on any inbound line.
 */
export const INBOUND_AGENT_WAIT_MS = 15_000;
const AGENT_CLAIM_POLL_MS = 250;
/** How long an agent's softphone may ring for an inbound call. */
const AGENT_LEG_ANSWER_MS = 10_000;

/**
 * Channel variables that tie the switch's later events of the leg to its session and timeline:
 * not the outbound dd_call_attempt_id, so the outbound call session never picks the leg up.
 */
export const INBOUND_TENANT_VAR = 'dd_inbound_tenant_id';
export const INBOUND_ATTEMPT_VAR = 'dd_inbound_call_attempt_id';

function switchCommands(deps: AppDeps): SwitchCommands {
  if (!deps.esl) throw new EslUnavailableError('this process has no switch link');
  return createSwitchCommands(deps.esl);
}

/** The call's CDR row, then the leg marked with it (the relay writes the timeline from then on). */
export async function openInboundCall(deps: AppDeps, input: InboundCallInput): Promise<OpenedInboundCall> {
  const row = await withTenantSql(deps.db, input.tenantId, (sql) =>
    insertInboundAttempt(sql, { callUuid: input.callUuid, caller: input.caller, did: input.did, startedAt: input.arrivedAt }),
  );
  const ref = { tenantId: input.tenantId, callAttemptId: row.id, callUuid: input.callUuid };
  if (!deps.esl) throw new EslUnavailableError('this process has no switch link');
  assertUuid(input.callUuid);
  // A leg gone meanwhile has no later events to tie: its hangup already reached the session.
  await deps.esl.api(`uuid_setvar ${input.callUuid} ${INBOUND_TENANT_VAR} ${input.tenantId}`).catch(() => undefined);
  await deps.esl.api(`uuid_setvar ${input.callUuid} ${INBOUND_ATTEMPT_VAR} ${row.id}`).catch(() => undefined);
  return { ...ref, debtId: row.debt_id };
}

/** Answers the parked leg and fills the row's answered_at (call.answered); false when the caller left. */
export async function answerInboundCall(deps: AppDeps, ref: InboundCallRef): Promise<boolean> {
  const commands = switchCommands(deps);
  if (!(await commands.exists(ref.callUuid))) return false;
  await commands.answer(ref.callUuid);
  await markAnswered(deps, ref, new Date().toISOString());
  return true;
}

/** The recording service's start: the consent notice first where all-party consent applies; null when nothing records. */
export async function startInboundRecording(deps: AppDeps, ref: InboundCallRef): Promise<InboundRecordingStart | null> {
  const started = await startCallRecording(deps, ref);
  if (started.status !== 'recording') return null;
  return { startedAt: started.startedAt, twoPartyConsentState: started.twoPartyConsentState, consentNoticePlayed: started.consentNoticePlayed };
}

/**
 * Puts a seat on the caller's line: the seat the route names (its sip_extension), or any reachable
 * seat, claimed like a dialer call (presence ringing, then on_call once bridged). A seat whose leg
 * fails is skipped; the caller waits at most INBOUND_AGENT_WAIT_MS. A bridge with a caller who
 * matched a debt is a telephone conversation (CONTRACT section 9, source inbound).
 */
export async function connectInboundAgent(
  deps: AppDeps,
  ref: InboundCallRef & { extension: string | null; transferFrom?: 'menu' },
): Promise<{ status: 'connected'; agentId: string } | { status: 'no_agent' | 'gone' }> {
  const commands = switchCommands(deps);
  const only = ref.extension === null ? null : await withTenantSql(deps.db, ref.tenantId, (sql) => agentIdByExtension(sql, ref.extension!));
  if (ref.extension !== null && only === null) return { status: 'no_agent' };
  const deadline = Date.now() + INBOUND_AGENT_WAIT_MS;
  const skip: string[] = [];
  while (Date.now() < deadline) {
    if (!(await commands.exists(ref.callUuid))) return { status: 'gone' };
    const agent = await claimAgent(deps, ref.tenantId, ref.callAttemptId, only, skip, 'ringing');
    if (!agent) {
      await delay(AGENT_CLAIM_POLL_MS);
      continue;
    }
    const legUuid = randomUUID();
    try {
      await commands.originateAndWait(
        { to: { type: 'agent', extension: agent.sip_extension }, uuid: legUuid, variables: { dd_agent_id: agent.id } },
        Math.min(AGENT_LEG_ANSWER_MS, Math.max(1, deadline - Date.now())),
      );
      await commands.bridge(ref.callUuid, legUuid);
    } catch {
      await withTenantSql(deps.db, ref.tenantId, (sql) => setPresence(sql, agent.id, ref.callAttemptId, 'available'));
      await commands.hangup(legUuid).catch(() => undefined);
      skip.push(agent.id);
      continue;
    }
    const bridgedAt = new Date();
    await withTenantSql(deps.db, ref.tenantId, async (sql) => {
      await setPresence(sql, agent.id, ref.callAttemptId, 'on_call');
      if (await callDebtId(sql, ref.callAttemptId)) {
        await recordCallConversation(sql, { callAttemptId: ref.callAttemptId, source: 'inbound', occurredAt: bridgedAt, evidence: { agent_id: agent.id, call_uuid: ref.callUuid } });
      }
    });
    // A menu key that asked for a person makes the bridge a transfer on the timeline.
    if (ref.transferFrom) {
      await recordCallEvent(deps, ref.tenantId, ref.callAttemptId, {
        event: 'transferred',
        at: bridgedAt,
        data: { from: ref.transferFrom, agent_id: agent.id },
        dedupKey: `transferred:${ref.transferFrom}`,
      }).catch((err: unknown) => deps.logger.warn({ err: (err as Error).message, call_id: ref.callUuid }, 'transfer not written to the call timeline'));
    }
    await recordCallEvent(deps, ref.tenantId, ref.callAttemptId, { event: 'bridged', at: bridgedAt, data: { agent_id: agent.id }, dedupKey: `bridged:${agent.id}` });
    return { status: 'connected', agentId: agent.id };
  }
  return { status: 'no_agent' };
}

/** The menu of the campaign an ivr route names (its ivr_menu, the root prompt falling back to its tts_prompt). */
export async function loadInboundMenu(deps: AppDeps, ref: InboundCallRef & { campaignId: string | null }): Promise<Record<string, unknown> | null> {
  if (ref.campaignId === null) return null;
  const row = await withTenantSql(deps.db, ref.tenantId, (sql) => campaignMenu(sql, ref.campaignId!));
  if (!row?.ivr_menu) return null;
  const menu = row.ivr_menu;
  return typeof menu.prompt === 'string' || !row.tts_prompt ? menu : { ...menu, prompt: row.tts_prompt };
}

export async function speakInboundMenu(deps: AppDeps, ref: InboundCallRef & { text: string }): Promise<void> {
  await speakToCall(deps, ref, [{ purpose: 'menu', text: ref.text }]);
}

export async function hangupInboundCall(deps: AppDeps, ref: InboundCallRef & { cause: string }): Promise<void> {
  const commands = switchCommands(deps);
  if (await commands.exists(ref.callUuid)) await commands.hangup(ref.callUuid, ref.cause).catch(() => undefined);
}

/** The call's final row and its seat back to available (or into wrap-up); a repeat writes nothing. */
export async function finishInboundCall(
  deps: AppDeps,
  ref: InboundCallRef & { endedAt: string; answeredAt: string | null; disposition: string; hangupCause: string; sipCode: number | null; agentId: string | null },
): Promise<void> {
  const wraps = await withTenantSql(deps.db, ref.tenantId, async (sql) => {
    await insertOutcome(sql, deps.box, ref.tenantId, ref.callAttemptId, {
      disposition: ref.disposition,
      endedAt: new Date(ref.endedAt),
      answeredAt: ref.answeredAt ? new Date(ref.answeredAt) : null,
      hangupCause: ref.hangupCause,
      sipResponseCode: ref.sipCode,
      amdVerdict: null,
      agentId: ref.agentId,
    });
    return releaseAgentsOfCalls(sql, ref.tenantId, [ref.callAttemptId]);
  });
  await startWrapUpTimers(deps, ref.tenantId, wraps);
}
