import { addNoiseFloor, pcmFromBuffer, pcmToBuffer, resample, StreamResampler, type Pcm } from './audio';
import { SpeechEngine, SpeechEngineError } from './engine-process';
import { RecognitionStream, type BackendSession, type StreamBackend } from './stream';
import type { Recognition, RecognizeOptions, SpeechLanguage, SpeechRecognizer, SpeechSynthesizer, Synthesis, SynthesizeOptions } from './types';

/** The rate PocketSphinx's en-us model was trained at: every input is brought to it. */
export const ASR_RATE_HZ = 16_000;
/**
 * The noise floor added before recognition (RMS in sample units, about -38 dBFS, 18 dB under
 * eSpeak's speech): see addNoiseFloor.
 */
export const ASR_NOISE_FLOOR_RMS = 400;
/** Partial transcripts are asked for every this many milliseconds of audio. */
const PARTIAL_EVERY_MS = 500;

interface EngineRecognition {
  text: string;
  confidence: number;
  words: { word: string; start_ms: number; end_ms: number; confidence: number }[];
}

function toRecognition(header: Record<string, unknown>): Recognition {
  const r = header as unknown as EngineRecognition;
  return {
    text: r.text,
    confidence: r.confidence,
    words: r.words.map((w) => ({ word: w.word, startMs: w.start_ms, endMs: w.end_ms, confidence: w.confidence })),
  };
}

function englishOnly(language: SpeechLanguage | undefined): void {
  // PocketSphinx's wheel carries only a US English model.
  if (language && language !== 'en') throw new SpeechEngineError(`the offline recognizer has no ${language} model (set SPEECH_PROVIDER to a hosted provider)`);
}

export interface OfflineSpeechOptions {
  eouSilenceMs?: number;
  bargeInMs?: number;
  wordsPerMinute?: number;
  /** The language model recognitions use by default (see SpeechEngine.setLanguageModel); `general` is the wheel's own. */
  search?: string;
  /**
   * How a stream's utterance is decoded: `utterance` (default) whole at its end, with batch
   * cepstral normalization; or `incremental` while it is spoken, with partials and live
   * normalization. On the bench, utterance mode has the better word accuracy (89 % against 83 %)
   * for about 90 ms more from the end of speech to the result.
   */
  streaming?: 'incremental' | 'utterance';
}

/** PocketSphinx over the sidecar: whole buffers, or a live stream decoded as it is spoken. */
export class OfflineSpeechRecognizer implements SpeechRecognizer {
  readonly provider = 'offline';
  private nextStream = 1;

  constructor(
    private readonly engine: SpeechEngine,
    private readonly opts: OfflineSpeechOptions = {},
  ) {}

  async recognize(pcm: Pcm, opts: RecognizeOptions | SpeechLanguage = {}): Promise<Recognition> {
    englishOnly(typeof opts === 'string' ? opts : opts.language);
    const audio = addNoiseFloor(resample(pcm, ASR_RATE_HZ).samples, ASR_NOISE_FLOOR_RMS);
    const frame = await this.engine.request({ op: 'recognize', search: this.opts.search }, pcmToBuffer(audio));
    return toRecognition(frame.header);
  }

  openStream(opts: { sampleRate: number; language?: SpeechLanguage; channel?: string }): RecognitionStream {
    englishOnly(opts.language);
    const backend: StreamBackend =
      (this.opts.streaming ?? 'utterance') === 'utterance'
        ? { recognize: (pcm, language) => this.recognize(pcm, language) }
        : { recognize: (pcm, language) => this.recognize(pcm, language), startSession: (rate, language, onPartial) => this.startSession(rate, language, onPartial, opts.channel) };
    return new RecognitionStream(backend, { sampleRate: opts.sampleRate, language: opts.language ?? 'en', eouSilenceMs: this.opts.eouSilenceMs, bargeInMs: this.opts.bargeInMs });
  }

  /** `channel` (the call) keeps the line's cepstral mean from one utterance to its next. */
  startSession(sampleRate: number, _language: SpeechLanguage, onPartial: (text: string) => void, channel?: string): BackendSession {
    const stream = `s${this.nextStream++}`;
    const resampler = new StreamResampler(sampleRate, ASR_RATE_HZ);
    let seed = 0x9e3779b9;
    let sinceLastPartial = 0;
    let failure: Error | null = null;
    let cancelled = false;
    const noisy = (samples: Int16Array) => addNoiseFloor(samples, ASR_NOISE_FLOOR_RMS, (seed = (seed + 0x6d2b79f5) >>> 0));
    // Frames go out in order without waiting for each answer; the first failure fails the session.
    const started = this.engine.request({ op: 'stream_start', stream, search: this.opts.search, channel });
    let chain: Promise<unknown> = started;
    const send = (header: Record<string, unknown>, samples: Int16Array) => {
      chain = Promise.all([started, chain]).then(async ([{ generation }]) => {
        if (failure || cancelled) return;
        const frame = await this.engine.requestOn(generation, header, pcmToBuffer(samples));
        if (typeof frame.header.partial === 'string' && frame.header.partial) onPartial(frame.header.partial);
      });
      chain.catch((err: Error) => {
        failure ??= err;
      });
    };
    return {
      feed: (samples) => {
        const out = resampler.push(samples);
        if (out.length === 0) return;
        sinceLastPartial += (out.length / ASR_RATE_HZ) * 1000;
        const partial = sinceLastPartial >= PARTIAL_EVERY_MS;
        if (partial) sinceLastPartial = 0;
        send({ op: 'stream_feed', stream, partial }, noisy(out));
      },
      end: async () => {
        const tail = resampler.flush();
        if (tail.length) send({ op: 'stream_feed', stream, partial: false }, noisy(tail));
        await chain.catch(() => undefined);
        if (failure) throw failure;
        const { generation } = await started;
        return toRecognition((await this.engine.requestOn(generation, { op: 'stream_end', stream })).header);
      },
      cancel: () => {
        cancelled = true;
        void started.then(({ generation }) => this.engine.requestOn(generation, { op: 'stream_cancel', stream })).catch(() => undefined);
      },
    };
  }
}

/** eSpeak NG over the sidecar. */
export class OfflineSpeechSynthesizer implements SpeechSynthesizer {
  readonly provider = 'offline';

  constructor(
    private readonly engine: SpeechEngine,
    private readonly opts: OfflineSpeechOptions = {},
  ) {}

  async synthesize(text: string, opts: SynthesizeOptions = {}): Promise<Synthesis> {
    const started = performance.now();
    const frame = await this.engine.request({ op: 'synthesize', text, lang: opts.language ?? 'en', words_per_minute: this.opts.wordsPerMinute ?? 160 });
    const native = pcmFromBuffer(frame.payload, frame.header.rate_hz as number);
    const pcm = resample(native, opts.sampleRate ?? 8000);
    return { pcm, firstAudioMs: performance.now() - started };
  }
}
