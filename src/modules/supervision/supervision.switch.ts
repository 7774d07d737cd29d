import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType, type AuditEntry } from '../../lib/audit';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { createSwitchCommands, EslCommandError, EslUnavailableError, type SwitchCommands } from '../../switch/esl';
import { recordCallEvent } from '../call-events/call-event.service';
import { bridgedAgentLeg } from '../call-control/call-control.switch';
import { activateSession, failSession, replaceSession, requestRowId } from './supervision.repository';
import { commandFor, type SupervisionCommand, type SupervisionMode } from './supervision.rules';

/**
 * The typed failures of the supervision activity (ApplicationFailure.type); the API maps them to
 * its errors (supervision.service.ts). All non-retryable: a supervisor leg is never rung twice for
 * one request.
 */
export const SUPERVISION_FAILURES = {
  /** The evidence row could not be written: 503 audit_unavailable, no switch command sent. */
  auditUnavailable: 'SupervisionAuditUnavailable',
  /** The switch control link is down (or went down mid-command): 503 esl_unavailable. */
  eslUnavailable: 'SupervisionEslUnavailable',
  /** The switch answered -ERR: 502 supervision_failed (details: [switch cause]). */
  switchRejected: 'SupervisionSwitchRejected',
  /** The consumer leg is no longer on the switch: 409. */
  callNotLive: 'SupervisionCallNotLive',
  /** whisper with no agent leg bridged to the consumer: 409. */
  noAgentLeg: 'SupervisionNoAgentLeg',
  /** The session this request was to replace was ended or replaced meanwhile: 409. */
  replacedMeanwhile: 'SupervisionReplacedMeanwhile',
} as const;

export interface SupervisionInput {
  tenantId: string;
  /** The consumer leg uuid (call_uuid of the original CDR row). */
  callUuid: string;
  callAttemptId: string;
  mode: SupervisionMode;
  /** The new session's id: already pending when there is no previous session, inserted on replacement otherwise. */
  sessionId: string;
  supervisor: { agentId: string; extension: string };
  /** This supervisor's active session on the call, replaced by this one. */
  previous: { id: string; mode: SupervisionMode; legUuid: string | null } | null;
  actor: { type: ActorType; id: string | null };
  requestId: string | null;
}

export interface SupervisionOutcome {
  legUuid: string;
  startedAt: string;
  /** The request row (supervision.<mode>_requested) committed before the command. */
  requestAuditId: string;
}

const nonRetryable = (message: string, type: string, details: unknown[] = []) => ApplicationFailure.create({ message, type, nonRetryable: true, details });

/** Every supervision entry of one call is about the call as the client named it, so one lane holds them all. */
export function supervisionAuditEntry(
  input: { callUuid: string; mode: SupervisionMode; actor: { type: ActorType; id: string | null }; requestId: string | null; supervisorExt: string; supervisorAgentId: string | null },
  action: string,
  extra: Record<string, unknown>,
): AuditEntry {
  return {
    actorType: input.actor.type,
    actorId: input.actor.id,
    action,
    subjectType: 'call',
    subjectId: input.callUuid,
    payload: {
      call_id: input.callUuid,
      mode: input.mode,
      supervisor_ext: input.supervisorExt,
      supervisor_agent_id: input.supervisorAgentId,
      request_id: input.requestId,
      ...extra,
    },
  };
}

interface Targets {
  command: SupervisionCommand;
  agentLegUuid: string | null;
  /** The domain the campaign's agent extensions live in (the dial loop's dd_agent_domain), if any. */
  domain: string | null;
}

/** Reads what the command needs from the switch; EslUnavailableError propagates. */
async function resolveTargets(commands: SwitchCommands, input: SupervisionInput): Promise<Targets> {
  if (!(await commands.exists(input.callUuid))) throw nonRetryable('the call has no live leg on the switch', SUPERVISION_FAILURES.callNotLive);
  const agentLegUuid = await bridgedAgentLeg(commands, input.callUuid);
  const command = commandFor(input.mode, input.callUuid, agentLegUuid);
  if (command === null) throw nonRetryable('no agent leg is bridged to the call to whisper to', SUPERVISION_FAILURES.noAgentLeg);
  let domain: string | null = null;
  try {
    domain = (await commands.getVariable(input.callUuid, 'dd_agent_domain'))?.trim() || null;
  } catch (err) {
    if (!(err instanceof EslCommandError)) throw err;
  }
  return { command, agentLegUuid, domain };
}

/**
 * How long the supervisor's phone may ring. Shorter than the command's answer wait (30 s), so an
 * unanswered leg is the switch's NO_ANSWER (502 supervision_failed), not a silent link (503).
 */
export const SUPERVISOR_RING_SECONDS = 20;

async function send(commands: SwitchCommands, input: SupervisionInput, t: Targets): Promise<string> {
  const supervisor = { extension: input.supervisor.extension, ...(t.domain ? { domain: t.domain } : {}) };
  // Marks the leg as the supervisor's, never dd_agent_id: call control must not take it for the agent leg.
  // dd_supervision_tenant_id lets the leg's hangup free the slot (supervision-leg.relay.ts).
  const variables = {
    dd_supervision_id: input.sessionId,
    dd_supervision_tenant_id: input.tenantId,
    dd_supervisor_agent_id: input.supervisor.agentId,
    originate_timeout: SUPERVISOR_RING_SECONDS,
  };
  const leg =
    t.command.kind === 'eavesdrop'
      ? await commands.eavesdrop({ targetUuid: t.command.targetUuid, supervisor, mode: t.command.mode, variables })
      : await commands.takeover({ consumerUuid: t.command.consumerUuid, supervisor, variables });
  return leg.uuid;
}

/**
 * One supervision request, run by the supervision activity:
 * 1. the switch link must be up, else both rows are evidenced (requested, failed ESL_UNAVAILABLE)
 *    and it fails esl_unavailable; the consumer leg must be on the switch and, for whisper, an agent
 *    leg bridged to it, else 409 with no evidence (nothing was asked of the switch);
 * 2. `supervision.<mode>_requested` is committed BEFORE any command, in the same transaction that
 *    swaps a previous session of this supervisor for the new pending one; when it cannot be
 *    written nothing is sent and it fails audit_unavailable;
 * 3. the previous leg of this supervisor on this call is hung up (one active mode per supervisor
 *    per call), then the command is sent;
 * 4. `supervision.<mode>` with outcome succeeded (leg uuid) or failed (switch cause), and the
 *    session goes active or failed. A reserved slot that never got a leg is released on every
 *    failure path.
 */
export async function runSupervision(deps: AppDeps, input: SupervisionInput): Promise<SupervisionOutcome> {
  const { tenantId, callUuid, mode } = input;
  const entry = (suffix: string, targetUuid: string | null, extra: Record<string, unknown> = {}) =>
    supervisionAuditEntry(
      { callUuid, mode, actor: input.actor, requestId: input.requestId, supervisorExt: input.supervisor.extension, supervisorAgentId: input.supervisor.agentId },
      `supervision.${mode}${suffix}`,
      {
        call_attempt_id: input.callAttemptId,
        session_id: input.sessionId,
        target_uuid: targetUuid,
        replaces: input.previous ? { session_id: input.previous.id, mode: input.previous.mode, leg_uuid: input.previous.legUuid } : null,
        ...extra,
      },
    );
  const release = async (reason: string): Promise<void> => {
    await withTenantSql(deps.db, tenantId, (sql) => failSession(sql, tenantId, input.sessionId, reason)).catch((e: unknown) =>
      deps.logger.error({ err: (e as Error).message, session_id: input.sessionId, reason }, 'supervision slot could not be released; the sweep frees it'),
    );
  };
  const auditUnavailable = async (err: unknown): Promise<never> => {
    deps.logger.error({ err: (err as Error).message, call_id: callUuid, mode }, 'supervision evidence could not be written');
    await release('audit_unavailable');
    throw nonRetryable('the evidence row could not be written; no switch command was sent', SUPERVISION_FAILURES.auditUnavailable);
  };
  const write = <T>(work: (sql: SqlTx) => Promise<T>): Promise<T> => withTenantSql(deps.db, tenantId, work);
  const eslDown = async (): Promise<never> => {
    try {
      await write((sql) => appendAuditSql(sql, tenantId, [entry('_requested', null), entry('', null, { outcome: 'failed', cause: 'ESL_UNAVAILABLE' })]));
    } catch (err) {
      return auditUnavailable(err);
    }
    await release('esl_unavailable');
    throw nonRetryable('the switch control link is unavailable', SUPERVISION_FAILURES.eslUnavailable);
  };

  const esl = deps.esl;
  if (!esl?.isUp()) return eslDown();
  const commands = createSwitchCommands(esl);

  let targets: Targets;
  try {
    targets = await resolveTargets(commands, input);
  } catch (err) {
    if (err instanceof EslUnavailableError) return eslDown();
    const failed = err instanceof ApplicationFailure ? err.type : null;
    await release(failed === SUPERVISION_FAILURES.noAgentLeg ? 'no_agent_leg' : failed === SUPERVISION_FAILURES.callNotLive ? 'call_not_live' : 'error');
    throw err;
  }
  const targetUuid = targets.command.kind === 'eavesdrop' ? targets.command.targetUuid : targets.command.consumerUuid;

  // null: the previous session was ended or replaced meanwhile, and nothing was written.
  let requestAuditId: string | null;
  try {
    requestAuditId = await write(async (sql) => {
      if (input.previous) {
        const replaced = await replaceSession(sql, tenantId, input.previous.id, {
          id: input.sessionId,
          callAttemptId: input.callAttemptId,
          callUuid,
          supervisorAgentId: input.supervisor.agentId,
          supervisorExt: input.supervisor.extension,
          mode,
        });
        if (!replaced) return null;
      }
      await appendAuditSql(sql, tenantId, [entry('_requested', targetUuid)]);
      // Read in the writing transaction: the answer never names an uncommitted row.
      return requestRowId(sql, tenantId, callUuid, mode, input.sessionId);
    });
  } catch (err) {
    return auditUnavailable(err);
  }
  if (requestAuditId === null) throw nonRetryable('the supervisor’s previous session on this call was ended meanwhile', SUPERVISION_FAILURES.replacedMeanwhile);

  const outcome = (extra: Record<string, unknown>, session: (sql: SqlTx) => Promise<void>) =>
    write(async (sql) => {
      await session(sql);
      await appendAuditSql(sql, tenantId, [entry('', targetUuid, extra)]);
    });

  let legUuid: string;
  try {
    if (input.previous?.legUuid) await commands.hangup(input.previous.legUuid).catch((err: unknown) => {
      // A previous leg the supervisor already hung up is not an error; a lost link is.
      if (err instanceof EslUnavailableError) throw err;
    });
    legUuid = await send(commands, input, targets);
  } catch (err) {
    const cause = err instanceof EslUnavailableError ? 'ESL_UNAVAILABLE' : err instanceof EslCommandError ? err.switchCause : 'ERROR';
    await outcome({ outcome: 'failed', cause }, (sql) => failSession(sql, tenantId, input.sessionId, cause)).catch((e: unknown) => {
      deps.logger.error({ err: (e as Error).message, call_id: callUuid, mode, cause }, 'supervision outcome row could not be written');
      return release(cause);
    });
    if (err instanceof EslUnavailableError) throw nonRetryable('the switch control link is unavailable', SUPERVISION_FAILURES.eslUnavailable);
    if (err instanceof EslCommandError) throw nonRetryable(`the switch rejected ${mode} (${cause})`, SUPERVISION_FAILURES.switchRejected, [cause]);
    throw err;
  }

  let startedAt = new Date();
  await outcome({ outcome: 'succeeded', leg_uuid: legUuid }, async (sql) => {
    startedAt = (await activateSession(sql, tenantId, input.sessionId, legUuid)) ?? startedAt;
  }).catch((e: unknown) =>
    deps.logger.error({ err: (e as Error).message, call_id: callUuid, mode, session_id: input.sessionId }, 'supervision outcome could not be written; the leg is up'),
  );
  // A takeover hands the consumer to another person: the call's timeline says so (CONTRACT section
  // 11). Written apart from the audit, so a failure here never costs the outcome row.
  if (mode === 'takeover') {
    await recordCallEvent(deps, tenantId, input.callAttemptId, {
      event: 'transferred',
      at: startedAt,
      data: { from: 'agent', to: 'supervisor', supervisor_agent_id: input.supervisor.agentId, supervisor_ext: input.supervisor.extension, leg_uuid: legUuid },
      dedupKey: `transferred:supervision:${input.sessionId}`,
    }).catch((e: unknown) => deps.logger.error({ err: (e as Error).message, call_id: callUuid, session_id: input.sessionId }, 'takeover not written to the call timeline'));
  }
  return { legUuid, startedAt: startedAt.toISOString(), requestAuditId };
}
