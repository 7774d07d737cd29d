import type { Pcm } from './audio';

/** The product's languages (the AI engine's scripts). */
export type SpeechLanguage = 'en' | 'es';

export interface RecognizedWord {
  word: string;
  /** Offsets from the start of the audio recognized (for a stream's utterance: of the stream). */
  startMs: number;
  endMs: number;
  /** 0..1 */
  confidence: number;
}

export interface Recognition {
  /** Lowercase words as the engine spelled them, one space apart; '' when nothing was understood. */
  text: string;
  /** 0..1: the engine's confidence in the whole text. */
  confidence: number;
  words: RecognizedWord[];
}

/** One utterance of a stream, cut by the end-of-utterance detector. Offsets are the stream's. */
export interface Utterance extends Recognition {
  startMs: number;
  endMs: number;
  /** When the detector saw the end (startMs ≤ endMs ≤ detectedAtMs): endMs + the end-of-utterance silence. */
  detectedAtMs: number;
}

export interface RecognizeOptions {
  language?: SpeechLanguage;
}

/** One audio stream's recognition: the consumer's leg of one call. */
export interface RecognitionStreamEvents {
  /** Speech began (its start, pre-roll included, in stream time). */
  speech_start: [{ atMs: number }];
  /** The consumer has been speaking for SPEECH_BARGE_IN_MS while the agent was speaking: stop the agent's turn. */
  barge_in: [{ atMs: number }];
  /** A provisional transcript of the utterance in progress (offline engine only). */
  partial: [{ text: string }];
  utterance: [Utterance];
  error: [Error];
}

export interface SpeechRecognizer {
  readonly provider: string;
  /** Whole-buffer recognition (any sample rate; resampled as the engine needs). */
  recognize(pcm: Pcm, opts?: RecognizeOptions): Promise<Recognition>;
  /**
   * A session over a live stream at `sampleRate` (8000 or 16000 from the switch): feed it frames as
   * they arrive; it detects speech and its end and emits one `utterance` per consumer turn.
   */
  openStream(opts: { sampleRate: number; language?: SpeechLanguage; /** The call: per-line adaptation where the engine has it. */ channel?: string }): import('./stream').RecognitionStream;
}

export interface Synthesis {
  pcm: Pcm;
  /** Time the engine took until the first audio was available, in milliseconds. */
  firstAudioMs: number;
}

export interface SynthesizeOptions {
  language?: SpeechLanguage;
  /** Output rate: 8000 for a phone leg (default), 16000, or the engine's own. */
  sampleRate?: number;
}

export interface SpeechSynthesizer {
  readonly provider: string;
  synthesize(text: string, opts?: SynthesizeOptions): Promise<Synthesis>;
}
