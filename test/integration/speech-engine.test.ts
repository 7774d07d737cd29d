import path from 'node:path';
import { ROOT_DIR } from '../../src/config';
import { concatPcm, durationMs, levelDbfs, silence } from '../../src/speech/audio';
import { collectionCallCorpus } from '../../src/speech/domain-corpus';
import { SpeechEngine, SpeechEngineError } from '../../src/speech/engine-process';
import { OfflineSpeechRecognizer, OfflineSpeechSynthesizer } from '../../src/speech/offline';
import type { Utterance } from '../../src/speech/types';

jest.setTimeout(600_000);

/** The real sidecar: eSpeak NG and PocketSphinx installed into .tools (the first run installs them). */
let engine: SpeechEngine;
let tts: OfflineSpeechSynthesizer;
let asr: OfflineSpeechRecognizer;

beforeAll(async () => {
  engine = new SpeechEngine({ toolsDir: path.join(ROOT_DIR, '.tools') });
  await engine.setLanguageModel('domain', collectionCallCorpus());
  await engine.warmUp();
  tts = new OfflineSpeechSynthesizer(engine);
  asr = new OfflineSpeechRecognizer(engine, { eouSilenceMs: 500 });
});

afterAll(() => engine.close());

it('synthesizes "I can pay fifty dollars" at 8 kHz and recognizes it back', async () => {
  const { pcm } = await tts.synthesize('I can pay fifty dollars', { sampleRate: 8000 });
  expect(pcm.sampleRate).toBe(8000);
  expect(durationMs(pcm)).toBeGreaterThan(800);
  const r = await asr.recognize(pcm);
  expect(r.text).toBe('i can pay fifty dollars');
  expect(r.words.map((w) => w.word)).toEqual(['i', 'can', 'pay', 'fifty', 'dollars']);
  for (const w of r.words) expect(w.endMs).toBeGreaterThan(w.startMs);
  expect(r.confidence).toBeGreaterThan(0.3);
});

it('cuts a live 8 kHz stream into utterances and recognizes each', async () => {
  const one = (await tts.synthesize('stop calling me')).pcm.samples;
  const two = (await tts.synthesize('I want to talk to a person')).pcm.samples;
  const stream = asr.openStream({ sampleRate: 8000, channel: 'test-call' });
  const utterances: Utterance[] = [];
  stream.on('utterance', (u) => utterances.push(u));
  const audio = concatPcm([silence(8000, 400), one, silence(8000, 900), two, silence(8000, 900)]);
  for (let i = 0; i < audio.length; i += 160) stream.feed(audio.subarray(i, i + 160));
  await stream.close();
  expect(utterances).toHaveLength(2);
  expect(utterances[0]!.text).toBe('stop calling me');
  // The end of the second is misheard on some runs ("talk with a month"): the bench measures accuracy; this checks the cutting.
  expect(utterances[1]!.text).toMatch(/^i want to talk/);
  expect(utterances[1]!.startMs).toBeGreaterThan(utterances[0]!.endMs);
});

it('speaks Spanish', async () => {
  const { pcm } = await tts.synthesize('Puedo pagar cincuenta dólares el viernes', { language: 'es', sampleRate: 16_000 });
  expect(pcm.sampleRate).toBe(16_000);
  expect(durationMs(pcm)).toBeGreaterThan(1000);
  expect(levelDbfs(pcm.samples)).toBeGreaterThan(-40);
  await expect(asr.recognize(pcm, { language: 'es' })).rejects.toThrow(/no es model/);
});

it('answers a bad request with an error and keeps serving', async () => {
  await expect(engine.request({ op: 'synthesize', text: 'hola', lang: 'fr' })).rejects.toThrow(/no voice for language 'fr'/);
  await expect(engine.request({ op: 'nonsense' })).rejects.toBeInstanceOf(SpeechEngineError);
  expect((await tts.synthesize('yes')).pcm.samples.length).toBeGreaterThan(0);
});

it('starts the engine again after it dies, language model included', async () => {
  const before = engine.pid!;
  const gen = engine.currentGeneration;
  const died = new Promise((r) => setTimeout(r, 0));
  process.kill(before, 'SIGKILL');
  await died;
  // The request that meets the dead process fails or is served by the new one; the next is served.
  await engine.request({ op: 'hello' }).catch(() => undefined);
  const { pcm } = await tts.synthesize('I can pay fifty dollars');
  expect((await asr.recognize(pcm)).text).toBe('i can pay fifty dollars');
  expect(engine.pid).not.toBe(before);
  expect(engine.currentGeneration).toBeGreaterThan(gen);
});
