import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal as proto } from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { ROOT_DIR } from '../config';
import { appendAudit } from '../lib/audit';
import { withTenant } from '../lib/tenancy';
import { campaignRunStats, RUN_STATS_DEADLINE_MS, transitionCampaign } from '../modules/campaigns/campaign-lifecycle.service';
import { getCampaign } from '../modules/campaigns/campaign.service';
import { campaignView } from '../modules/campaigns/campaign.views';
import { CAMPAIGN_RUN_STATE_QUERY, CAMPAIGN_RUN_WORKFLOW_TYPE, campaignRunWorkflowId, type CampaignRunState } from '../contracts/campaign-run';
import type { OpsContext } from './context';
import { OpsRefusal } from './output';
import { chosenResetPoint, eventIdOf, eventTypeName, lastHealthyPoint } from './run-history.rules';

const TENANT_KEY = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
const CAMPAIGN_KEY = defineSearchAttributeKey('CampaignId', SearchAttributeType.KEYWORD);
const WORKFLOW_TYPE = CAMPAIGN_RUN_WORKFLOW_TYPE;

export interface ListRunsArgs {
  tenant?: string;
  campaign?: string;
  status: 'running' | 'all';
  limit: number;
}

/** The visibility query; ids are validated UUIDs before they get here, so quoting them is safe. */
export function runsQuery(args: Pick<ListRunsArgs, 'tenant' | 'campaign' | 'status'>): string {
  const parts = [`WorkflowType = '${WORKFLOW_TYPE}'`];
  if (args.tenant) parts.push(`TenantId = '${args.tenant}'`);
  if (args.campaign) parts.push(`CampaignId = '${args.campaign}'`);
  if (args.status === 'running') parts.push(`ExecutionStatus = 'Running'`);
  return parts.join(' AND ');
}

export interface RunRow {
  tenant_id: string;
  campaign_id: string;
  campaign_name: string | null;
  /** null: the campaign row is gone (or the search attribute names no campaign of that tenant). */
  campaign_state: string | null;
  workflow_id: string;
  run_id: string;
  status: string;
  started_at: string;
  closed_at: string | null;
}

/** Campaign runs from Temporal visibility, newest first, joined with their campaign rows (tenant by tenant). */
export async function listCampaignRuns(ctx: OpsContext, args: ListRunsArgs): Promise<RunRow[]> {
  const found: Omit<RunRow, 'campaign_name' | 'campaign_state'>[] = [];
  for await (const wf of ctx.temporal.workflow.list({ query: runsQuery(args) })) {
    const tenantId = wf.typedSearchAttributes.get(TENANT_KEY);
    const campaignId = wf.typedSearchAttributes.get(CAMPAIGN_KEY);
    if (!tenantId || !campaignId) continue;
    found.push({
      tenant_id: tenantId,
      campaign_id: campaignId,
      workflow_id: wf.workflowId,
      run_id: wf.runId,
      status: wf.status.name,
      started_at: wf.startTime.toISOString(),
      closed_at: wf.closeTime?.toISOString() ?? null,
    });
    if (found.length >= args.limit) break;
  }
  const byTenant = new Map<string, Set<string>>();
  for (const r of found) byTenant.set(r.tenant_id, (byTenant.get(r.tenant_id) ?? new Set()).add(r.campaign_id));
  const campaigns = new Map<string, { name: string; state: string }>();
  for (const [tenantId, ids] of byTenant) {
    const rows = await withTenant(ctx.deps.db, tenantId, (tx) => tx.campaign.findMany({ where: { id: { in: [...ids] } } }));
    for (const row of rows) {
      const view = campaignView(row);
      campaigns.set(`${tenantId}:${row.id}`, { name: view.name, state: view.state });
    }
  }
  return found.map((r) => {
    const c = campaigns.get(`${r.tenant_id}:${r.campaign_id}`);
    return { ...r, campaign_name: c?.name ?? null, campaign_state: c?.state ?? null };
  });
}

export interface PendingActivity {
  activity_id: string;
  activity_type: string;
  state: string;
  attempt: number;
  scheduled_at: string | null;
  last_failure: string | null;
}

export interface RunDetail {
  campaign: { id: string; tenant_id: string; name: string; state: string };
  /** null: the campaign never had a run (or its history was deleted by retention). */
  run: {
    workflow_id: string;
    run_id: string;
    status: string;
    started_at: string;
    closed_at: string | null;
    history_length: number;
    task_queue: string;
    pending_activities: PendingActivity[];
    run_state: Awaited<ReturnType<typeof queryRunState>>;
    /** The stats route's answer (null stats unless the campaign is running and its run answers). */
    stats: Awaited<ReturnType<typeof campaignRunStats>>['stats'];
    /** Where `campaigns reset` goes without --to. */
    last_healthy_event_id: number | null;
  } | null;
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

function pendingActivities(desc: WorkflowExecutionDescription): PendingActivity[] {
  return (desc.raw.pendingActivities ?? []).map((a) => ({
    activity_id: a.activityId ?? '',
    activity_type: a.activityType?.name ?? '',
    state: proto.api.enums.v1.PendingActivityState[a.state ?? 0]?.replace('PENDING_ACTIVITY_STATE_', '') ?? String(a.state),
    attempt: a.attempt ?? 0,
    scheduled_at: iso(optionalTsToMs(a.scheduledTime)),
    last_failure: a.lastFailure?.message ?? null,
  }));
}

/** A run with no worker polling its queue never answers: bounded like the stats route. */
async function queryRunState(ctx: OpsContext, workflowId: string) {
  try {
    return await ctx.temporal.withDeadline(Date.now() + RUN_STATS_DEADLINE_MS, () => ctx.temporal.workflow.getHandle(workflowId).query<CampaignRunState>(CAMPAIGN_RUN_STATE_QUERY));
  } catch {
    return null;
  }
}

async function describeRun(ctx: OpsContext, workflowId: string, runId?: string): Promise<WorkflowExecutionDescription | null> {
  try {
    return await ctx.temporal.workflow.getHandle(workflowId, runId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

async function runHistory(ctx: OpsContext, workflowId: string, runId: string) {
  return ctx.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
}

export async function showCampaignRun(ctx: OpsContext, tenantId: string, campaignId: string): Promise<RunDetail> {
  const view = await getCampaign(ctx.deps, tenantId, campaignId);
  const campaign = { id: view.id, tenant_id: tenantId, name: view.name, state: view.state };
  const workflowId = campaignRunWorkflowId(tenantId, view.id);
  const desc = await describeRun(ctx, workflowId);
  if (!desc) return { campaign, run: null };
  const open = desc.status.name === 'RUNNING';
  const [runState, stats, history] = await Promise.all([
    open ? queryRunState(ctx, workflowId) : Promise.resolve(null),
    campaignRunStats(ctx.deps, tenantId, view.id),
    runHistory(ctx, workflowId, desc.runId),
  ]);
  return {
    campaign,
    run: {
      workflow_id: workflowId,
      run_id: desc.runId,
      status: desc.status.name,
      started_at: desc.startTime.toISOString(),
      closed_at: desc.closeTime?.toISOString() ?? null,
      history_length: desc.historyLength,
      task_queue: desc.taskQueue,
      pending_activities: pendingActivities(desc),
      run_state: runState,
      stats: stats.stats,
      last_healthy_event_id: lastHealthyPoint(history.events ?? [])?.eventId ?? null,
    },
  };
}

export type LifecycleCommand = 'pause' | 'resume' | 'stop';

/**
 * The API's own transition (row lock, state, audit entry, then the run's signal), with the
 * operator as the actor. transitionCampaign takes no reason, so a given reason is a second audit
 * entry (ops.campaign.<verb>) written right after the transition committed.
 */
export async function transitionCampaignRun(ctx: OpsContext, verb: LifecycleCommand, tenantId: string, campaignId: string, reason?: string) {
  const actor = { type: 'operator' as const, id: ctx.actor };
  const campaign = await transitionCampaign(ctx.deps, tenantId, actor, campaignId, verb);
  if (reason) {
    await withTenant(ctx.deps.db, tenantId, (tx) =>
      appendAudit(tx, tenantId, { actorType: actor.type, actorId: actor.id, action: `ops.campaign.${verb}`, subjectType: 'campaign', subjectId: campaign.id, payload: { reason } }),
    );
  }
  return { campaign: { id: campaign.id, tenant_id: tenantId, name: campaign.name, state: campaign.state }, verb, actor: ctx.actor, reason: reason ?? null };
}

export interface ResetArgs {
  /** 'last-healthy' or a workflow-task event id of the current run. */
  to: 'last-healthy' | number;
  reason?: string;
}

export interface ResetResult {
  workflow_id: string;
  previous_run_id: string;
  new_run_id: string;
  reset_to_event_id: number;
  reset_to_event_type: string;
  first_failure: { eventId: number; type: string } | null;
  reason: string;
}

/**
 * Temporal workflow reset of the campaign's current run: the run is terminated and a new one
 * replays its history up to the chosen workflow task, then goes on with today's code; signals
 * received after that point are re-applied (Temporal's default). Audited as campaign.run_reset.
 */
export async function resetCampaignRun(ctx: OpsContext, tenantId: string, campaignId: string, args: ResetArgs): Promise<ResetResult> {
  const view = await getCampaign(ctx.deps, tenantId, campaignId);
  const workflowId = campaignRunWorkflowId(tenantId, view.id);
  const desc = await describeRun(ctx, workflowId);
  if (!desc) throw new OpsRefusal(`campaign ${view.id} has no run to reset`);
  const events = (await runHistory(ctx, workflowId, desc.runId)).events ?? [];
  let target;
  let firstFailure: ResetResult['first_failure'] = null;
  if (args.to === 'last-healthy') {
    const point = lastHealthyPoint(events);
    if (!point) throw new OpsRefusal(`run ${desc.runId} has no healthy point: no workflow task completed before its first failure`);
    target = point.event;
    firstFailure = point.firstFailure;
  } else {
    const chosen = chosenResetPoint(events, args.to);
    if ('refused' in chosen) throw new OpsRefusal(chosen.refused);
    target = chosen.event;
  }
  const reason = `${args.reason ?? 'reset to the last healthy point'} (operator ${ctx.actor})`;
  const response = await ctx.temporal.workflowService.resetWorkflowExecution({
    namespace: ctx.deps.config.TEMPORAL_NAMESPACE,
    workflowExecution: { workflowId, runId: desc.runId },
    reason,
    workflowTaskFinishEventId: target.eventId,
    requestId: randomUUID(),
  });
  const result: ResetResult = {
    workflow_id: workflowId,
    previous_run_id: desc.runId,
    new_run_id: response.runId ?? '',
    reset_to_event_id: eventIdOf(target),
    reset_to_event_type: eventTypeName(target),
    first_failure: firstFailure,
    reason,
  };
  await withTenant(ctx.deps.db, tenantId, (tx) =>
    appendAudit(tx, tenantId, {
      actorType: 'operator',
      actorId: ctx.actor,
      action: 'campaign.run_reset',
      subjectType: 'campaign',
      subjectId: view.id,
      payload: { ...result },
    }),
  );
  return result;
}

export interface ReplayArgs {
  runId?: string;
  out?: string;
}

export interface ReplayResult {
  workflow_id: string;
  run_id: string;
  events: number;
  ok: boolean;
  /** The determinism (or other replay) error; null when ok. */
  error: string | null;
  saved_to: string | null;
}

/**
 * Where the replayer gets the workflow code: the worker's prebuilt bundle when WORKFLOW_BUNDLE_PATH
 * is set (the code the workers run), else the source tree, bundled like the worker bundles it.
 */
export function replayCodeOptions(bundlePath: string | undefined): ReplayWorkerOptions {
  return bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: path.join(ROOT_DIR, 'workflows', 'index.ts') };
}

/** Replays a run's history against the current workflow code; a divergence is a refusal (exit 1) carrying the result. */
export async function replayCampaignRun(ctx: OpsContext, tenantId: string, campaignId: string, args: ReplayArgs): Promise<ReplayResult> {
  const view = await getCampaign(ctx.deps, tenantId, campaignId);
  const workflowId = campaignRunWorkflowId(tenantId, view.id);
  const desc = await describeRun(ctx, workflowId, args.runId);
  if (!desc) throw new OpsRefusal(args.runId ? `run ${args.runId} of campaign ${view.id} was not found` : `campaign ${view.id} has no run to replay`);
  const history = await runHistory(ctx, workflowId, desc.runId);
  let savedTo: string | null = null;
  if (args.out) {
    savedTo = path.resolve(args.out);
    writeFileSync(savedTo, historyJson(history));
  }
  const base = { workflow_id: workflowId, run_id: desc.runId, events: history.events?.length ?? 0, saved_to: savedTo };
  const error = await replayHistory(history, workflowId, ctx.deps.config.WORKFLOW_BUNDLE_PATH);
  if (error) {
    const result: ReplayResult = { ...base, ok: false, error };
    throw new OpsRefusal(`replay of run ${desc.runId} diverged: ${error}`, result);
  }
  return { ...base, ok: true, error: null };
}

const HistoryMessage = proto.api.history.v1.History;

/**
 * A history as proto JSON: enum names, 64-bit ids as strings, payload bytes in base64.
 * History.fromObject of @temporalio/proto reads it back for Worker.runReplayHistory. (historyToJSON
 * of @temporalio/common is not used: its nested protobufjs copy refuses this install's types.)
 */
export function historyJson(history: History): string {
  return JSON.stringify(HistoryMessage.toObject(HistoryMessage.fromObject(history), { longs: String, enums: String, bytes: String }), null, 2);
}

export function historyFromFile(text: string): History {
  return HistoryMessage.fromObject(JSON.parse(text) as Record<string, unknown>);
}

/** Replays one history; the error (a DeterminismViolationError, say) as one line, or null when it replays. */
export async function replayHistory(history: History, workflowId: string, bundlePath: string | undefined): Promise<string | null> {
  try {
    await Worker.runReplayHistory(replayCodeOptions(bundlePath), history, workflowId);
    return null;
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`.split('\n')[0]!;
  }
}
