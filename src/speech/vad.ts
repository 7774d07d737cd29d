import { levelDbfs } from './audio';

/**
 * Energy-based voice activity and end-of-utterance detection over fixed frames, with an adaptive
 * noise floor. Pure and deterministic: the same audio gives the same events, whatever the chunking.
 */

export interface EndpointerOptions {
  sampleRate: number;
  frameMs?: number;
  /** Silence after speech that ends the utterance. */
  eouSilenceMs?: number;
  /** Voiced audio needed before speech is declared (a click or a breath is shorter). */
  minSpeechMs?: number;
  /** An utterance longer than this is cut (a stuck line, a TV in the room). */
  maxUtteranceMs?: number;
  /** Speech is this far above the noise floor… */
  startMarginDb?: number;
  /** …and at least this loud. */
  minSpeechDbfs?: number;
  /** Once in speech, frames down to this far under the start threshold still count as speech. */
  hysteresisDb?: number;
}

export type EndpointEvent =
  | { type: 'speech_start'; /** First voiced frame's start. */ atMs: number }
  | { type: 'speech_end'; /** Last voiced frame's end. */ atMs: number; /** The frame end at which silence was long enough. */ detectedAtMs: number; cut: boolean };

const FLOOR_DB = -90;

export class Endpointer {
  readonly frameSamples: number;
  private readonly frameMs: number;
  private readonly eouSilenceMs: number;
  private readonly minSpeechMs: number;
  private readonly maxUtteranceMs: number;
  private readonly startMarginDb: number;
  private readonly minSpeechDbfs: number;
  private readonly hysteresisDb: number;
  private carry = new Int16Array(0);
  private framesSeen = 0;
  private noiseDb = -60;
  private speaking = false;
  private voicedMs = 0;
  private candidateStartMs = 0;
  private speechStartMs = 0;
  private lastVoicedEndMs = 0;
  private silenceMs = 0;

  constructor(opts: EndpointerOptions) {
    this.frameMs = opts.frameMs ?? 20;
    this.frameSamples = Math.round((opts.sampleRate * this.frameMs) / 1000);
    this.eouSilenceMs = opts.eouSilenceMs ?? 500;
    this.minSpeechMs = opts.minSpeechMs ?? 100;
    this.maxUtteranceMs = opts.maxUtteranceMs ?? 30_000;
    this.startMarginDb = opts.startMarginDb ?? 12;
    this.minSpeechDbfs = opts.minSpeechDbfs ?? -42;
    this.hysteresisDb = opts.hysteresisDb ?? 6;
  }

  get inSpeech(): boolean {
    return this.speaking;
  }

  /** Stream time at the end of the last whole frame processed. */
  get processedMs(): number {
    return this.framesSeen * this.frameMs;
  }

  /** When the current utterance's speech began (meaningful while inSpeech). */
  get speechStartedAtMs(): number {
    return this.speechStartMs;
  }

  push(samples: Int16Array): EndpointEvent[] {
    const events: EndpointEvent[] = [];
    let buf = samples;
    if (this.carry.length) {
      buf = new Int16Array(this.carry.length + samples.length);
      buf.set(this.carry);
      buf.set(samples, this.carry.length);
    }
    let at = 0;
    for (; at + this.frameSamples <= buf.length; at += this.frameSamples) {
      const event = this.frame(levelDbfs(buf, at, at + this.frameSamples));
      if (event) events.push(event);
    }
    this.carry = buf.slice(at);
    return events;
  }

  /** The end of the stream: an utterance in progress ends at its last voiced frame. */
  finish(): EndpointEvent[] {
    if (!this.speaking) return [];
    this.speaking = false;
    return [{ type: 'speech_end', atMs: this.lastVoicedEndMs, detectedAtMs: this.processedMs, cut: false }];
  }

  private frame(rawLevel: number): EndpointEvent | null {
    const level = Math.max(FLOOR_DB, rawLevel);
    const startMs = this.processedMs;
    this.framesSeen++;
    const endMs = this.processedMs;
    const threshold = Math.max(this.minSpeechDbfs, this.noiseDb + this.startMarginDb);
    if (!this.speaking) {
      if (level >= threshold) {
        if (this.voicedMs === 0) this.candidateStartMs = startMs;
        this.voicedMs += this.frameMs;
        if (this.voicedMs >= this.minSpeechMs) {
          this.speaking = true;
          this.speechStartMs = this.candidateStartMs;
          this.lastVoicedEndMs = endMs;
          this.silenceMs = 0;
          this.voicedMs = 0;
          return { type: 'speech_start', atMs: this.speechStartMs };
        }
      } else {
        this.voicedMs = 0;
        // The floor follows the line's noise slowly, and only from frames that are not speech.
        this.noiseDb += (level - this.noiseDb) * 0.05;
      }
      return null;
    }
    if (level >= threshold - this.hysteresisDb) {
      this.lastVoicedEndMs = endMs;
      this.silenceMs = 0;
    } else {
      this.silenceMs += this.frameMs;
    }
    const cut = endMs - this.speechStartMs >= this.maxUtteranceMs;
    if (this.silenceMs >= this.eouSilenceMs || cut) {
      this.speaking = false;
      return { type: 'speech_end', atMs: this.lastVoicedEndMs, detectedAtMs: endMs, cut };
    }
    return null;
  }
}
