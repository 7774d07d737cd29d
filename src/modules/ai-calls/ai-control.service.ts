import { WorkflowNotFoundError } from '@temporalio/client';
import type { AppDeps } from '../../deps';
import { appendAuditSql, type ActorType } from '../../lib/audit';
import { AppError, conflict, internal, invalid, notFound } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { aiStopSignal, aiTakeoverSignal } from '../../../workflows/ai-call.workflow';
import { aiCallWorkflowId } from '../../../workflows/ids';
import type { TakeoverBody } from './ai-call.schemas';
import { conversationView } from './ai-call.views';
import {
  clearAiPause,
  lockAiPausedAt,
  lockConversation,
  markConversationTakenOver,
  selectAiPause,
  selectLiveAiCallUuids,
  selectTakeoverAgent,
  setAiPaused,
} from './ai-call.repository';
import { wakeRunningCampaignRuns } from '../dialer/campaign-wake';

type Actor = { type: ActorType; id: string | null };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Signals one live AI call workflow; a call that already ended has nothing to stop (false). */
async function signalAiCall(deps: AppDeps, tenantId: string, callUuid: string, send: (h: ReturnType<NonNullable<AppDeps['temporal']>['workflow']['getHandle']>) => Promise<void>): Promise<boolean> {
  const temporal = deps.temporal;
  if (!temporal) throw internal('no workflow service is configured; retry with backoff');
  try {
    await send(temporal.workflow.getHandle(aiCallWorkflowId(tenantId, callUuid)));
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * The kill switch. The flag and its audit entry commit first (from then on no tick places an AI
 * call and no answered call starts its AI); then every live AI call of the tenant is told to stop.
 * A second pause keeps the first one's time and reason and stops what is still live.
 */
export async function pauseAi(deps: AppDeps, tenantId: string, actor: Actor, reason: string | null) {
  const { paused, live } = await withTenantSql(deps.db, tenantId, async (sql) => {
    if (!(await lockAiPausedAt(sql))) {
      await setAiPaused(sql, reason);
      await appendAuditSql(sql, tenantId, [
        { actorType: actor.type, actorId: actor.id, action: 'ai.paused', subjectType: 'tenant', subjectId: tenantId, payload: { reason } },
      ]);
    }
    const row = await selectAiPause(sql);
    return { paused: row!, live: await selectLiveAiCallUuids(sql) };
  });
  let stopped = 0;
  for (const uuid of live) {
    if (await signalAiCall(deps, tenantId, uuid, (h) => h.signal(aiStopSignal, { reason: 'paused' }))) stopped += 1;
  }
  return { paused: true as const, paused_at: paused.ai_paused_at.toISOString(), reason: paused.ai_paused_reason, stopped_calls: stopped };
}

/** Lifts the kill switch (audited when it was on); calls stopped stay stopped. */
export async function resumeAi(deps: AppDeps, tenantId: string, actor: Actor) {
  await withTenantSql(deps.db, tenantId, async (sql) => {
    if (await clearAiPause(sql)) {
      await appendAuditSql(sql, tenantId, [{ actorType: actor.type, actorId: actor.id, action: 'ai.resumed', subjectType: 'tenant', subjectId: tenantId }]);
    }
  });
  await wakeRunningCampaignRuns(deps, tenantId, ['ai_voice']);
  return { paused: false as const };
}

/**
 * Hands a live AI call to a person, evidence first: the audit entry commits before anything is
 * sent, then the call's AI workflow is told (it stops speaking and bridges the consumer to the
 * agent's or supervisor's extension), then the conversation is marked taken over.
 */
export async function takeoverConversation(deps: AppDeps, tenantId: string, actor: Actor, id: string, body: TakeoverBody) {
  if (!UUID_RE.test(id)) throw notFound();
  const target = await withTenantSql(deps.db, tenantId, async (sql) => {
    const conv = await lockConversation(sql, id);
    if (!conv) throw notFound();
    if (conv.kind !== 'call' || !conv.call_uuid) throw conflict('a sandbox conversation has no call to take over');
    if (conv.status !== 'active') throw conflict(`the conversation is ${conv.status}, not active`);
    let extension: string;
    let agentId: string | null = null;
    if (body.agent_id !== undefined) {
      if (!UUID_RE.test(body.agent_id)) throw invalid(`agent_id '${body.agent_id}' is not an agent of this tenant`);
      const agent = await selectTakeoverAgent(sql, body.agent_id);
      if (!agent) throw invalid(`agent_id '${body.agent_id}' is not an agent of this tenant`);
      if (agent.status !== 'active' || agent.presence !== 'available' || !agent.sip_extension) {
        throw conflict('the agent is not available (active, checked in with an extension, not on a call)');
      }
      agentId = agent.id;
      extension = agent.sip_extension;
    } else {
      extension = body.supervisor_ext!;
    }
    const takenOverBy = agentId ? `agent:${agentId}` : `ext:${extension}`;
    await appendAuditSql(sql, tenantId, [
      {
        actorType: actor.type,
        actorId: actor.id,
        action: 'ai.conversation.taken_over',
        subjectType: 'ai_conversation',
        subjectId: conv.id,
        payload: { call_uuid: conv.call_uuid, agent_id: agentId, supervisor_ext: agentId ? null : extension },
      },
    ]).catch((err: unknown) => {
      deps.logger.error({ err: (err as Error).message, ai_conversation_id: conv.id }, 'takeover evidence not written');
      throw new AppError(503, 'audit_unavailable', 'the evidence row could not be written; nothing was sent to the switch; retry with backoff');
    });
    return { callUuid: conv.call_uuid, agentId, extension, takenOverBy };
  });
  const signalled = await signalAiCall(deps, tenantId, target.callUuid, (h) =>
    h.signal(aiTakeoverSignal, { agentId: target.agentId, extension: target.agentId ? null : target.extension }),
  );
  if (!signalled) throw conflict('the call has ended');
  const row = await withTenantSql(deps.db, tenantId, (sql) => markConversationTakenOver(sql, id, target.takenOverBy));
  if (!row) throw conflict('the conversation ended before it was taken over');
  return { conversation: conversationView(row) };
}
