import { pcmFromBuffer, pcmToBuffer, resample, wavToPcm, type Pcm } from '../audio';
import { RecognitionStream } from '../stream';
import type { Recognition, RecognizeOptions, SpeechLanguage, SpeechRecognizer, SpeechSynthesizer, Synthesis, SynthesizeOptions } from '../types';
import { SpeechProviderError, speechPost, type SpeechHttpOptions } from './egress-request';

/**
 * Hosted speech providers over their public REST APIs, every request through the egress check
 * (speechPost). Streams are cut by the same endpointer as the offline engine and each utterance is
 * sent whole when it ends. Keys travel in headers, never in URLs (which end up in logs).
 */

export interface HostedSpeechOptions extends SpeechHttpOptions {
  apiKey: string;
  /** The provider's public API unless set (a regional endpoint, a test server). */
  baseUrl?: string;
  eouSilenceMs?: number;
  bargeInMs?: number;
}

const LOCALES: Record<SpeechLanguage, string> = { en: 'en-US', es: 'es-US' };

function json(body: Buffer): Record<string, unknown> {
  try {
    return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new SpeechProviderError('bad_response', 'speech provider answered something other than JSON');
  }
}

const base = (opts: HostedSpeechOptions, fallback: string) => (opts.baseUrl ?? fallback).replace(/\/+$/, '');
const languageOf = (opts: RecognizeOptions | SpeechLanguage | undefined): SpeechLanguage => (typeof opts === 'string' ? opts : (opts?.language ?? 'en'));

abstract class HostedRecognizer implements SpeechRecognizer {
  abstract readonly provider: string;
  constructor(protected readonly opts: HostedSpeechOptions) {}
  abstract recognize(pcm: Pcm, opts?: RecognizeOptions | SpeechLanguage): Promise<Recognition>;
  openStream(opts: { sampleRate: number; language?: SpeechLanguage }): RecognitionStream {
    return new RecognitionStream(
      { recognize: (pcm, language) => this.recognize(pcm, language) },
      { sampleRate: opts.sampleRate, language: opts.language ?? 'en', eouSilenceMs: this.opts.eouSilenceMs, bargeInMs: this.opts.bargeInMs },
    );
  }
}

/** Deepgram: POST /v1/listen with raw linear16, POST /v1/speak for linear16 without a container. */
export class DeepgramRecognizer extends HostedRecognizer {
  readonly provider = 'deepgram';

  async recognize(pcm: Pcm, opts?: RecognizeOptions | SpeechLanguage): Promise<Recognition> {
    const query = new URLSearchParams({ model: 'nova-2-phonecall', language: LOCALES[languageOf(opts)], encoding: 'linear16', sample_rate: String(pcm.sampleRate), channels: '1' });
    if (languageOf(opts) === 'es') query.set('model', 'nova-2');
    const res = await speechPost(`${base(this.opts, 'https://api.deepgram.com')}/v1/listen?${query.toString()}`, { authorization: `Token ${this.opts.apiKey}`, 'content-type': 'audio/l16' }, pcmToBuffer(pcm.samples), this.opts);
    const body = json(res.body) as { results?: { channels?: { alternatives?: { transcript?: string; confidence?: number; words?: { word: string; start: number; end: number; confidence: number }[] }[] }[] } };
    const best = body.results?.channels?.[0]?.alternatives?.[0];
    if (!best) return { text: '', confidence: 0, words: [] };
    return {
      text: (best.transcript ?? '').toLowerCase(),
      confidence: best.confidence ?? 0,
      words: (best.words ?? []).map((w) => ({ word: w.word, startMs: Math.round(w.start * 1000), endMs: Math.round(w.end * 1000), confidence: w.confidence })),
    };
  }
}

export class DeepgramSynthesizer implements SpeechSynthesizer {
  readonly provider = 'deepgram';
  constructor(private readonly opts: HostedSpeechOptions) {}

  async synthesize(text: string, opts: SynthesizeOptions = {}): Promise<Synthesis> {
    const started = performance.now();
    const rate = opts.sampleRate ?? 8000;
    // Aura's Spanish voices are named per voice; the English default is the documented one.
    const model = (opts.language ?? 'en') === 'es' ? 'aura-2-celeste-es' : 'aura-asteria-en';
    const query = new URLSearchParams({ model, encoding: 'linear16', sample_rate: String(rate), container: 'none' });
    const res = await speechPost(`${base(this.opts, 'https://api.deepgram.com')}/v1/speak?${query.toString()}`, { authorization: `Token ${this.opts.apiKey}`, 'content-type': 'application/json' }, JSON.stringify({ text }), this.opts);
    if (res.body.length % 2 !== 0) throw new SpeechProviderError('bad_response', 'speech provider answered odd-length linear16');
    return { pcm: pcmFromBuffer(res.body, rate), firstAudioMs: performance.now() - started };
  }
}

const seconds = (v: string | undefined) => Math.round(Number.parseFloat((v ?? '0').replace(/s$/, '')) * 1000);

/** Google Cloud: speech:recognize (v1) and text:synthesize (v1), API key in x-goog-api-key. */
export class GoogleRecognizer extends HostedRecognizer {
  readonly provider = 'google';

  async recognize(pcm: Pcm, opts?: RecognizeOptions | SpeechLanguage): Promise<Recognition> {
    const language = languageOf(opts);
    const request = {
      config: { encoding: 'LINEAR16', sampleRateHertz: pcm.sampleRate, languageCode: LOCALES[language], enableWordTimeOffsets: true, enableWordConfidence: true, ...(language === 'en' ? { model: 'phone_call', useEnhanced: true } : {}) },
      audio: { content: pcmToBuffer(pcm.samples).toString('base64') },
    };
    const res = await speechPost(`${base(this.opts, 'https://speech.googleapis.com')}/v1/speech:recognize`, { 'x-goog-api-key': this.opts.apiKey, 'content-type': 'application/json' }, JSON.stringify(request), this.opts);
    const body = json(res.body) as { results?: { alternatives?: { transcript?: string; confidence?: number; words?: { word: string; startTime?: string; endTime?: string; confidence?: number }[] }[] }[] };
    const alternatives = (body.results ?? []).map((r) => r.alternatives?.[0]).filter((a) => a !== undefined);
    if (alternatives.length === 0) return { text: '', confidence: 0, words: [] };
    const words = alternatives.flatMap((a) => a.words ?? []).map((w) => ({ word: w.word.toLowerCase(), startMs: seconds(w.startTime), endMs: seconds(w.endTime), confidence: w.confidence ?? 0 }));
    return {
      text: alternatives
        .map((a) => (a.transcript ?? '').trim())
        .join(' ')
        .toLowerCase(),
      confidence: alternatives.reduce((s, a) => s + (a.confidence ?? 0), 0) / alternatives.length,
      words,
    };
  }
}

export class GoogleSynthesizer implements SpeechSynthesizer {
  readonly provider = 'google';
  constructor(private readonly opts: HostedSpeechOptions) {}

  async synthesize(text: string, opts: SynthesizeOptions = {}): Promise<Synthesis> {
    const started = performance.now();
    const rate = opts.sampleRate ?? 8000;
    const request = { input: { text }, voice: { languageCode: LOCALES[opts.language ?? 'en'] }, audioConfig: { audioEncoding: 'LINEAR16', sampleRateHertz: rate } };
    const res = await speechPost(`${base(this.opts, 'https://texttospeech.googleapis.com')}/v1/text:synthesize`, { 'x-goog-api-key': this.opts.apiKey, 'content-type': 'application/json' }, JSON.stringify(request), this.opts);
    const body = json(res.body) as { audioContent?: string };
    if (typeof body.audioContent !== 'string') throw new SpeechProviderError('bad_response', 'speech provider answered no audioContent');
    // LINEAR16 comes back as a WAV file (header included).
    const pcm = resample(wavToPcm(Buffer.from(body.audioContent, 'base64')), rate);
    return { pcm, firstAudioMs: performance.now() - started };
  }
}
