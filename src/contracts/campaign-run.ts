/**
 * The campaign run workflow's interface, shared by the services that start and signal it, the
 * worker that registers its activity and the workflow itself (which imports only the types).
 *
 * One run per campaign, keyed by tenant and campaign: a second start while a run is open reaches
 * the same workflow. A busy run ticks every `tick_ms`; a run with nothing to do sleeps until
 * something can change that, and whatever changes it (leads imported or requeued, a seat becoming
 * reachable, a callback due, a resume) sends `wake`.
 */

/** The exported name of the workflow function in workflows/index.ts (its Temporal type). */
export const CAMPAIGN_RUN_WORKFLOW_TYPE = 'campaignRunWorkflow';

export function campaignRunWorkflowId(tenantId: string, campaignId: string): string {
  return `campaign-run:${tenantId}:${campaignId}`;
}

/** Releases a paused run; with options (a resume that sent them) the run adopts them from its next tick. */
export const CAMPAIGN_RUN_RESUME_SIGNAL = 'resume';
export const CAMPAIGN_RUN_PAUSE_SIGNAL = 'pause';
export const CAMPAIGN_RUN_STOP_SIGNAL = 'stop';
/**
 * Something the run may act on changed (leads, seats, a callback came due): tick now. Harmless to a
 * busy run (it ticks a little early) and to a campaign with no open run (the signal finds nothing).
 */
export const CAMPAIGN_RUN_WAKE_SIGNAL = 'wake';
export type CampaignRunResumeSignal = typeof CAMPAIGN_RUN_RESUME_SIGNAL;
export type CampaignRunPauseSignal = typeof CAMPAIGN_RUN_PAUSE_SIGNAL;
export type CampaignRunStopSignal = typeof CAMPAIGN_RUN_STOP_SIGNAL;
export type CampaignRunWakeSignal = typeof CAMPAIGN_RUN_WAKE_SIGNAL;

export const CAMPAIGN_RUN_STATS_QUERY = 'stats';
export const CAMPAIGN_RUN_STATE_QUERY = 'runState';
export type CampaignRunStatsQuery = typeof CAMPAIGN_RUN_STATS_QUERY;
export type CampaignRunStateQuery = typeof CAMPAIGN_RUN_STATE_QUERY;

/** The options of one run (the validated start body, src/modules/dialer/runner-options.ts). */
export interface CampaignRunOptions {
  tick_ms: number;
  batch_size: number;
  gateway: string | null;
  agent_domain: string | null;
  call_ttl_ms: number;
  blocked_cooldown_ms: number;
}

/** The predictive pacing controller's state, carried by the workflow from tick to tick. */
export interface CampaignPacingState {
  ratio: number;
  /** 1 = abandoned, 0 = connected to an agent, for the last answered calls. */
  recent: number[];
  connected: number;
  abandoned: number;
}

/** What the run has done since it started, read from the CDR. */
export interface RunCounters {
  dialed: number;
  finished: number;
  reaped: number;
  in_flight: number;
  connected: number;
  abandoned: number;
}

export interface DialTickInput {
  tenantId: string;
  campaignId: string;
  workflowId: string;
  /** Unique per tick of a run and stable across retries of that tick's activity. */
  tickKey: string;
  options: CampaignRunOptions;
  pacing: CampaignPacingState;
  /** The run counters the previous tick returned (null on the first): the pacing input is the change. */
  lastCounters: RunCounters | null;
  /** Counters cover calls placed from this moment (the run's start, kept across continue-as-new). */
  runStartedAt: string;
}

export interface TickResult {
  /** The campaign's state as the tick read it; null when the campaign is gone. */
  state: string | null;
  placed: number;
  blocked: number;
  reaped: number;
  notPlaced: number;
  /** Why nothing more was dialed this tick, when that is the case. */
  idle: string | null;
  /** Dials still allowed this second under max_cps (null = no ceiling). */
  tokens: number | null;
  overDialAllowed: boolean;
  pacing: CampaignPacingState;
  run: RunCounters;
}

/**
 * When the run should tick next, decided by the tick from what it saw:
 * - `cadence`: busy (it dialed, calls are in flight, or a brake that lifts by itself held it): after `tick_ms`;
 * - `idle`: nothing to do until `at` (the earliest lead, callback or seat that becomes due, the
 *   calling window opening, or the backstop), or until a `wake` signal;
 * - `signal_only`: the loop never dials this campaign (preview, manual): only a signal moves the run.
 */
export type NextTick =
  | { kind: 'cadence' }
  | { kind: 'idle'; at: string; reason: string }
  | { kind: 'signal_only'; reason: string };

export interface DialTickResult extends TickResult {
  next: NextTick;
}

export interface CampaignRunActivities {
  /** One tick: reap, pace, decide, record, originate; then when to tick again. Safe to repeat with the same tickKey. */
  dialTick(input: DialTickInput): Promise<DialTickResult>;
}

export interface CampaignRunInput {
  tenantId: string;
  campaignId: string;
  options: CampaignRunOptions;
  /**
   * Ticks before the run continues as new (default: the workflow's bound). A test and operations
   * knob: tests use a small value to see the hand-over happen. Kept across continue-as-new.
   */
  ticksPerRun?: number;
  /** Carried across continue-as-new. */
  carried?: {
    runStartedAt: string;
    tick: number;
    blocked: number;
    paused: boolean;
    pacing: CampaignPacingState;
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

/** For operators (Temporal Web UI, `npm run ops`) and tests: whether the loop is held, sleeping, and how far it got. */
export interface CampaignRunState {
  paused: boolean;
  stopped: boolean;
  tick: number;
  runStartedAt: string;
  options: CampaignRunOptions;
  /** How the run waits for its next tick (null while it ticks, or in a run that predates the event-driven loop). */
  waiting: NextTick | null;
}

export interface CampaignRunResult {
  ended: string;
  ticks: number;
}
