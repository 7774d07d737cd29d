import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { AppError, conflict, forbidden, internal, notFound, rateLimited } from '../../lib/errors';
import { maskPhone } from '../../lib/phone';
import { withTenantSql } from '../../lib/tenancy';
import { callControlWorkflow } from '../../../workflows/call-control.workflow';
import { findCallByUuid, isCallOwnedBy } from '../cdr/cdr.repository';
import { attemptProfile } from '../compliance/compliance-preflight.service';
import { evaluate } from '../compliance/compliance.service';
import { findCampaignProfile, hasFinalRow } from './call-control.repository';
import { CALL_CONTROL_FAILURES, type CallControlAction, type CallControlInput } from './call-control.switch';
import type { CallControlResult } from './call-control.schemas';
import { applicationFailureOf } from '../../lib/workflow-failure';

export const TOGGLES: readonly CallControlAction[] = ['hold', 'unhold', 'mute', 'unmute'];

export const callControlWorkflowId = (tenantId: string, callUuid: string, action: CallControlAction, controlId: string): string =>
  `call-control:${tenantId}:${callUuid}:${action}:${controlId}`;

function toAppError(err: unknown, action: CallControlAction): AppError {
  const failure = applicationFailureOf(err);
  switch (failure?.type) {
    case CALL_CONTROL_FAILURES.auditUnavailable:
      return new AppError(503, 'audit_unavailable', 'the evidence row could not be written; no switch command was sent; retry with backoff');
    case CALL_CONTROL_FAILURES.eslUnavailable:
      return new AppError(503, 'esl_unavailable', 'switch control link unavailable; retry with backoff');
    case CALL_CONTROL_FAILURES.noAgentLeg:
      return conflict(`no agent leg is bridged to the call; nothing to ${action}`);
    case CALL_CONTROL_FAILURES.callNotLive:
      return conflict('the call has no live leg on the switch');
    case CALL_CONTROL_FAILURES.switchRejected: {
      const cause = typeof failure.details?.[0] === 'string' ? failure.details[0] : 'UNKNOWN';
      return new AppError(502, 'dial_error', `the switch rejected ${action} (${cause})`);
    }
    default:
      return internal(`${action} could not be run; retry with backoff`);
  }
}

/**
 * The call's state from the CDR: the original row, and whether a final row (ended_at) exists.
 * `ownerAgentId` (a widget's agent): a call that agent does not own is refused 403 here, before its
 * state is read, so a widget learns nothing of other agents' calls beyond their existence.
 */
async function lookupCall(deps: AppDeps, tenantId: string, callUuid: string, ownerAgentId: string | null) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const call = await findCallByUuid(sql, tenantId, callUuid);
    if (!call) return null;
    if (ownerAgentId !== null && !(await isCallOwnedBy(sql, tenantId, call.id, ownerAgentId))) {
      throw forbidden('a widget token controls only the calls of its own agent');
    }
    const ended = call.endedAt !== null || (await hasFinalRow(sql, tenantId, call.id));
    const campaign = call.campaignId ? await findCampaignProfile(sql, call.campaignId) : null;
    return { call, ended, campaign };
  });
}

/**
 * POST /v1/calls/{call_id}/<action>. Order: the toggles' budget (before the lookup), the CDR lookup
 * (404 unknown or foreign, 403 a widget on a call its agent does not own, 409 ended), for unhold
 * the mid-call compliance gate (422), then the one-step workflow whose activity finds the agent leg
 * (409), writes the request row (503 audit_unavailable), commands the switch (503 esl_unavailable,
 * 502 dial_error) and writes the outcome.
 */
export async function controlCall(deps: AppDeps, principal: Principal, requestId: string | null, callUuid: string, action: CallControlAction): Promise<CallControlResult> {
  const tenantId = principal.tenantId;
  const actor = actorOf(principal);
  if (TOGGLES.includes(action)) {
    const key = `${tenantId}:${actor.type}:${actor.id}`;
    if (!(await deps.rateLimits.consume('callControl', key, deps.config.CALL_CONTROL_PER_MINUTE))) {
      throw rateLimited('the call-control budget is used up; retry with backoff');
    }
  }

  const found = await lookupCall(deps, tenantId, callUuid, principal.kind === 'widget' ? principal.agentId : null);
  if (!found) throw notFound('call not found');
  if (found.ended) throw conflict('the call has ended');
  const { call } = found;

  if (action === 'unhold') {
    if (!call.debtId || !call.toNumber) throw conflict('the call has no debt or number to re-check the compliance gate for');
    const profile = found.campaign ? attemptProfile(found.campaign) : { artificialVoice: false };
    const [decision] = await evaluate(
      deps,
      tenantId,
      // The re-check judges this call, not a new attempt: the call and its own conversation are not counted against it.
      [{ debtId: call.debtId, phone: call.toNumber, campaignId: call.campaignId, channel: 'voice', initiation: 'human', artificialVoice: profile.artificialVoice, ongoingCallAttemptId: call.id }],
      { actor },
    );
    if (!decision?.decisionId) {
      throw new AppError(503, 'audit_unavailable', 'the compliance decision could not be recorded; the call stays on hold; retry with backoff');
    }
    if (!decision.allowed) {
      throw new AppError(422, 'compliance_blocked', `the compliance engine refused to resume the call: ${decision.reason ?? decision.gate ?? 'refused'}; the call stays on hold`, {
        gate: decision.gate ?? 'tenant_policy',
        decision_id: decision.decisionId,
      });
    }
  }

  if (!deps.temporal) throw internal('no workflow service is configured; nothing was sent to the switch');
  const controlId = randomUUID();
  const input: CallControlInput = { tenantId, callUuid, callAttemptId: call.id, action, actor, requestId, controlId };
  try {
    const outcome = await deps.temporal.workflow.execute(callControlWorkflow, {
      workflowId: callControlWorkflowId(tenantId, callUuid, action, controlId),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [input],
    });
    return {
      verb: action,
      call_id: callUuid,
      audit_id: outcome.requestAuditId,
      to_number: maskPhone(call.toNumber),
      action,
      applied: true,
      agent_leg_uuid: outcome.agentLegUuid,
      at: outcome.at,
    };
  } catch (err) {
    const mapped = toAppError(err, action);
    if (mapped.status >= 500) deps.logger.warn({ err: (err as Error).message, call_id: callUuid, action, code: mapped.code }, 'call control failed');
    throw mapped;
  }
}
