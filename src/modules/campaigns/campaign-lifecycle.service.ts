import { WorkflowNotFoundError } from '@temporalio/client';
import type { AppDeps } from '../../deps';
import { appendAudit, type ActorType } from '../../lib/audit';
import { conflict, internal, notFound } from '../../lib/errors';
import { withTenant } from '../../lib/tenancy';
import {
  CAMPAIGN_RUN_PAUSE_SIGNAL,
  CAMPAIGN_RUN_RESUME_SIGNAL,
  CAMPAIGN_RUN_STATS_QUERY,
  CAMPAIGN_RUN_STOP_SIGNAL,
  CAMPAIGN_RUN_WORKFLOW_TYPE,
  campaignRunWorkflowId,
  type CampaignRunInput,
  type CampaignRunStats,
} from '../../contracts/campaign-run';
import { carrierGatewayOf } from '../carriers/carrier.service';
import { DEFAULT_RUNNER_OPTIONS, type RunnerOptions } from '../dialer/runner-options';
import { acceptedStates, lifecycleTarget, type CampaignVerb } from './campaign-lifecycle.rules';
import { campaignRunStatsView } from './campaign-stats.view';
import { campaignView } from './campaign.views';

type Actor = { type: ActorType; id: string | null };

// SPEC's closed error vocabulary has no code for the workflow service: a 500 `internal` whose
// message says the state change is kept and the call is safe to repeat.
const runnerUnavailable = (detail: string) =>
  internal(`the campaign state is saved, but its runner could not be reached (${detail}); repeat the call to retry`);

/**
 * A lifecycle call. The state is persisted first (row lock, audit entry), then the run workflow is
 * told: start and resume use signalWithStart, so a second start reaches the open run and a crash
 * between the two steps is repaired by repeating the call; pause and stop signal the run, which
 * also re-reads the state every tick, so a lost signal costs one tick.
 */
export async function transitionCampaign(
  deps: AppDeps,
  tenantId: string,
  actor: Actor,
  id: string,
  verb: CampaignVerb,
  options: RunnerOptions = DEFAULT_RUNNER_OPTIONS,
  /** The caller sent options: an open run adopts them on resume; otherwise it keeps its own. */
  optionsGiven = false,
) {
  // The path id may be any spelling PostgreSQL reads as this uuid (upper case, say): from the lock
  // on, the campaign is named by its canonical id, so the workflow id (a business key), its search
  // attributes and the audit subject are the same whatever the caller wrote.
  const wakesWithOptions = verb === 'start' || verb === 'resume';
  // What the run gets: the options as sent, but the gateway is the switch's name for the carrier
  // the caller named, derived by carrierGatewayOf (the audit keeps the caller's carrier id).
  let runOptions = options;
  const view = await withTenant(deps.db, tenantId, async (tx) => {
    if (wakesWithOptions && options.gateway !== null) runOptions = { ...options, gateway: await carrierGatewayOf(tx, options.gateway) };
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id::text AS id FROM campaigns WHERE id = ${id}::uuid FOR UPDATE`;
    const row = locked.length ? await tx.campaign.findUnique({ where: { id: locked[0]!.id } }) : null;
    if (!row) throw notFound();
    const to = lifecycleTarget(verb, row.state);
    if (to === null) {
      throw conflict(`cannot ${verb} a campaign in state ${row.state} (${verb} accepts ${acceptedStates(verb).join(', ')})`);
    }
    if (to === row.state) return campaignView(row);
    if (to === 'running' && row.campaignType === 'ai_voice') {
      const agent = row.aiAgentId ? await tx.aiAgent.findUnique({ where: { id: row.aiAgentId }, select: { status: true } }) : null;
      if (!agent || agent.status === 'retired') throw conflict(`an ai_voice campaign needs an ai_agent_id of an AI agent that is not retired to ${verb}`);
    }
    const updated = await tx.campaign.update({ where: { id: row.id }, data: { state: to } });
    await appendAudit(tx, tenantId, {
      actorType: actor.type,
      actorId: actor.id,
      action: `campaign.${verb}`,
      subjectType: 'campaign',
      subjectId: row.id,
      payload: { from: row.state, to, ...(wakesWithOptions && (optionsGiven || row.state === 'draft') ? { runner_options: options } : {}) },
    });
    return campaignView(updated);
  });

  if (verb === 'archive') return view;
  const temporal = deps.temporal;
  if (!temporal) throw runnerUnavailable('no workflow service is configured');
  const campaignId = view.id;
  const workflowId = campaignRunWorkflowId(tenantId, campaignId);
  const wakes = verb === 'start' || verb === 'resume' || verb === 'restore_balance';
  try {
    if (wakes) {
      await temporal.workflow.signalWithStart(CAMPAIGN_RUN_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ tenantId, campaignId, options: runOptions } satisfies CampaignRunInput],
        signal: CAMPAIGN_RUN_RESUME_SIGNAL,
        signalArgs: [optionsGiven ? runOptions : null],
        searchAttributes: { TenantId: [tenantId], CampaignId: [campaignId] },
      });
    } else {
      await temporal.workflow.getHandle(workflowId).signal(verb === 'stop' ? CAMPAIGN_RUN_STOP_SIGNAL : CAMPAIGN_RUN_PAUSE_SIGNAL);
    }
  } catch (err) {
    // No open run: nothing to pause or stop (the state already says so).
    if (err instanceof WorkflowNotFoundError && !wakes) return view;
    deps.logger.error({ err: (err as Error).message, campaign_id: campaignId, verb }, 'campaign run workflow not reached');
    throw runnerUnavailable((err as Error).message);
  }
  return view;
}

/** How long the stats route waits for Temporal (describe, then the run's own query). */
export const RUN_STATS_DEADLINE_MS = 3000;

/**
 * GET /v1/campaigns/{id}/stats: the run's own counters (a workflow query) while the campaign is
 * running and its run is open; stats null otherwise (a paused run dials nothing). A run that does
 * not answer its query in time (no worker polls its task queue) is not running either: the route
 * answers stats null after RUN_STATS_DEADLINE_MS instead of waiting out Temporal's own query
 * timeout. Only a workflow service that cannot be read at all is a 500.
 */
export async function campaignRunStats(deps: AppDeps, tenantId: string, id: string) {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.campaign.findUnique({ where: { id }, select: { id: true, state: true } }));
  if (!row) throw notFound();
  let stats: CampaignRunStats | null = null;
  const temporal = deps.temporal;
  if (temporal && row.state === 'running') {
    const handle = temporal.workflow.getHandle(campaignRunWorkflowId(tenantId, row.id));
    let open = false;
    try {
      open = (await temporal.withDeadline(Date.now() + RUN_STATS_DEADLINE_MS, () => handle.describe())).status.name === 'RUNNING';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) {
        deps.logger.error({ err: (err as Error).message, campaign_id: row.id }, 'campaign run not readable');
        throw internal(`the campaign's run could not be read (${(err as Error).message}); retry`);
      }
    }
    if (open) {
      try {
        stats = await temporal.withDeadline(Date.now() + RUN_STATS_DEADLINE_MS, () => handle.query<CampaignRunStats>(CAMPAIGN_RUN_STATS_QUERY));
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message, campaign_id: row.id }, 'campaign run did not answer its stats query');
      }
    }
  }
  return { campaign_id: row.id, state: row.state, running: stats !== null, stats: stats === null ? null : campaignRunStatsView(stats) };
}
