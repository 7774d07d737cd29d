import { EventEmitter } from 'node:events';
import { concatPcm, type Pcm } from './audio';
import type { Recognition, RecognitionStreamEvents, SpeechLanguage, Utterance } from './types';
import { Endpointer, type EndpointerOptions } from './vad';

/** What a recognizer offers a stream: incremental sessions (decoded while the consumer speaks), or only whole utterances. */
export interface StreamBackend {
  recognize(pcm: Pcm, language: SpeechLanguage): Promise<Recognition>;
  startSession?(sampleRate: number, language: SpeechLanguage, onPartial: (text: string) => void): BackendSession;
}

export interface BackendSession {
  feed(samples: Int16Array): void;
  /** The final recognition; word offsets are from the first sample fed. */
  end(): Promise<Recognition>;
  cancel(): void;
}

export interface RecognitionStreamOptions extends Omit<EndpointerOptions, 'sampleRate'> {
  sampleRate: number;
  language: SpeechLanguage;
  bargeInMs?: number;
  /** Audio kept from before the detected start, so a soft first syllable reaches the recognizer. */
  preRollMs?: number;
}

interface Chunk {
  atMs: number;
  samples: Int16Array;
}

/**
 * One live stream (the consumer's leg of a call): frames in, utterances out. The endpointer cuts the
 * stream into utterances; each goes to the recognizer while it is spoken (or whole at its end for a
 * recognizer without sessions), and its final result is one `utterance` event, in stream order.
 * While the agent speaks (setAgentSpeaking), speech lasting `bargeInMs` emits `barge_in` once per
 * utterance.
 */
export class RecognitionStream extends EventEmitter<RecognitionStreamEvents> {
  private readonly endpointer: Endpointer;
  private readonly sampleRate: number;
  private readonly language: SpeechLanguage;
  private readonly bargeInMs: number;
  private readonly preRollMs: number;
  /** Recent audio while not in speech (pre-roll and the detector's start delay). */
  private recent: Chunk[] = [];
  private receivedMs = 0;
  private session: BackendSession | null = null;
  private buffered: Int16Array[] = [];
  private utteranceAudioStartMs = 0;
  private utteranceSpeechStartMs = 0;
  private agentSpeaking = false;
  private bargedIn = false;
  private finals: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly backend: StreamBackend,
    opts: RecognitionStreamOptions,
  ) {
    super();
    this.sampleRate = opts.sampleRate;
    this.language = opts.language;
    this.bargeInMs = opts.bargeInMs ?? 200;
    this.preRollMs = opts.preRollMs ?? 300;
    this.endpointer = new Endpointer(opts);
  }

  get inSpeech(): boolean {
    return this.endpointer.inSpeech;
  }

  /** While true, speech of `bargeInMs` emits `barge_in`. */
  setAgentSpeaking(speaking: boolean): void {
    this.agentSpeaking = speaking;
  }

  /** Frames of the stream's rate, any length, in order. */
  feed(samples: Int16Array): void {
    if (this.closed) throw new Error('recognition stream closed');
    const chunk = { atMs: this.receivedMs, samples };
    this.receivedMs += (samples.length / this.sampleRate) * 1000;
    const events = this.endpointer.push(samples);
    if (this.session || this.buffered.length || this.endpointer.inSpeech || events.length) {
      // In speech (or crossing a boundary in this chunk): the chunk belongs to the utterance.
      for (const event of events) {
        if (event.type === 'speech_start') this.beginUtterance(event.atMs, chunk);
        else this.endUtterance(event.atMs, event.detectedAtMs);
      }
      if (this.endpointer.inSpeech && events.every((e) => e.type !== 'speech_start')) this.append(chunk.samples);
      if (!this.endpointer.inSpeech) this.remember(chunk);
    } else {
      this.remember(chunk);
    }
    if (this.endpointer.inSpeech && this.agentSpeaking && !this.bargedIn && this.endpointer.processedMs - this.utteranceSpeechStartMs >= this.bargeInMs) {
      this.bargedIn = true;
      this.emit('barge_in', { atMs: this.endpointer.processedMs });
    }
  }

  /** Ends an utterance in progress (its final is still emitted) and waits for every final. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      for (const event of this.endpointer.finish()) if (event.type === 'speech_end') this.endUtterance(event.atMs, event.detectedAtMs);
    }
    await this.finals;
  }

  /** Drops an utterance in progress without a result (the call ended). */
  cancel(): void {
    this.closed = true;
    this.session?.cancel();
    this.session = null;
    this.buffered = [];
  }

  private remember(chunk: Chunk): void {
    this.recent.push(chunk);
    const keepFrom = this.receivedMs - this.preRollMs - 2_000;
    while (this.recent.length > 1 && this.recent[0]!.atMs + (this.recent[0]!.samples.length / this.sampleRate) * 1000 < keepFrom) this.recent.shift();
  }

  private beginUtterance(speechStartMs: number, current: Chunk): void {
    const from = Math.max(0, speechStartMs - this.preRollMs);
    const chunks = [...this.recent, current].filter((c) => c.atMs + (c.samples.length / this.sampleRate) * 1000 > from);
    this.recent = [];
    this.utteranceAudioStartMs = chunks[0]?.atMs ?? current.atMs;
    this.utteranceSpeechStartMs = speechStartMs;
    this.bargedIn = false;
    this.emit('speech_start', { atMs: speechStartMs });
    this.session = this.backend.startSession?.(this.sampleRate, this.language, (text) => this.emit('partial', { text })) ?? null;
    this.buffered = [];
    for (const c of chunks) this.append(c.samples);
  }

  private append(samples: Int16Array): void {
    if (this.session) this.session.feed(samples);
    else this.buffered.push(samples);
  }

  private endUtterance(speechEndMs: number, detectedAtMs: number): void {
    const offset = this.utteranceAudioStartMs;
    const speechStartMs = this.utteranceSpeechStartMs;
    const session = this.session;
    const audio = concatPcm(this.buffered);
    this.session = null;
    this.buffered = [];
    const result = session ? session.end() : this.backend.recognize({ sampleRate: this.sampleRate, samples: audio }, this.language);
    const previous = this.finals;
    this.finals = (async () => {
      let recognition: Recognition;
      try {
        recognition = await result;
      } catch (err) {
        await previous;
        this.emit('error', err as Error);
        return;
      }
      await previous;
      const utterance: Utterance = {
        text: recognition.text,
        confidence: recognition.confidence,
        words: recognition.words.map((w) => ({ ...w, startMs: w.startMs + offset, endMs: w.endMs + offset })),
        startMs: speechStartMs,
        endMs: speechEndMs,
        detectedAtMs,
      };
      this.emit('utterance', utterance);
    })();
  }
}
