import type { Config } from '../config';
import { collectionCallCorpus } from './domain-corpus';
import { SpeechEngine } from './engine-process';
import { DeepgramRecognizer, DeepgramSynthesizer, GoogleRecognizer, GoogleSynthesizer, type HostedSpeechOptions } from './hosted/providers';
import { OfflineSpeechRecognizer, OfflineSpeechSynthesizer } from './offline';
import type { SpeechRecognizer, SpeechSynthesizer } from './types';

export * from './audio';
export * from './types';
export { RecognitionStream } from './stream';
export { Endpointer } from './vad';
export { SpeechEngine, SpeechEngineError } from './engine-process';
export { SpeechProviderError } from './hosted/egress-request';
export { spokenNumbersToDigits } from './numbers';

export interface Speech {
  provider: Config['SPEECH_PROVIDER'];
  recognizer: SpeechRecognizer;
  synthesizer: SpeechSynthesizer;
  /** The offline sidecar (null for a hosted provider): warmUp() to start it before the first call. */
  engine: SpeechEngine | null;
  close(): Promise<void>;
}

type SpeechConfig = Pick<Config, 'SPEECH_PROVIDER' | 'SPEECH_API_KEY' | 'SPEECH_BASE_URL' | 'SPEECH_EOU_SILENCE_MS' | 'SPEECH_BARGE_IN_MS' | 'SPEECH_TTS_WORDS_PER_MINUTE' | 'TOOLS_DIR' | 'egressAllowlist'>;

/**
 * The deployment's speech, from the environment (docs/speech.md). Nothing starts here: the offline
 * engine starts (and installs) on its first request, or at warmUp().
 */
export function createSpeech(config: SpeechConfig, log?: (level: 'info' | 'warn', msg: string) => void): Speech {
  if (config.SPEECH_PROVIDER === 'offline') {
    const engine = new SpeechEngine({ toolsDir: config.TOOLS_DIR, log });
    void engine.setLanguageModel('domain', collectionCallCorpus());
    const opts = { eouSilenceMs: config.SPEECH_EOU_SILENCE_MS, bargeInMs: config.SPEECH_BARGE_IN_MS, wordsPerMinute: config.SPEECH_TTS_WORDS_PER_MINUTE };
    return {
      provider: 'offline',
      recognizer: new OfflineSpeechRecognizer(engine, opts),
      synthesizer: new OfflineSpeechSynthesizer(engine, opts),
      engine,
      close: () => engine.close(),
    };
  }
  if (!config.SPEECH_API_KEY) throw new Error(`invalid environment: SPEECH_PROVIDER=${config.SPEECH_PROVIDER} needs SPEECH_API_KEY`);
  const opts: HostedSpeechOptions = {
    apiKey: config.SPEECH_API_KEY,
    baseUrl: config.SPEECH_BASE_URL,
    allowlist: config.egressAllowlist,
    eouSilenceMs: config.SPEECH_EOU_SILENCE_MS,
    bargeInMs: config.SPEECH_BARGE_IN_MS,
  };
  const [recognizer, synthesizer] = config.SPEECH_PROVIDER === 'deepgram' ? [new DeepgramRecognizer(opts), new DeepgramSynthesizer(opts)] : [new GoogleRecognizer(opts), new GoogleSynthesizer(opts)];
  return { provider: config.SPEECH_PROVIDER, recognizer, synthesizer, engine: null, close: () => Promise.resolve() };
}
