import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { actorOf, appendAuditSql } from '../../lib/audit';
import type { Principal } from '../../lib/context';
import { AppError, conflict, forbidden, internal, notFound, unprocessable } from '../../lib/errors';
import { maskPhone } from '../../lib/phone';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { supervisionWorkflow } from '../../../workflows/supervision.workflow';
import { isSipExtension } from '../agents/agent.rules';
import { findCallByUuid } from '../cdr/cdr.repository';
import {
  agentExtension,
  correctionEnded,
  findActiveRosterAgent,
  findOwnLiveSession,
  insertPendingSession,
  liveSessionCount,
  lockSupervisionQuota,
  planStatus,
  sweepSessions,
  type LiveSession,
} from './supervision.repository';
import { mayTakeRole, planAllows, quotaFull, type RefusalReason, type SupervisionMode } from './supervision.rules';
import type { SupervisionResult } from './supervision.schemas';
import { SUPERVISION_FAILURES, supervisionAuditEntry, type SupervisionInput } from './supervision.switch';
import { applicationFailureOf } from '../../lib/workflow-failure';

export const supervisionWorkflowId = (tenantId: string, callUuid: string, supervisorAgentId: string): string =>
  `supervision:${tenantId}:${callUuid}:${supervisorAgentId}:${randomUUID()}`;

const REFUSALS: Record<RefusalReason, (detail: string) => AppError> = {
  role_forbidden: (d) => new AppError(403, 'role_forbidden', d),
  plan_inactive: (d) => new AppError(402, 'plan_inactive', d),
  supervision_capacity: (d) => new AppError(429, 'supervision_capacity', d),
};

type Decision =
  | { kind: 'refused'; reason: RefusalReason; detail: string; supervisorAgentId: string; extra: Record<string, unknown> }
  | { kind: 'reserved'; input: SupervisionInput; previous: LiveSession | null; toNumber: string | null };

function toAppError(err: unknown, mode: SupervisionMode): AppError {
  const failure = applicationFailureOf(err);
  switch (failure?.type) {
    case SUPERVISION_FAILURES.auditUnavailable:
      return new AppError(503, 'audit_unavailable', 'the evidence row could not be written; no switch command was sent; retry with backoff');
    case SUPERVISION_FAILURES.eslUnavailable:
      return new AppError(503, 'esl_unavailable', 'switch control link unavailable; retry with backoff');
    case SUPERVISION_FAILURES.callNotLive:
      return conflict('the call has no live leg on the switch');
    case SUPERVISION_FAILURES.noAgentLeg:
      return conflict('no agent leg is bridged to the call; there is nobody to whisper to');
    case SUPERVISION_FAILURES.replacedMeanwhile:
      return conflict('the supervisor’s previous session on this call ended meanwhile; retry');
    case SUPERVISION_FAILURES.switchRejected: {
      const cause = typeof failure.details?.[0] === 'string' ? failure.details[0] : 'UNKNOWN';
      return new AppError(502, 'supervision_failed', `the switch rejected ${mode} (${cause})`);
    }
    default:
      return internal(`${mode} could not be run; retry with backoff`);
  }
}

async function callEnded(sql: SqlTx, tenantId: string, original: { id: string; endedAt: Date | string | null }): Promise<boolean> {
  if (original.endedAt !== null) return true;
  return correctionEnded(sql, tenantId, original.id);
}

export interface SupervisionRequest {
  principal: Principal;
  requestId: string | null;
  callUuid: string;
  mode: SupervisionMode;
  supervisorExt: string;
}

/**
 * Decides the request in one tenant transaction, in the route's documented order, and reserves a
 * quota slot (a pending session) when it goes ahead. Refusals that are evidence come back as
 * values (written by the caller in their own transaction); the other errors are thrown.
 */
async function decide(deps: AppDeps, req: SupervisionRequest, maxSessions: number): Promise<Decision> {
  const { principal, callUuid, mode, supervisorExt } = req;
  const tenantId = principal.tenantId;
  return withTenantSql(deps.db, tenantId, async (sql) => {
    if (principal.kind === 'widget' && (await agentExtension(sql, tenantId, principal.agentId)) !== supervisorExt) {
      throw forbidden('a widget token may only supervise as its own agent’s extension');
    }
    const supervisor = isSipExtension(supervisorExt) ? await findActiveRosterAgent(sql, tenantId, supervisorExt) : null;
    if (!supervisor) throw unprocessable('supervisor_ext is not an active extension of the roster');
    const refuse = (reason: RefusalReason, detail: string, extra: Record<string, unknown> = {}): Decision => ({
      kind: 'refused',
      reason,
      detail,
      supervisorAgentId: supervisor.id,
      extra,
    });
    if (!mayTakeRole(supervisor.role)) return refuse('role_forbidden', `the agent of extension ${supervisorExt} has role ${supervisor.role}; supervising needs supervisor or admin`);
    if (!planAllows(mode, (await planStatus(sql)) ?? 'unknown')) return refuse('plan_inactive', `the tenant's plan is not active; ${mode} is not available (takeover is)`);

    const call = await findCallByUuid(sql, tenantId, callUuid);
    if (!call) throw notFound('call not found');
    if (await callEnded(sql, tenantId, call)) throw conflict('the call has ended');

    await lockSupervisionQuota(sql, tenantId);
    await sweepSessions(sql, tenantId);
    const previous = await findOwnLiveSession(sql, tenantId, callUuid, supervisor.id);
    if (previous?.status === 'pending') throw conflict('another supervision request of this supervisor on this call is in progress');
    if (previous?.mode === 'takeover') throw conflict('the supervisor took the call over; it is theirs until it ends (hang up through call control)');
    const live = await liveSessionCount(sql, tenantId);
    if (quotaFull(live, previous !== null, maxSessions)) {
      return refuse('supervision_capacity', `the tenant's supervision quota (${maxSessions} sessions) is full; retry with backoff`, { limit: maxSessions, in_use: live });
    }

    const sessionId = randomUUID();
    if (!previous) {
      await insertPendingSession(sql, tenantId, { id: sessionId, callAttemptId: call.id, callUuid, supervisorAgentId: supervisor.id, supervisorExt, mode });
    }
    return {
      kind: 'reserved',
      previous,
      toNumber: call.toNumber,
      input: {
        tenantId,
        callUuid,
        callAttemptId: call.id,
        mode,
        sessionId,
        supervisor: { agentId: supervisor.id, extension: supervisorExt },
        previous: previous ? { id: previous.id, mode: previous.mode, legUuid: previous.leg_uuid } : null,
        actor: actorOf(principal),
        requestId: req.requestId,
      },
    };
  });
}

/**
 * POST /v1/supervision/calls/{call_id}/<mode>. Order: the widget's own extension (403 forbidden),
 * the supervisor (422, 403 role_forbidden evidenced), the plan for the eavesdrop modes (402
 * evidenced), the call (404, 409), the quota (429 evidenced), then the one-step workflow whose
 * activity evidences, replaces this supervisor's previous leg and commands the switch.
 */
export async function superviseCall(deps: AppDeps, req: SupervisionRequest): Promise<SupervisionResult> {
  const tenantId = req.principal.tenantId;
  if (!deps.temporal) throw internal('no workflow service is configured; nothing was sent to the switch');
  const decision = await decide(deps, req, deps.config.MAX_SUPERVISION_CHANNELS);

  if (decision.kind === 'refused') {
    const audit = supervisionAuditEntry(
      { callUuid: req.callUuid, mode: req.mode, actor: actorOf(req.principal), requestId: req.requestId, supervisorExt: req.supervisorExt, supervisorAgentId: decision.supervisorAgentId },
      'supervision.refused',
      { reason: decision.reason, ...decision.extra },
    );
    try {
      await withTenantSql(deps.db, tenantId, (sql) => appendAuditSql(sql, tenantId, [audit]));
    } catch (err) {
      deps.logger.error({ err: (err as Error).message, call_id: req.callUuid, reason: decision.reason }, 'supervision refusal could not be evidenced');
      throw new AppError(503, 'audit_unavailable', 'the refusal could not be recorded; nothing was sent to the switch; retry with backoff');
    }
    throw REFUSALS[decision.reason](decision.detail);
  }

  const { input, previous, toNumber } = decision;
  try {
    const outcome = await deps.temporal.workflow.execute(supervisionWorkflow, {
      workflowId: supervisionWorkflowId(tenantId, req.callUuid, input.supervisor.agentId),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [input],
    });
    return {
      action: req.mode,
      call_id: req.callUuid,
      supervisor_ext: req.supervisorExt,
      session_id: req.mode === 'takeover' ? null : input.sessionId,
      audit_id: outcome.requestAuditId,
      to_number: maskPhone(toNumber),
      id: input.sessionId,
      mode: req.mode,
      supervisor_agent_id: input.supervisor.agentId,
      leg_uuid: outcome.legUuid,
      status: 'active',
      started_at: outcome.startedAt,
      replaced: previous ? { mode: previous.mode, leg_uuid: previous.leg_uuid } : null,
    };
  } catch (err) {
    const mapped = toAppError(err, req.mode);
    if (mapped.status >= 500) deps.logger.warn({ err: (err as Error).message, call_id: req.callUuid, mode: req.mode, code: mapped.code }, 'supervision failed');
    throw mapped;
  }
}
