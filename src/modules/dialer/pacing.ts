/**
 * Pacing: how many new lines a campaign dials this tick. Pure, so the run workflow, the
 * simulation (`npm run bench:pacing`) and the tests share one implementation.
 *
 * - progressive: one line per available agent, minus calls already ringing;
 * - predictive: `ratio` lines per available agent, minus calls already ringing; the ratio adapts
 *   between the campaign's min and max to hold the abandonment rate under its threshold, and stays
 *   at 1 (no over-dial) until the tenant's abandon seller name and phone are set;
 * - preview and manual: the loop never dials (agents dial through POST /dial).
 *
 * Planned shifts tune the seat count at the edges of a shift (plannedStaffing): a seat whose
 * shift ends before a line dialed now would be done with it is left out, and (predictive with
 * over-dial only) an agent whose shift starts before such a line would be answered is dialed for.
 */
export type PacingMode = 'predictive' | 'progressive' | 'none';

export function pacingModeOf(campaignType: string): PacingMode {
  if (campaignType === 'predictive') return 'predictive';
  if (campaignType === 'preview' || campaignType === 'manual') return 'none';
  return 'progressive';
}

export interface LinesInput {
  mode: PacingMode;
  availableAgents: number;
  /** Calls originated and not yet answered or ended. */
  ringing: number;
  ratio: number;
  /** False until the abandoned-call identification (seller name and phone) is configured. */
  overDialAllowed: boolean;
  /** Remaining capacity from max_cps and max_concurrent_channels (Infinity when unset). */
  capacity: number;
  /** What the planned shifts change about the seats (none when absent). */
  plan?: PlannedStaffing;
}

/**
 * Seats left after the leaving ones, plus the arriving ones when over-dial is allowed: a line for
 * an agent not yet at a seat is a line no seat may take, the risk only over-dial (with its seller
 * message and its abandonment ceiling) accepts. Arrivals top up a staffed floor; they never open
 * an empty one, where every answer before the agent logs in would be abandoned.
 */
export function linesToDial(input: LinesInput): number {
  if (input.mode === 'none') return 0;
  const overDial = input.mode === 'predictive' && input.overDialAllowed;
  const staying = input.availableAgents - Math.min(Math.max(0, input.plan?.leaving ?? 0), Math.max(0, input.availableAgents));
  if (staying <= 0) return 0;
  const seats = staying + (overDial ? Math.max(0, input.plan?.arriving ?? 0) : 0);
  const ratio = overDial ? input.ratio : 1;
  const wanted = Math.floor(seats * ratio) - input.ringing;
  return Math.max(0, Math.min(wanted, Math.floor(input.capacity)));
}

/** The ring timeout of a consumer leg: no line waits longer than this to be answered. */
export const MAX_LEAD_MS = 45_000;
/** Answers faster than this are a switch's, not a person's: the lead never drops below it. */
export const MIN_LEAD_MS = 5_000;
/** A handle time longer than this is not a forecast to pace by; it also bounds the shifts read. */
export const MAX_HANDLE_MS = 3_600_000;
/** Until this many agent-handled calls are known, the defaults below stand in for the tenant's own. */
export const MIN_HANDLE_SAMPLES = 20;
export const DEFAULT_ANSWER_MS = 15_000;
export const DEFAULT_TALK_MS = 180_000;

/** The tenant's recent agent-handled outbound calls, averaged (means null when there are none). */
export interface HandleSample {
  calls: number;
  meanAnswerMs: number | null;
  meanTalkMs: number | null;
  /** The tenant's wrap-up cap: the after-call work that follows every talk. */
  wrapUpSeconds: number;
}

export interface StaffingHorizons {
  /** How long a line dialed now takes to be answered: a seat must be there by then. */
  leadMs: number;
  /** How long the seat is then held: talk plus wrap-up. */
  handleMs: number;
}

export function staffingHorizons(sample: HandleSample): StaffingHorizons {
  const measured = sample.calls >= MIN_HANDLE_SAMPLES;
  const answer = measured && sample.meanAnswerMs !== null ? sample.meanAnswerMs : DEFAULT_ANSWER_MS;
  const talk = measured && sample.meanTalkMs !== null ? sample.meanTalkMs : DEFAULT_TALK_MS;
  return {
    leadMs: Math.round(Math.min(MAX_LEAD_MS, Math.max(MIN_LEAD_MS, answer))),
    handleMs: Math.round(Math.min(MAX_HANDLE_MS, Math.max(0, talk) + Math.max(0, sample.wrapUpSeconds) * 1000)),
  };
}

/** One scheduled shift of an agent, with where the agent stands now. */
export interface ShiftSeat {
  agentId: string;
  startsAt: number;
  endsAt: number;
  /** A seat pacing counts now (available and reachable). */
  dialable: boolean;
  /** Holds, rings for or wraps up a call: busy now, whatever the plan says. */
  engaged: boolean;
}

export interface PlannedStaffing {
  /** Dialable seats whose planned time ends before a line dialed now would be done with them. */
  leaving: number;
  /** Agents not at a seat yet whose shift starts before a line dialed now would be answered. */
  arriving: number;
}

/** An agent's scheduled shifts as continuous spans: back-to-back or overlapping shifts are one stretch of work. */
function spansOf(shifts: Array<{ startsAt: number; endsAt: number }>): Array<{ startsAt: number; endsAt: number }> {
  const sorted = [...shifts].sort((a, b) => a.startsAt - b.startsAt);
  const spans: Array<{ startsAt: number; endsAt: number }> = [];
  for (const s of sorted) {
    const last = spans[spans.length - 1];
    if (last && s.startsAt <= last.endsAt) last.endsAt = Math.max(last.endsAt, s.endsAt);
    else spans.push({ startsAt: s.startsAt, endsAt: s.endsAt });
  }
  return spans;
}

/** A stretch of work on now that ends before a line dialed now would be done with its seat. */
function endsWithinHorizon(current: { endsAt: number } | undefined, now: number, horizons: StaffingHorizons): boolean {
  return current !== undefined && current.endsAt < now + horizons.leadMs + horizons.handleMs;
}

/**
 * The agents on shift at `now` whose stretch of work ends within the horizon, present or not:
 * the seats plannedStaffing counts as leaving when dialable, which a call's agent is chosen
 * after the others (seat-claim.repository.ts).
 */
export function leavingAgentIds(now: number, horizons: StaffingHorizons, shifts: ShiftSeat[]): string[] {
  const byAgent = new Map<string, ShiftSeat[]>();
  for (const s of shifts) byAgent.set(s.agentId, [...(byAgent.get(s.agentId) ?? []), s]);
  const ids: string[] = [];
  for (const [agentId, rows] of byAgent) {
    const current = spansOf(rows).find((s) => s.startsAt <= now && now < s.endsAt);
    if (endsWithinHorizon(current, now, horizons)) ids.push(agentId);
  }
  return ids;
}

/**
 * Reads the plan at `now`. A line dialed now is answered about `leadMs` later and holds its seat
 * for `handleMs` after that:
 * - leaving: a dialable seat on shift now whose stretch of work ends before now + lead + handle;
 * - arriving: an agent neither dialable nor engaged, off shift now, whose next shift starts
 *   after now and no later than now + lead.
 * The plan only adjusts the edges: an agent present without a shift counts as present, one on
 * shift but absent counts as absent.
 */
export function plannedStaffing(now: number, horizons: StaffingHorizons, shifts: ShiftSeat[]): PlannedStaffing {
  const byAgent = new Map<string, ShiftSeat[]>();
  for (const s of shifts) byAgent.set(s.agentId, [...(byAgent.get(s.agentId) ?? []), s]);
  let leaving = 0;
  let arriving = 0;
  for (const rows of byAgent.values()) {
    const { dialable, engaged } = rows[0]!;
    const spans = spansOf(rows);
    const current = spans.find((s) => s.startsAt <= now && now < s.endsAt);
    if (dialable) {
      if (endsWithinHorizon(current, now, horizons)) leaving += 1;
    } else if (!engaged && !current && spans.some((s) => s.startsAt > now && s.startsAt <= now + horizons.leadMs)) {
      arriving += 1;
    }
  }
  return { leaving, arriving };
}

export interface ControllerOptions {
  minRatio: number;
  maxRatio: number;
  /** Abandonment threshold as a fraction (0.03 = 3 %). */
  threshold: number;
  initialRatio?: number;
  /** Outcomes remembered for the rate (a rolling window of answered calls). */
  window?: number;
}

export interface PacingState {
  ratio: number;
  /** 1 = abandoned, 0 = connected to an agent, for the last `window` human-answered calls. */
  recent: number[];
  connected: number;
  abandoned: number;
}

/**
 * Adapts the predictive ratio from the abandonment rate over the last answered calls: well under
 * the threshold it dials more, near it it backs off harder than it advanced (the threshold is a
 * ceiling, not a target).
 */
export class AbandonmentController {
  private readonly window: number;

  constructor(
    private readonly options: ControllerOptions,
    private state: PacingState = { ratio: options.initialRatio ?? options.minRatio, recent: [], connected: 0, abandoned: 0 },
  ) {
    this.window = options.window ?? 200;
  }

  get snapshot(): PacingState {
    return { ...this.state, recent: [...this.state.recent] };
  }

  get ratio(): number {
    return this.state.ratio;
  }

  abandonmentRate(): number | null {
    const n = this.state.recent.length;
    return n === 0 ? null : this.state.recent.reduce((a, b) => a + b, 0) / n;
  }

  /** Records human-answered calls: connected to an agent in time, or abandoned. */
  record(connected: number, abandoned: number): void {
    for (let i = 0; i < connected; i += 1) this.state.recent.push(0);
    for (let i = 0; i < abandoned; i += 1) this.state.recent.push(1);
    if (this.state.recent.length > this.window) this.state.recent.splice(0, this.state.recent.length - this.window);
    this.state.connected += connected;
    this.state.abandoned += abandoned;
  }

  /** Called once per tick after recording; returns the ratio to use next. */
  adjust(): number {
    const { minRatio, maxRatio, threshold } = this.options;
    const rate = this.abandonmentRate();
    let ratio = this.state.ratio;
    if (rate !== null && this.state.recent.length >= 20) {
      if (rate > threshold * 0.8) ratio *= 0.85;
      else if (rate < threshold * 0.4) ratio *= 1.02;
    } else {
      ratio *= 1.02;
    }
    this.state.ratio = Math.min(maxRatio, Math.max(minRatio, ratio));
    return this.state.ratio;
  }
}

/**
 * The next moment after `now` at which the plan alone (no event) can give an idle run more lines:
 * an arrival entering the lead window (a shift's start minus the lead), or a stretch of work
 * ending (its seat, if still there, counts again). Null when no such moment is in `shifts`.
 */
export function nextPlannedGainAt(now: number, horizons: StaffingHorizons, shifts: ShiftSeat[]): number | null {
  const byAgent = new Map<string, ShiftSeat[]>();
  for (const s of shifts) byAgent.set(s.agentId, [...(byAgent.get(s.agentId) ?? []), s]);
  let next: number | null = null;
  for (const rows of byAgent.values()) {
    for (const span of spansOf(rows)) {
      for (const at of [span.startsAt - horizons.leadMs, span.endsAt]) {
        if (at > now && (next === null || at < next)) next = at;
      }
    }
  }
  return next;
}
