import { DateTime } from 'luxon';
import type { NextTick, TickResult } from '../../contracts/campaign-run';
import { insideWindow, isValidZone, parseHhmm } from '../compliance/compliance.decide';
import { FEDERAL } from '../compliance/compliance.rules';

/**
 * How long an idle run sleeps at most without any event. Every change that can give an idle run
 * work signals it (docs/dial-loop.md, "Event-driven"); the backstop only bounds what a lost signal
 * (Temporal unreachable at that moment, a worker that died between commit and signal) can cost.
 */
export const IDLE_BACKSTOP_MS = 10 * 60 * 1000;
/**
 * A run held by something no event announces (a disabled trunk, a parked caller-id pool, billing,
 * an AI budget) looks again this often: a fix through the API then takes effect within a minute.
 */
export const HELD_RECHECK_MS = 60 * 1000;

/** Brakes that lift by themselves within moments (the second's dial budget, channels, the switch link): keep the cadence. */
const TRANSIENT = new Set(['capacity_full', 'switch_unavailable', 'ai_concurrency_full', 'batch_done', 'tick_budget']);
/** The loop never dials these campaigns: human-initiated dials drive them (POST /dial). */
const SIGNAL_ONLY = new Set(['human_initiated_only', 'type_not_dialed_by_loop']);
/** Nothing to do until a lead, a callback or a seat becomes due; each of those either has a due time or signals the run. */
const EVENT_DRIVEN = new Set(['no_dialable_leads', 'no_agent_capacity']);

export interface WakeFacts {
  tick: Pick<TickResult, 'state' | 'placed' | 'blocked' | 'notPlaced' | 'idle'> & {
    inFlight: number;
    /**
     * Calls that connected or were abandoned while the tick ran, after it fed the controller: the
     * next tick feeds them (and the run's stats show them) only if it comes at the cadence.
     */
    unpaced?: number;
  };
  /** The earliest future moments something becomes due (a lead, a callback, a seat reservation's end); nulls ignored. */
  due: Array<Date | null>;
  now: Date;
  tickMs: number;
  backstopMs?: number;
}

/**
 * When the run ticks next (pure). Busy (it dialed or refused something, calls are in flight or
 * ended unpaced, or a transient brake held it): the cadence. Idle for want of leads or seats: the
 * earliest due moment, bounded by the backstop and never sooner than the cadence. Held by
 * configuration: the recheck.
 */
export function nextTick(f: WakeFacts): NextTick {
  const { tick } = f;
  if (tick.state !== 'running') return { kind: 'cadence' };
  if (tick.placed > 0 || tick.blocked > 0 || tick.notPlaced > 0 || tick.inFlight > 0 || (tick.unpaced ?? 0) > 0 || tick.idle === null) {
    return { kind: 'cadence' };
  }
  if (SIGNAL_ONLY.has(tick.idle)) return { kind: 'signal_only', reason: tick.idle };
  if (TRANSIENT.has(tick.idle)) return { kind: 'cadence' };
  const backstop = f.now.getTime() + (f.backstopMs ?? IDLE_BACKSTOP_MS);
  const soonest = f.now.getTime() + f.tickMs;
  let at: number;
  if (EVENT_DRIVEN.has(tick.idle)) {
    at = Math.min(backstop, ...f.due.flatMap((d) => (d === null ? [] : [d.getTime()])));
  } else {
    at = Math.min(backstop, f.now.getTime() + HELD_RECHECK_MS);
  }
  return { kind: 'idle', at: new Date(Math.max(soonest, at)).toISOString(), reason: tick.idle };
}

export interface CallingWindow {
  /** HH:MM[:SS] */
  start: string | null;
  end: string | null;
  defaultTimezone: string | null;
  destinationLocal: boolean;
}

/** Looks this far ahead for a window opening; a window that never opens in two days is left to the cooldown. */
const HORIZON_HOURS = 48;

/**
 * The earliest moment after `now` at which quiet hours let a call through in every zone the
 * engine judged the number in (08:00-21:00 local, and the campaign's own window when it has one),
 * or null when no such moment comes within two days (or a zone is unknown). A scheduling hint:
 * a lead refused for quiet hours rests until then instead of its whole cooldown, and the engine
 * decides again when it is dialed.
 */
export function windowOpensAt(now: Date, zones: string[], window: CallingWindow | null): Date | null {
  if (zones.length === 0 || !zones.every(isValidZone)) return null;
  const federal = FEDERAL.callingHours;
  const rules: Array<{ zone: string; start: number; end: number }> = zones.map((zone) => ({ zone, start: federal.startMinute, end: federal.endMinute }));
  if (window?.start && window.end) {
    const windowZones = window.destinationLocal ? zones : window.defaultTimezone ? [window.defaultTimezone] : [];
    if (windowZones.length === 0 || !windowZones.every(isValidZone)) return null;
    for (const zone of windowZones) rules.push({ zone, start: parseHhmm(window.start), end: parseHhmm(window.end) });
  }
  const openAt = (at: Date) =>
    rules.every((r) => {
      const local = DateTime.fromJSDate(at, { zone: r.zone });
      return insideWindow(local.hour * 60 + local.minute + local.second / 60, r.start, r.end);
    });
  // Every opening is some rule's start in its zone: try each start over the horizon, earliest first.
  const candidates: number[] = [];
  for (const r of rules) {
    const day0 = DateTime.fromJSDate(now, { zone: r.zone }).startOf('day');
    const seconds = Math.round(r.start * 60);
    for (let d = 0; d <= HORIZON_HOURS / 24; d += 1) {
      // Set on the local clock, so a day with a DST change still opens at the wall-clock start.
      const t = day0
        .plus({ days: d })
        .set({ hour: Math.floor(seconds / 3600), minute: Math.floor(seconds / 60) % 60, second: seconds % 60 })
        .toJSDate()
        .getTime();
      if (t > now.getTime()) candidates.push(t);
    }
  }
  const found = candidates.sort((a, b) => a - b).find((t) => openAt(new Date(t)));
  return found === undefined ? null : new Date(found);
}
