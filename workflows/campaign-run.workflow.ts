import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DialerActivities } from '../activities/dialer.activities';
import type { RunCounters, TickResult } from '../src/modules/dialer/dial-tick.service';
import type { RunnerOptions } from '../src/modules/dialer/runner-options';
import type { PacingState } from '../src/modules/dialer/pacing';

// A tick is short (a few statements and one command per call); a worker that dies mid-tick is
// noticed after this timeout and the tick retried on another worker.
const { dialTick } = proxyActivities<DialerActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/** Continue-as-new after this many ticks (or sooner when Temporal suggests it): bounded history. */
export const TICKS_PER_RUN = 500;

export interface CampaignRunInput {
  tenantId: string;
  campaignId: string;
  options: RunnerOptions;
  /**
   * Ticks before the run continues as new (default TICKS_PER_RUN). A test and operations knob:
   * tests use a small value to see the hand-over happen; an operator may lower it for a campaign
   * whose ticks carry large payloads (the history grows per tick). Kept across continue-as-new.
   */
  ticksPerRun?: number;
  /** Carried across continue-as-new. */
  carried?: {
    runStartedAt: string;
    tick: number;
    blocked: number;
    paused: boolean;
    pacing: PacingState;
    lastCounters: RunCounters | null;
  };
}

export interface CampaignRunStats {
  dialed: number;
  blocked: number;
  finished: number;
  reaped: number;
  in_flight: number;
  /** Why the last tick placed nothing more (e.g. ai_paused, ai_budget_exhausted), null when it was not held back. */
  idle: string | null;
  pacing: { ratio: number; abandoned: number; connected: number; abandonment_rate: number | null; tokens: number | null };
}

/** Releases a paused run; with options (a resume that sent them) the run adopts them from its next tick. */
export const resumeSignal = defineSignal<[RunnerOptions | null]>('resume');
export const pauseSignal = defineSignal('pause');
export const stopSignal = defineSignal('stop');
/** Something became due (a callback timer): tick now instead of at the end of the pause. */
export const wakeSignal = defineSignal('wake');
export const statsQuery = defineQuery<CampaignRunStats>('stats');
/** For operators (Temporal Web UI, tctl): whether the loop is held and how far it got. */
export const runStateQuery = defineQuery<{ paused: boolean; stopped: boolean; tick: number; runStartedAt: string; options: RunnerOptions }>('runState');

/**
 * One campaign run: every tick_ms one dialTick activity (reap, pace, decide, record, originate).
 * The pacing state travels through the activity, which adapts the ratio from the abandonment the
 * CDR reports, so the workflow stays free of arithmetic that would have to replay. pause holds the loop
 * (calls in flight finish on their own), resume releases it, stop (or the campaign leaving
 * running, read every tick) ends the run. Continues as new every TICKS_PER_RUN ticks.
 */
export async function campaignRunWorkflow(input: CampaignRunInput): Promise<{ ended: string; ticks: number }> {
  const info = workflowInfo();
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
  const runStartedAt = carried?.runStartedAt ?? new Date(info.startTime.getTime()).toISOString();
  let pacing: PacingState = carried?.pacing ?? { ratio: 1, recent: [], connected: 0, abandoned: 0 };

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

  setHandler(runStateQuery, () => ({ paused, stopped, tick, runStartedAt, options }));

  let ticksThisRun = 0;
  for (;;) {
    if (stopped) return { ended: 'stopped', ticks: tick };
    if (paused) {
      await condition(() => !paused || stopped);
      continue;
    }
    const result: TickResult = await dialTick({
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

    if (ticksThisRun >= (input.ticksPerRun ?? TICKS_PER_RUN) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof campaignRunWorkflow>({
        ...input,
        options,
        carried: { runStartedAt, tick, blocked, paused, pacing, lastCounters: counters },
      });
    }
    woken = false;
    await condition(() => stopped || woken || paused, options.tick_ms);
  }
}
