/**
 * Pacing: how many new lines a campaign dials this tick. Pure, so the run workflow, the
 * simulation (`npm run bench:pacing`) and the tests share one implementation.
 *
 * - progressive: one line per available agent, minus calls already ringing;
 * - predictive: `ratio` lines per available agent, minus calls already ringing; the ratio adapts
 *   between the campaign's min and max to hold the abandonment rate under its threshold, and stays
 *   at 1 (no over-dial) until the tenant's abandon seller name and phone are set;
 * - preview and manual: the loop never dials (agents dial through POST /dial).
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
}

export function linesToDial(input: LinesInput): number {
  if (input.mode === 'none' || input.availableAgents <= 0) return 0;
  const ratio = input.mode === 'predictive' && input.overDialAllowed ? input.ratio : 1;
  const wanted = Math.floor(input.availableAgents * ratio) - input.ringing;
  return Math.max(0, Math.min(wanted, Math.floor(input.capacity)));
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
