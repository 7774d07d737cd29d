import type { ReplayResult, ResetResult, RunDetail, RunRow, transitionCampaignRun } from './campaigns.commands';
import type { KeyStatusRow, RotationResult } from './keys.commands';
import type { StuckExport } from './exports.commands';
import { details, table } from './output';
import type { DeadLetterRow, redeliverDeadLetter } from './webhooks.commands';

export function renderRuns(rows: RunRow[]): string {
  if (rows.length === 0) return 'no campaign runs match';
  return table(
    ['tenant', 'campaign', 'name', 'state', 'workflow', 'started', 'run id'],
    rows.map((r) => [r.tenant_id, r.campaign_id, r.campaign_name, r.campaign_state, r.status, r.started_at, r.run_id]),
  );
}

export function renderDetail(d: RunDetail): string {
  const head = details([
    ['tenant', d.campaign.tenant_id],
    ['campaign', `${d.campaign.id} (${d.campaign.name})`],
    ['campaign state', d.campaign.state],
  ]);
  const run = d.run;
  if (!run) return `${head}\nno run in Temporal: never started, or its history is past the namespace's retention`;
  const s = run.stats;
  const rs = run.run_state;
  const body = details([
    ['workflow', run.workflow_id],
    ['run id', run.run_id],
    ['status', run.status],
    ['started', run.started_at],
    ['closed', run.closed_at],
    ['history length', run.history_length],
    ['task queue', run.task_queue],
    ['last healthy event', run.last_healthy_event_id],
    ['run state', rs ? `tick ${rs.tick}${rs.paused ? ', paused' : ''}${rs.stopped ? ', stopping' : ''}; running since ${rs.runStartedAt}; tick_ms ${rs.options.tick_ms}` : 'no answer (closed run, or no worker polls its queue)'],
    ['stats', s ? `dialed ${s.dialed}, blocked ${s.blocked}, finished ${s.finished}, reaped ${s.reaped}, in flight ${s.in_flight}, ratio ${s.pacing.ratio}` : 'none (the campaign is not running)'],
  ]);
  const activities = run.pending_activities.length
    ? table(
        ['activity', 'type', 'state', 'attempt', 'scheduled', 'last failure'],
        run.pending_activities.map((a) => [a.activity_id, a.activity_type, a.state, a.attempt, a.scheduled_at, a.last_failure]),
      )
    : 'no pending activities';
  return `${head}\n${body}\n${activities}`;
}

export function renderTransition(r: Awaited<ReturnType<typeof transitionCampaignRun>>): string {
  return `${r.verb}: campaign ${r.campaign.id} (${r.campaign.name}) is ${r.campaign.state}`;
}

export function renderReset(r: ResetResult): string {
  const failure = r.first_failure ? ` (first failure: event ${r.first_failure.eventId} ${r.first_failure.type})` : '';
  return `reset ${r.workflow_id} to event ${r.reset_to_event_id} ${r.reset_to_event_type}${failure}\nprevious run ${r.previous_run_id}\nnew run      ${r.new_run_id}`;
}

export function renderReplay(r: ReplayResult): string {
  const saved = r.saved_to ? `\nhistory saved to ${r.saved_to}` : '';
  return `ok: ${r.events} events of run ${r.run_id} replay against the current workflow code${saved}`;
}

export function renderDeadLetters(rows: DeadLetterRow[]): string {
  if (rows.length === 0) return 'no dead letters';
  return table(
    ['webhook', 'delivery', 'event', 'event id', 'attempts', 'last status', 'last error', 'dead at'],
    rows.map((r) => [r.webhook_id, r.delivery_id, r.event, r.event_id, r.attempts, r.last_status_code, r.last_error, r.dead_at]),
  );
}

export function renderRedeliver(r: Awaited<ReturnType<typeof redeliverDeadLetter>>): string {
  return `delivery ${r.delivery_id} (${r.event}) is ${r.status} again, due ${r.next_attempt_at ?? 'now'}; attempts so far ${r.attempts}`;
}

export function renderStuckExports(rows: StuckExport[]): string {
  if (rows.length === 0) return 'no stuck exports';
  return table(
    ['tenant', 'export', 'status', 'silent (s)', 'heartbeat', 'claimed', 'created', 'requested by'],
    rows.map((r) => [r.tenant_id, r.export_id, r.status, r.silent_seconds, r.heartbeat_at, r.claimed_at, r.created_at, r.requested_by]),
  );
}

export function renderRotation(r: RotationResult): string {
  const rows = table(
    ['field', 'rotated', 'changed meanwhile', 'plain', 'unreadable'],
    r.fields.map((f) => [f.field, f.rotated, f.changed_meanwhile, f.plain, f.unreadable.length]),
  );
  const total = r.fields.reduce((n, f) => n + f.rotated, 0);
  return `${rows}\n${total} values re-encrypted under key ${r.current_key_id} (batches of ${r.batch_size})`;
}

export function renderKeyStatus(rows: KeyStatusRow[]): string {
  if (rows.length === 0) return 'no encrypted values stored';
  return table(['field', 'key', 'current', 'values'], rows.map((r) => [r.field, r.key, r.current ? 'yes' : '', r.count]));
}
