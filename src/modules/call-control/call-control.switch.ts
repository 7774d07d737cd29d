import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType, type AuditEntry } from '../../lib/audit';
import { withTenantSql, type SqlTx } from '../../lib/tenancy';
import { createSwitchCommands, EslCommandError, EslUnavailableError, type SwitchCommands } from '../../switch/esl';
import { requestRowId } from './call-control.repository';

export const CALL_CONTROL_ACTIONS = ['hold', 'unhold', 'mute', 'unmute', 'hangup'] as const;
export type CallControlAction = (typeof CALL_CONTROL_ACTIONS)[number];

/**
 * The typed failures of the call-control activity (ApplicationFailure.type); the API maps them back
 * to its errors (call-control.service.ts). Every one is non-retryable: a switch command is never
 * sent twice for one request.
 */
export const CALL_CONTROL_FAILURES = {
  /** The evidence row could not be written: 503 audit_unavailable, no switch command sent. */
  auditUnavailable: 'CallControlAuditUnavailable',
  /** The switch control link is down (or went down mid-command): 503 esl_unavailable. */
  eslUnavailable: 'CallControlEslUnavailable',
  /** The switch answered -ERR: 502 dial_error (details: [switch cause]). */
  switchRejected: 'CallControlSwitchRejected',
  /** No agent leg bridged to the consumer leg (or, for hangup, no consumer leg on the switch): 409. */
  noAgentLeg: 'CallControlNoAgentLeg',
  callNotLive: 'CallControlCallNotLive',
} as const;

export interface CallControlInput {
  tenantId: string;
  /** The consumer leg uuid (call_uuid of the original CDR row). */
  callUuid: string;
  /** The original CDR row (audit subject). */
  callAttemptId: string;
  action: CallControlAction;
  actor: { type: ActorType; id: string | null };
  requestId: string | null;
  /**
   * This request's own id (the uuid that ends the workflow id), written into the evidence rows as
   * control_id so the request row can be named in the answer (audit_id).
   */
  controlId: string;
}

export interface CallControlOutcome {
  agentLegUuid: string | null;
  at: string;
  /** The request row (call.<action>_requested) committed before the command. */
  requestAuditId: string;
}

const nonRetryable = (message: string, type: string, details: unknown[] = []) => ApplicationFailure.create({ message, type, nonRetryable: true, details });

/**
 * The agent leg bridged to the consumer leg: the consumer leg's `bridge_to` (FreeSWITCH's
 * SWITCH_BRIDGE_VARIABLE, set on both legs by uuid_bridge; `bridge_uuid` as a fallback), accepted
 * only when that leg exists and carries `dd_agent_id` (the dial loop's agent-leg variable), so a
 * supervisor leg after a takeover is not mistaken for the agent. null when there is none or the
 * consumer leg is gone. EslUnavailableError propagates.
 */
export async function bridgedAgentLeg(commands: SwitchCommands, callUuid: string): Promise<string | null> {
  const read = async (uuid: string, name: string): Promise<string | null> => {
    try {
      const v = await commands.getVariable(uuid, name);
      return v === null || v.trim() === '' ? null : v.trim();
    } catch (err) {
      if (err instanceof EslCommandError) return null; // no such channel
      throw err;
    }
  };
  const other = (await read(callUuid, 'bridge_to')) ?? (await read(callUuid, 'bridge_uuid'));
  if (other === null || !/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/.test(other)) return null;
  return (await read(other, 'dd_agent_id')) === null ? null : other;
}

/**
 * One live-call control command, run by the call-control activity:
 * 1. the switch link must be up, and the target found (the bridged agent leg for the toggles, the
 *    consumer leg for hangup), else 409 with no evidence row (nothing was asked of the switch);
 *    a link that is down is evidenced (requested + failed ESL_UNAVAILABLE) and fails esl_unavailable;
 * 2. `call.<action>_requested` is committed BEFORE the command; when it cannot be written the
 *    activity fails audit_unavailable and sends nothing;
 * 3. the command: hold/unhold/mute/unmute act on the agent leg, hangup kills the consumer leg;
 * 4. `call.<action>` with outcome succeeded or failed (and the switch cause) is committed after it.
 *    When only this second row cannot be written, the request row stays the evidence and the
 *    outcome is logged (the command did run; answering an error would invite a blind retry).
 */
export async function runCallControl(deps: AppDeps, input: CallControlInput): Promise<CallControlOutcome> {
  const { tenantId, callUuid, action } = input;
  const entry = (suffix: string, agentLegUuid: string | null, extra: Record<string, unknown> = {}): AuditEntry => ({
    actorType: input.actor.type,
    actorId: input.actor.id,
    action: `call.${action}${suffix}`,
    subjectType: 'call_attempt',
    subjectId: input.callAttemptId,
    payload: { call_id: callUuid, action, agent_leg_uuid: agentLegUuid, request_id: input.requestId, control_id: input.controlId, ...extra },
  });
  const evidence = async <T>(work: (sql: SqlTx) => Promise<T>): Promise<T> => {
    try {
      return await withTenantSql(deps.db, tenantId, work);
    } catch (err) {
      deps.logger.error({ err: (err as Error).message, call_id: callUuid, action }, 'call-control evidence could not be written');
      throw nonRetryable('the evidence row could not be written; no switch command was sent', CALL_CONTROL_FAILURES.auditUnavailable);
    }
  };
  const audit = (entries: AuditEntry[]): Promise<void> => evidence((sql) => appendAuditSql(sql, tenantId, entries));
  const eslDown = async (agentLegUuid: string | null): Promise<never> => {
    await audit([entry('_requested', agentLegUuid), entry('', agentLegUuid, { outcome: 'failed', cause: 'ESL_UNAVAILABLE' })]);
    throw nonRetryable('the switch control link is unavailable', CALL_CONTROL_FAILURES.eslUnavailable);
  };

  const esl = deps.esl;
  if (!esl?.isUp()) return eslDown(null);
  const commands = createSwitchCommands(esl);

  let agentLegUuid: string | null;
  try {
    agentLegUuid = await bridgedAgentLeg(commands, callUuid);
    if (action === 'hangup') {
      if (!(await commands.exists(callUuid))) throw nonRetryable('the call has no live leg on the switch', CALL_CONTROL_FAILURES.callNotLive);
    } else if (agentLegUuid === null) {
      throw nonRetryable('no agent leg is bridged to the call', CALL_CONTROL_FAILURES.noAgentLeg);
    }
  } catch (err) {
    if (err instanceof EslUnavailableError) return eslDown(null);
    throw err;
  }

  // The row's id is read in the transaction that writes it: an answer never names an uncommitted row.
  const requestAuditId = await evidence(async (sql) => {
    await appendAuditSql(sql, tenantId, [entry('_requested', agentLegUuid)]);
    return requestRowId(sql, tenantId, input.callAttemptId, action, input.controlId);
  });

  try {
    switch (action) {
      case 'hold':
        await commands.hold(agentLegUuid!);
        break;
      case 'unhold':
        await commands.unhold(agentLegUuid!);
        break;
      case 'mute':
        await commands.mute(agentLegUuid!);
        break;
      case 'unmute':
        await commands.unmute(agentLegUuid!);
        break;
      case 'hangup':
        await commands.hangup(callUuid);
        break;
    }
  } catch (err) {
    const cause = err instanceof EslUnavailableError ? 'ESL_UNAVAILABLE' : err instanceof EslCommandError ? err.switchCause : 'ERROR';
    await audit([entry('', agentLegUuid, { outcome: 'failed', cause })]).catch((e: unknown) =>
      deps.logger.error({ err: (e as Error).message, call_id: callUuid, action, cause }, 'call-control outcome row could not be written'),
    );
    if (err instanceof EslUnavailableError) throw nonRetryable('the switch control link is unavailable', CALL_CONTROL_FAILURES.eslUnavailable);
    if (err instanceof EslCommandError) throw nonRetryable(`the switch rejected ${action} (${cause})`, CALL_CONTROL_FAILURES.switchRejected, [cause]);
    throw err;
  }

  const at = new Date().toISOString();
  await audit([entry('', agentLegUuid, { outcome: 'succeeded', at })]).catch((e: unknown) =>
    deps.logger.error({ err: (e as Error).message, call_id: callUuid, action }, 'call-control outcome row could not be written; the command ran'),
  );
  return { agentLegUuid, at, requestAuditId };
}
