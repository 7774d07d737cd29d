/**
 * Liveness of an event-socket link whose TCP connection may be half-open (a firewall dropped the
 * flow without a FIN or RST, or the switch hangs): the socket stays "connected", writes succeed into
 * the kernel's buffer, and nothing ever comes back.
 *
 * Anything the switch sends counts as a sign of life: events (FreeSWITCH fires HEARTBEAT every
 * `event-heartbeat-interval`, 20 s by default), command replies, api responses. After a third of the
 * timeout without any, the probe asks for one (`api status`); when the whole timeout passes in
 * silence the link is dead. Detection therefore comes exactly `timeoutMs` after the last byte, even
 * when the heartbeat interval is longer than the timeout.
 *
 * One timer, re-armed when it fires and when the answer to a probe arrives: heard() is called for
 * every chunk read and otherwise only stores the time.
 */

/** The time source; the switch simulator's Clock (and its FakeClock) fits it. */
export interface LivenessClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(timer: never): void;
}

export interface LivenessProbeOptions {
  /** Silence after which the link is declared dead. */
  timeoutMs: number;
  /** Asks the switch for an answer (`api status`); called at most once per silence. */
  probe: () => void;
  /** The link has been silent for `silentMs` (>= timeoutMs); the probe has stopped itself. */
  dead: (silentMs: number) => void;
  clock?: LivenessClock;
}

const systemClock: LivenessClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // The probe must never be what keeps a process alive.
    t.unref();
    return t;
  },
  clearTimeout: (timer: NodeJS.Timeout) => clearTimeout(timer),
};

export class LivenessProbe {
  readonly timeoutMs: number;
  /** Silence after which the probe asks the switch for an answer. */
  readonly probeAfterMs: number;
  private readonly clock: LivenessClock;
  private timer: unknown;
  private running = false;
  private lastHeardAt: number;
  /** A probe went out and nothing has arrived since. */
  private awaitingAnswer = false;

  constructor(private readonly o: LivenessProbeOptions) {
    if (!Number.isFinite(o.timeoutMs) || o.timeoutMs < 3) throw new RangeError('liveness timeoutMs must be a finite number of at least 3 ms');
    this.timeoutMs = o.timeoutMs;
    this.probeAfterMs = Math.floor(o.timeoutMs / 3);
    this.clock = o.clock ?? systemClock;
    this.lastHeardAt = this.clock.now();
  }

  /** Starts watching a fresh link (counts as having just heard from it). */
  start(): void {
    this.stop();
    this.running = true;
    this.lastHeardAt = this.clock.now();
    this.awaitingAnswer = false;
    this.arm(this.probeAfterMs);
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer as never);
    this.timer = undefined;
  }

  /** Something arrived from the switch. */
  heard(): void {
    // While a probe awaits its answer the timer points at the deadline; an answer moves the next
    // check back to the probe point of the new silence. Otherwise storing the time is enough.
    this.lastHeardAt = this.clock.now();
    if (!this.awaitingAnswer) return;
    this.awaitingAnswer = false;
    if (this.running && this.timer !== undefined) {
      this.clock.clearTimeout(this.timer as never);
      this.arm(this.probeAfterMs);
    }
  }

  /** Milliseconds since the switch last sent anything (or since the probe was created). */
  silenceMs(): number {
    return this.clock.now() - this.lastHeardAt;
  }

  private arm(ms: number): void {
    this.timer = this.clock.setTimeout(() => this.check(), Math.max(0, ms));
  }

  private check(): void {
    this.timer = undefined;
    if (!this.running) return;
    const now = this.clock.now();
    const silent = now - this.lastHeardAt;
    if (silent >= this.timeoutMs) {
      this.running = false;
      this.o.dead(silent);
      return;
    }
    if (!this.awaitingAnswer && silent >= this.probeAfterMs) {
      this.awaitingAnswer = true;
      this.o.probe();
    }
    const due = this.lastHeardAt + (this.awaitingAnswer ? this.timeoutMs : this.probeAfterMs);
    if (this.running) this.arm(due - now);
  }
}
