import path from 'node:path';
import { ROOT_DIR } from '../src/config';
import { concatPcm, silence } from '../src/speech/audio';
import { collectionCallCorpus } from '../src/speech/domain-corpus';
import { SpeechEngine } from '../src/speech/engine-process';
import { OfflineSpeechRecognizer, OfflineSpeechSynthesizer } from '../src/speech/offline';
import type { Utterance } from '../src/speech/types';
import { machineLine, percentile } from './support';

/**
 * npm run bench:speech — the offline engines on a phone line: ~20 consumer utterances typical of a
 * collection call, synthesized (eSpeak NG), brought to 8 kHz, fed as 20 ms frames in real time to a
 * recognition stream (energy endpointer + PocketSphinx), then the AI's typical reply synthesized.
 * Prints word and utterance accuracy, end of speech → final result, final → first reply audio, and
 * end of speech → first reply audio (the turn gap the consumer hears), p50/p95.
 *
 * BENCH_SPEECH_MODES=incremental,utterance  BENCH_SPEECH_SEARCH=domain,general  BENCH_SPEECH_EOU_MS=500
 */

const UTTERANCES = [
  'yes this is John',
  'yes speaking',
  'who is calling',
  'I can pay fifty dollars on Friday',
  'I can pay one hundred dollars a month',
  'I want to talk to a person',
  'stop calling me',
  'you have the wrong number',
  'call me back tomorrow',
  'I already paid this',
  'that is not my debt',
  'how much do I owe',
  'the last four digits are four five six seven',
  'my zip code is nine zero two one zero',
  'my date of birth is March fifteenth nineteen eighty',
  'I can pay two hundred dollars next week',
  "I can't afford that",
  'okay that sounds good',
  "I'm busy right now",
  'no',
];
const REPLY = 'Thank you. I can set up a payment of fifty dollars on Friday. Is that right?';
const FRAME_MS = 20;
const LINE_RATE = 8000;

const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

function editDistance(a: string[], b: string[]): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
  }
  return d[a.length]![b.length]!;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (v: number) => `${Math.round(v)} ms`;
const stats = (label: string, values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  console.log(`  ${label.padEnd(44)} p50 ${fmt(percentile(s, 50)).padStart(8)}  p95 ${fmt(percentile(s, 95)).padStart(8)}  max ${fmt(s[s.length - 1]!).padStart(8)}`);
};

async function run(mode: 'incremental' | 'utterance', search: string, eouMs: number, engine: SpeechEngine, tts: OfflineSpeechSynthesizer) {
  const asr = new OfflineSpeechRecognizer(engine, { streaming: mode, search, eouSilenceMs: eouMs });
  let wordErrors = 0;
  let wordTotal = 0;
  let exact = 0;
  const endToFinal: number[] = [];
  const finalToAudio: number[] = [];
  const endToAudio: number[] = [];
  const misses: string[] = [];
  for (const text of UTTERANCES) {
    const { pcm } = await tts.synthesize(text, { sampleRate: LINE_RATE });
    const audio = concatPcm([silence(LINE_RATE, 400), pcm.samples, silence(LINE_RATE, eouMs + 600)]);
    const stream = asr.openStream({ sampleRate: LINE_RATE, channel: 'bench-call' });
    const frame = (LINE_RATE * FRAME_MS) / 1000;
    let clipFed = false;
    const speechEndSample = (400 / 1000) * LINE_RATE + pcm.samples.length;
    const got = new Promise<{ u: Utterance; at: number }>((resolve, reject) => {
      stream.once('utterance', (u) => resolve({ u, at: performance.now() }));
      stream.once('error', reject);
    });
    const started = performance.now();
    for (let i = 0; i < audio.length; i += frame) {
      // Real time: a phone leg delivers a frame every 20 ms, so the decoder never runs ahead of the consumer.
      const due = started + (i / LINE_RATE) * 1000;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      stream.feed(audio.subarray(i, i + frame));
      if (i + frame >= speechEndSample) clipFed = true;
      if (!stream.inSpeech && clipFed) {
        // The endpointer has fired; the rest is trailing silence.
        break;
      }
    }
    const { u, at } = await got;
    await stream.close();
    const reply = await tts.synthesize(REPLY, { sampleRate: LINE_RATE });
    const replyAudioAt = at + reply.firstAudioMs;
    // The last voiced frame (the endpointer's end of speech, in stream time) was fed at started + endMs:
    // from there the consumer waits the end-of-utterance silence, the decode and the reply's synthesis.
    const speechEndedAt = started + u.endMs;
    endToFinal.push(at - speechEndedAt);
    finalToAudio.push(reply.firstAudioMs);
    endToAudio.push(replyAudioAt - speechEndedAt);
    const ref = words(text);
    const hyp = words(u.text);
    wordErrors += editDistance(ref, hyp);
    wordTotal += ref.length;
    if (ref.join(' ') === hyp.join(' ')) exact++;
    else misses.push(`    "${text}" → "${u.text}" (confidence ${u.confidence.toFixed(2)})`);
  }
  console.log(`\nmode ${mode}, language model ${search}, end-of-utterance silence ${eouMs} ms`);
  console.log(`  word accuracy ${(100 * (1 - wordErrors / wordTotal)).toFixed(1)} % (WER ${(100 * (wordErrors / wordTotal)).toFixed(1)} %), utterances exact ${exact}/${UTTERANCES.length}`);
  stats('end of speech → final result', endToFinal);
  stats('final result → first reply audio (synthesis)', finalToAudio);
  stats('end of speech → first reply audio', endToAudio);
  if (misses.length) console.log(`  misheard:\n${misses.join('\n')}`);
}

async function main() {
  console.log(`speech bench: ${UTTERANCES.length} utterances at ${LINE_RATE} Hz, 20 ms frames in real time`);
  console.log(`machine: ${machineLine()}`);
  const engine = new SpeechEngine({ toolsDir: process.env.TOOLS_DIR ?? path.join(ROOT_DIR, '.tools'), log: (_l, m) => console.log(m) });
  try {
    const t0 = performance.now();
    await engine.setLanguageModel('domain', collectionCallCorpus());
    await engine.warmUp();
    console.log(`engine start + language model: ${fmt(performance.now() - t0)}`);
    const tts = new OfflineSpeechSynthesizer(engine);
    const synth: number[] = [];
    for (let i = 0; i < 20; i++) synth.push((await tts.synthesize(REPLY, { sampleRate: LINE_RATE })).firstAudioMs);
    stats('reply synthesis (first audio), 20 runs', synth);
    const modes = (process.env.BENCH_SPEECH_MODES ?? 'incremental,utterance').split(',') as ('incremental' | 'utterance')[];
    const searches = (process.env.BENCH_SPEECH_SEARCH ?? 'domain,general').split(',');
    const eouMs = Number(process.env.BENCH_SPEECH_EOU_MS ?? 500);
    for (const search of searches) for (const mode of modes) await run(mode, search, eouMs, engine, tts);
  } finally {
    await engine.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
