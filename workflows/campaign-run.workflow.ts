import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CampaignPacingState, CampaignRunActivities, CampaignRunInput, CampaignRunOptions, CampaignRunPauseSignal, CampaignRunResult, CampaignRunResumeSignal, CampaignRunState, CampaignRunStateQuery, CampaignRunStats, CampaignRunStatsQuery, CampaignRunStopSignal, CampaignRunWakeSignal, DialTickResult, NextTick, RunCounters } from '../src/contracts/campaign-run';

const retry = { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 };

// A tick is short (a few statements and one command per call); a worker that dies mid-tick is
// noticed after this timeout and the tick retried on another worker.
const { dialTick } = proxyActivities<CampaignRunActivities>({ startToCloseTimeout: '15 seconds', retry });

// The event-driven loop runs the tick as a local activity: its result is one marker in the
// workflow task that asked for it, instead of an activity's scheduled, started and completed events
// and a second workflow task. A retried workflow task runs the tick again with the same tick key,
// which the tick is built for (a retried tick places nothing twice).
const { dialTick: dialTickLocal } = proxyLocalActivities<CampaignRunActivities>({ startToCloseTimeout: '15 seconds', retry });

/** Continue-as-new after this many ticks (or sooner when Temporal suggests it): bounded history. */
export const TICKS_PER_RUN = 500;
/**
 * The event-driven loop continues as new once its history holds this many events (or after
 * `ticksPerRun` ticks when the input sets it): a worker restart replays at most this much per run.
 */
export const HISTORY_EVENTS_PER_RUN = 1000;

/** The patch that made the loop event-driven (docs/dial-loop.md); histories without its marker keep the fixed cadence. */
export const EVENT_DRIVEN_PATCH = 'campaign-run-event-driven-20261127';

export const resumeSignal = defineSignal<[CampaignRunOptions | null]>('resume' satisfies CampaignRunResumeSignal);
export const pauseSignal = defineSignal('pause' satisfies CampaignRunPauseSignal);
export const stopSignal = defineSignal('stop' satisfies CampaignRunStopSignal);
export const wakeSignal = defineSignal('wake' satisfies CampaignRunWakeSignal);
export const statsQuery = defineQuery<CampaignRunStats>('stats' satisfies CampaignRunStatsQuery);
export const runStateQuery = defineQuery<CampaignRunState>('runState' satisfies CampaignRunStateQuery);

/**
 * One campaign run: dialTick ticks (reap, pace, decide, record, originate). The pacing state
 * travels through the tick, which adapts the ratio from the abandonment the CDR reports, so the
 * workflow stays free of arithmetic that would have to replay. pause holds the loop (calls in
 * flight finish on their own), resume releases it, stop (or the campaign leaving running, read
 * every tick) ends the run.
 *
 * Since EVENT_DRIVEN_PATCH the tick says when to tick again: a busy run keeps its tick_ms cadence,
 * an idle one sleeps until the moment the tick computed (a lead, callback or seat due, the calling
 * window opening, the backstop) or a `wake` signal, and a campaign the loop never dials (preview,
 * manual) waits for signals only. It continues as new by history length (HISTORY_EVENTS_PER_RUN).
 * Histories without the marker keep the old loop: a fixed cadence, continue-as-new every
 * TICKS_PER_RUN ticks.
 */
export async function campaignRunWorkflow(input: CampaignRunInput): Promise<CampaignRunResult> {
  const info = workflowInfo();
  // Decided once per run: a run recorded before the patch replays the old loop to its end, and
  // the run it continues as new takes the new one.
  const eventDriven = patched(EVENT_DRIVEN_PATCH);
  const carried = input.carried;
  let options = input.options;
  let tick = carried?.tick ?? 0;
  let paused = carried?.paused ?? false;
  let stopped = false;
  let woken = false;
  let blocked = carried?.blocked ?? 0;
  let counters: RunCounters | null = carried?.lastCounters ?? null;
  let tokens: number | null = null;
  let idle: string | null = null;
  let waiting: NextTick | null = null;
  const runStartedAt = carried?.runStartedAt ?? new Date(info.startTime.getTime()).toISOString();
  let pacing: CampaignPacingState = carried?.pacing ?? { ratio: 1, recent: [], connected: 0, abandoned: 0 };

  setHandler(resumeSignal, (newOptions) => {
    if (newOptions) options = newOptions;
    paused = false;
    woken = true;
  });
  setHandler(pauseSignal, () => {
    paused = true;
  });
  setHandler(stopSignal, () => {
    stopped = true;
  });
  setHandler(wakeSignal, () => {
    woken = true;
  });
  setHandler(statsQuery, () => ({
    dialed: counters?.dialed ?? 0,
    blocked,
    finished: counters?.finished ?? 0,
    reaped: counters?.reaped ?? 0,
    in_flight: counters?.in_flight ?? 0,
    idle,
    pacing: {
      ratio: pacing.ratio,
      abandoned: pacing.abandoned,
      connected: pacing.connected,
      abandonment_rate: pacing.recent.length ? pacing.recent.reduce((a, b) => a + b, 0) / pacing.recent.length : null,
      tokens,
    },
  }));

  setHandler(runStateQuery, () => ({ paused, stopped, tick, runStartedAt, options, waiting }));

  const endOfRun = () =>
    eventDriven
      ? ticksThisRun >= (input.ticksPerRun ?? Infinity) || workflowInfo().historyLength >= HISTORY_EVENTS_PER_RUN
      : ticksThisRun >= (input.ticksPerRun ?? TICKS_PER_RUN);

  let ticksThisRun = 0;
  for (;;) {
    if (stopped) return { ended: 'stopped', ticks: tick };
    if (paused) {
      await condition(() => !paused || stopped);
      continue;
    }
    // A wake that arrives while the tick runs asks for another tick: it may concern what the tick already passed.
    if (eventDriven) woken = false;
    const result: DialTickResult = await (eventDriven ? dialTickLocal : dialTick)({
      tenantId: input.tenantId,
      campaignId: input.campaignId,
      workflowId: info.workflowId,
      tickKey: `${info.runId}:${tick}`,
      options,
      pacing,
      lastCounters: counters,
      runStartedAt,
    });
    tick += 1;
    ticksThisRun += 1;
    blocked += result.blocked;
    tokens = result.tokens;
    idle = result.idle;
    pacing = result.pacing;
    counters = result.run;
    // stop persists completed before it signals: a tick that reads it first ends the run the same way.
    if (result.state === 'completed') return { ended: 'stopped', ticks: tick };
    if (result.state === null || result.state === 'archived') return { ended: result.state ?? 'campaign_gone', ticks: tick };
    if (result.state !== 'running') paused = true;

    if (endOfRun() || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof campaignRunWorkflow>({
        ...input,
        options,
        carried: { runStartedAt, tick, blocked, paused, pacing, lastCounters: counters },
      });
    }
    if (!eventDriven) {
      woken = false;
      await condition(() => stopped || woken || paused, options.tick_ms);
      continue;
    }
    const next = result.next;
    waiting = next;
    if (next.kind === 'signal_only') {
      await condition(() => stopped || woken || paused);
    } else {
      const waitMs = next.kind === 'cadence' ? options.tick_ms : Math.max(options.tick_ms, Date.parse(next.at) - Date.now());
      await condition(() => stopped || woken || paused, waitMs);
    }
    waiting = null;
  }
}
