import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps';
import { appendAuditSql } from '../../lib/audit';
import { withTenantSql } from '../../lib/tenancy';
import { sipTeardownWorkflow } from '../../../workflows/sip-teardown.workflow';
import { revokeLiveSipCredentialsSql } from './sip-credential.repository';
import { SIP_TEARDOWN_FAILURES, type SipTeardownInput } from './sip-teardown.switch';
import { applicationFailureOf } from '../../lib/workflow-failure';

export type SipTeardown = 'ok' | 'skipped' | 'failed';

export const sipTeardownWorkflowId = (tenantId: string, agentId: string): string => `sip-teardown:${tenantId}:${agentId}:${randomUUID()}`;

/** The whole teardown is bounded: an API answer never waits on a missing worker for long. */
const WORKFLOW_TIMEOUT = '30 seconds';

function causeOf(err: unknown): string {
  const failure = applicationFailureOf(err);
  switch (failure?.type) {
    case SIP_TEARDOWN_FAILURES.eslUnavailable:
      return 'ESL_UNAVAILABLE';
    case SIP_TEARDOWN_FAILURES.switchRejected:
      return typeof failure.details?.[0] === 'string' ? failure.details[0] : 'UNKNOWN';
    default:
      return 'WORKFLOW_FAILED';
  }
}

/** Runs the one-step teardown workflow; the switch cause on failure, null on success. Never throws. */
async function flushOnSwitch(deps: AppDeps, input: SipTeardownInput): Promise<string | null> {
  if (!deps.temporal) return 'NO_WORKFLOW_SERVICE';
  try {
    await deps.temporal.workflow.execute(sipTeardownWorkflow, {
      workflowId: sipTeardownWorkflowId(input.tenantId, input.agentId),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowExecutionTimeout: WORKFLOW_TIMEOUT,
      args: [input],
    });
    return null;
  } catch (err) {
    return causeOf(err);
  }
}

/**
 * Tears down the agent's SIP endpoint: revokes its live ephemeral SIP credentials (the database
 * revocation always stands and is what the switch's directory reads), then drops the extension's
 * registration on the switch through a one-step workflow (the switch is commanded only from
 * activities). 'failed' means the switch part did not happen (link down, refused, no workflow
 * service, workflow failure), so the credential stays usable on the switch until its 24 h
 * autoexpiry; it is logged and audited, never thrown. An agent without an extension has nothing
 * registered: the database part alone is 'ok'. Audited as agent.sip_teardown with the outcome.
 */
export async function teardownAgentSip(deps: AppDeps, tenantId: string, agentId: string, reason: string): Promise<Exclude<SipTeardown, 'skipped'>> {
  const { revoked, extension } = await withTenantSql(deps.db, tenantId, (sql) => revokeLiveSipCredentialsSql(sql, agentId, reason));
  const cause = extension === null ? null : await flushOnSwitch(deps, { tenantId, agentId, extension, domain: deps.config.SIP_DOMAIN ?? null });
  const outcome = cause === null ? 'ok' : 'failed';
  if (cause !== null) deps.logger.warn({ tenant_id: tenantId, agent_id: agentId, reason, cause }, 'SIP teardown failed on the switch; the credential autoexpires');
  await withTenantSql(deps.db, tenantId, (sql) =>
    appendAuditSql(sql, tenantId, [
      {
        actorType: 'system',
        action: 'agent.sip_teardown',
        subjectType: 'agent',
        subjectId: agentId,
        payload: { reason, outcome, revoked_credentials: revoked, switch: extension === null ? 'no_extension' : outcome, ...(cause === null ? {} : { cause }) },
      },
    ]),
  ).catch((err: unknown) => deps.logger.error({ err: (err as Error).message, tenant_id: tenantId, agent_id: agentId, outcome }, 'the SIP teardown audit row could not be written'));
  return outcome;
}
