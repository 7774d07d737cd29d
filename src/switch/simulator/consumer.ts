import { resample } from '../../speech/audio';
import type { Clock, ClockTimer } from './clock';
import { factorAsked, RIGHT_ANSWERS, WRONG_ANSWERS, type ConsumerScript, type ScriptStep } from './consumer-scripts';

/**
 * One simulated consumer (docs/simulated-consumer.md): it listens to what the switch plays to its
 * channel (speak/playback start and end) and answers with the next line of its script, as audio
 * that the channel's audio forks stream to the product. Its audio is a function of clock time, so
 * every fork reads the same voice at its own rate.
 */

/** What the consumer said, when it began, for how long, and whether it talked over the switch. */
export interface ConsumerLine {
  text: string;
  at: string;
  durationMs: number;
  bargeIn: boolean;
}

export interface ConsumerHost {
  clock: Clock;
  /** Text to 16-bit PCM at `rate` (the product's SpeechSynthesizer). */
  synthesize(text: string, rate: number): Promise<Int16Array>;
  /** Whether a speak, playback or sleep is running on the channel now. */
  mediaRunning(uuid: string): boolean;
  /** The far end hangs up (recv_bye). */
  hangup(uuid: string): void;
  /** SIM_TALK_MS: how long the consumer stays once bridged to an agent. */
  talkMs: number;
  /** Pause between the end of the switch's audio and the consumer's answer. */
  replyDelayMs: number;
  /** How long the consumer waits for the switch to say something before giving up, mid-script. */
  patienceMs: number;
  /** Every line, as it begins. */
  onLine(uuid: string, line: ConsumerLine): void;
}

interface Utterance {
  startMs: number;
  samples: Int16Array;
  byRate: Map<number, Int16Array>;
}

/**
 * Speech-shaped noise: band-limited noise under a syllable-rate envelope, deterministic. Muffled and
 * quiet enough that the offline recognizer never makes it out: over 924 start offsets of each of the
 * script's three mumbles its confidence stayed under 0.19 (AI_ASR_MIN_CONFIDENCE is 0.3), where a
 * brighter, louder mumble reached 0.3-0.44 at about one offset in fifty; the endpointer still takes
 * each for one utterance.
 */
export function mumble(ms: number, rate: number, seed = 0x1f2e3d4c): Int16Array {
  const n = Math.round((rate * ms) / 1000);
  const out = new Int16Array(n);
  let state = seed >>> 0 || 1;
  let low = 0;
  for (let i = 0; i < n; i++) {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    const white = state / 4294967296 - 0.5;
    low += (white - low) * 0.05;
    const t = i / rate;
    const envelope = Math.max(0, Math.sin(Math.PI * 4 * t)) * Math.min(1, t * 20, (ms / 1000 - t) * 20);
    out[i] = Math.round(low * envelope * 30_000);
  }
  return out;
}

export class SimulatedConsumer {
  readonly said: ConsumerLine[] = [];
  private readonly utterances: Utterance[] = [];
  private readonly timers = new Set<ClockTimer>();
  private index = 0;
  /** What the switch played since the consumer's last line (speak texts; '' for a playback). */
  private heard: string[] = [];
  private answeredThisTurn = false;
  private speakingUntil = 0;
  private replyTimer: ClockTimer | undefined;
  private idleTimer: ClockTimer | undefined;
  private bargeArmed = false;
  private stopped = false;
  private handedOff = false;

  constructor(
    readonly uuid: string,
    readonly script: ConsumerScript,
    /** The rate the voice is synthesized at (the first fork's); forks at other rates get it resampled. */
    private readonly rate: number,
    private readonly host: ConsumerHost,
  ) {
    for (const step of script.steps) {
      if ('say' in step) void host.synthesize(step.say, rate).catch(() => undefined);
    }
  }

  /** The consumer's audio from `fromMs` (clock time), `count` samples at `rate`; silence where it says nothing. */
  render(rate: number, fromMs: number, count: number): Int16Array {
    const out = new Int16Array(count);
    for (const u of this.utterances) {
      let pcm = u.byRate.get(rate);
      if (!pcm) {
        pcm = resample({ sampleRate: this.rate, samples: u.samples }, rate).samples;
        u.byRate.set(rate, pcm);
      }
      const offset = Math.round(((fromMs - u.startMs) * rate) / 1000);
      if (offset >= pcm.length || offset + count <= 0) continue;
      for (let i = Math.max(0, -offset); i < count && offset + i < pcm.length; i++) out[i] = pcm[offset + i]!;
    }
    return out;
  }

  /** The switch began playing to the channel (a speak's text, or null for a file). */
  mediaStarted(text: string | null): void {
    if (this.stopped || this.handedOff) return;
    this.clear('reply');
    this.clear('idle');
    this.heard.push(text ?? '');
    this.answeredThisTurn = false;
    // Only the step due now can barge in; nothing is dropped on a turn's first part.
    const step = this.script.steps[this.index];
    if (!step?.barge || this.bargeArmed) return;
    const { afterMs, when } = step.barge;
    if (text !== null && when && !when.test(text)) return;
    this.bargeArmed = true;
    this.later(afterMs, () => {
      if (this.host.mediaRunning(this.uuid) && !this.speaking()) void this.sayNext(true);
    });
  }

  /** Something the switch played ended (completed or broken). */
  mediaEnded(): void {
    if (this.stopped || this.handedOff || this.host.mediaRunning(this.uuid)) return;
    this.clear('reply');
    this.replyTimer = this.later(this.host.replyDelayMs, () => {
      this.replyTimer = undefined;
      if (this.answeredThisTurn || this.speaking()) return;
      if (this.peek()) void this.sayNext(false);
      else this.armIdle();
    });
    this.armIdle();
  }

  /** Bridged to an agent: the script is over; the consumer talks with the agent for talkMs. */
  bridged(): void {
    if (this.stopped || this.handedOff) return;
    this.handedOff = true;
    this.clear('reply');
    this.clear('idle');
    this.later(this.host.talkMs, () => this.host.hangup(this.uuid));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) this.host.clock.clearTimeout(t);
    this.timers.clear();
  }

  private speaking(): boolean {
    return this.host.clock.now() < this.speakingUntil;
  }

  /** The next step to say now: steps whose `when` does not match what was just heard are dropped. */
  private peek(): ScriptStep | undefined {
    const heard = this.heard.join(' ');
    while (this.index < this.script.steps.length) {
      const step = this.script.steps[this.index]!;
      if (!step.when || step.when.test(heard)) return step;
      this.index++;
    }
    return undefined;
  }

  private async sayNext(bargeIn: boolean): Promise<void> {
    const step = this.peek();
    if (!step) return;
    this.index++;
    this.answeredThisTurn = true;
    this.bargeArmed = false;
    const heard = this.heard.join(' ');
    this.heard = [];
    this.clear('idle');
    let text: string;
    let samples: Int16Array;
    if ('mumble' in step) {
      text = '(mumbling)';
      samples = mumble(step.mumble, this.rate, 0x1f2e3d4c + this.index);
    } else {
      const factor = 'answer' in step ? factorAsked(heard) : null;
      text = 'say' in step ? step.say : step.answer === 'right' ? RIGHT_ANSWERS[factor!].text : WRONG_ANSWERS[factor!];
      // Marks the time taken so a line that is still being synthesized cannot be said twice.
      this.speakingUntil = Number.MAX_SAFE_INTEGER;
      try {
        samples = await this.host.synthesize(text, this.rate);
      } catch {
        this.speakingUntil = 0;
        return;
      }
    }
    if (this.stopped) return;
    const now = this.host.clock.now();
    const durationMs = Math.round((samples.length / this.rate) * 1000);
    this.utterances.push({ startMs: now, samples, byRate: new Map([[this.rate, samples]]) });
    this.speakingUntil = now + durationMs;
    const line: ConsumerLine = { text, at: new Date(now).toISOString(), durationMs, bargeIn };
    this.said.push(line);
    this.host.onLine(this.uuid, line);
    this.later(durationMs, () => this.armIdle());
  }

  /** The line is quiet: hang up after a while (sooner once the script is done) unless something happens. */
  private armIdle(): void {
    if (this.stopped || this.handedOff || this.speaking() || this.host.mediaRunning(this.uuid)) return;
    this.clear('idle');
    const done = this.peek() === undefined;
    this.idleTimer = this.later(done ? this.script.hangupAfterMs : this.host.patienceMs, () => {
      this.idleTimer = undefined;
      if (!this.speaking() && !this.host.mediaRunning(this.uuid)) this.host.hangup(this.uuid);
    });
  }

  private later(ms: number, fn: () => void): ClockTimer {
    const timer = this.host.clock.setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private clear(which: 'reply' | 'idle'): void {
    const timer = which === 'reply' ? this.replyTimer : this.idleTimer;
    if (!timer) return;
    this.host.clock.clearTimeout(timer);
    this.timers.delete(timer);
    if (which === 'reply') this.replyTimer = undefined;
    else this.idleTimer = undefined;
  }
}
