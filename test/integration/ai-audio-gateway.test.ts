import path from 'node:path';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { ROOT_DIR } from '../../src/config';
import { concatPcm, silence } from '../../src/speech/audio';
import { collectionCallCorpus } from '../../src/speech/domain-corpus';
import { SpeechEngine } from '../../src/speech/engine-process';
import { OfflineSpeechRecognizer, OfflineSpeechSynthesizer } from '../../src/speech/offline';
import { createLogger } from '../../src/lib/logger';
import type { AiCallRef, AiSpeech } from '../../src/contracts/ai-call';
import { audioForkUrl, verifyAudioForkPath, AUDIO_FORK_SUBPROTOCOL } from '../../src/modules/ai-calls/audio-fork';
import { startAudioGateway, type AudioGateway } from '../../src/modules/ai-calls/audio-gateway';
import { waitFor } from '../helpers/dial-loop';

jest.setTimeout(300_000);

/**
 * The audio gateway with the real offline recognizer, fed as mod_audio_fork feeds it: a websocket
 * with the audio.drachtio.org subprotocol, the metadata text frame, then 20 ms frames of 8 kHz
 * 16-bit mono PCM (synthesized by eSpeak NG). The hooks stand in for Temporal and the switch.
 */
const SECRET = 'gateway-test-secret-0123456789';
let engine: SpeechEngine;
let tts: OfflineSpeechSynthesizer;
let gateway: AudioGateway;
const delivered: Array<{ ref: AiCallRef; speech: AiSpeech }> = [];
const bargeIns: Array<{ ref: AiCallRef; audioMs: number }> = [];
const speaking = new Map<string, (s: boolean) => void>();

beforeAll(async () => {
  engine = new SpeechEngine({ toolsDir: path.join(ROOT_DIR, '.tools') });
  await engine.setLanguageModel('domain', collectionCallCorpus());
  await engine.warmUp();
  tts = new OfflineSpeechSynthesizer(engine);
  gateway = await startAudioGateway({
    port: 0,
    host: '127.0.0.1',
    secret: SECRET,
    recognizer: new OfflineSpeechRecognizer(engine, { eouSilenceMs: 500, bargeInMs: 200 }),
    seal: (text) => `sealed:${Buffer.from(text).toString('base64')}`,
    logger: createLogger('silent'),
    hooks: {
      deliver: (ref, speech) => {
        delivered.push({ ref, speech });
        return Promise.resolve();
      },
      bargeIn: (ref, _at, audioMs) => {
        bargeIns.push({ ref, audioMs });
        return Promise.resolve();
      },
      watchSpeaking: (uuid, onChange) => {
        speaking.set(uuid, onChange);
        return () => speaking.delete(uuid);
      },
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await engine?.close();
});

const base = () => `ws://127.0.0.1:${gateway.port}/ai-audio`;
const newCall = (): AiCallRef => ({ tenantId: randomUUID(), callAttemptId: randomUUID(), callUuid: randomUUID() });
const opened = (text: string) => Buffer.from(text.replace(/^sealed:/, ''), 'base64').toString('utf8');

function connect(url: string, protocol = AUDIO_FORK_SUBPROTOCOL): Promise<{ ws: WebSocket; received: string[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocol);
    const received: string[] = [];
    ws.on('message', (data: Buffer) => received.push(data.toString('utf8')));
    ws.once('open', () => resolve({ ws, received }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Sends PCM as the fork does: 20 ms frames (160 samples at 8 kHz), little-endian. */
async function sendAudio(ws: WebSocket, samples: Int16Array, realTime = false): Promise<void> {
  for (let i = 0; i < samples.length; i += 160) {
    const frame = samples.subarray(i, i + 160);
    const bytes = Buffer.alloc(frame.length * 2);
    for (let j = 0; j < frame.length; j += 1) bytes.writeInt16LE(frame[j]!, j * 2);
    ws.send(bytes);
    if (realTime) await new Promise((r) => setTimeout(r, 20));
  }
}

const say = async (text: string) => (await tts.synthesize(text, { sampleRate: 8000 })).pcm.samples;

it('refuses a socket without the call token, with a token of another call, or without the audio.drachtio.org subprotocol', async () => {
  const call = newCall();
  const good = audioForkUrl(base(), SECRET, call);
  await expect(connect(`${base()}/${call.tenantId}/${call.callAttemptId}/${call.callUuid}`)).rejects.toThrow('refused 401');
  const other = audioForkUrl(base(), SECRET, { ...call, callUuid: randomUUID() });
  await expect(connect(`${good.slice(0, good.lastIndexOf('/'))}${other.slice(other.lastIndexOf('/'))}`)).rejects.toThrow('refused 401');
  await expect(connect(audioForkUrl(base(), 'another-secret-of-16-chars', call))).rejects.toThrow('refused 401');
  await expect(connect(good, 'echo-protocol')).rejects.toThrow(/refused 400|Server sent no subprotocol|Server sent an invalid subprotocol/);
  expect(verifyAudioForkPath(new URL(good).pathname, SECRET)).toEqual(call);
  expect(gateway.calls()).toBe(0);
});

it('recognizes each utterance of the stream and delivers it sealed, with confidence, offsets and digits for spoken numbers', async () => {
  const call = newCall();
  const { ws } = await connect(audioForkUrl(base(), SECRET, call));
  ws.send(JSON.stringify({ call_uuid: call.callUuid, language: 'en', sample_rate: 8000 }));
  await waitFor(() => Promise.resolve(gateway.calls() === 1 || undefined), 5000, 'the session');
  const audio = concatPcm([silence(8000, 400), await say('I can pay fifty dollars on friday'), silence(8000, 900), await say('one two three four'), silence(8000, 900)]);
  await sendAudio(ws, audio);
  await waitFor(() => Promise.resolve(delivered.filter((d) => d.ref.callUuid === call.callUuid).length >= 2 || undefined), 30_000, 'two utterances');
  ws.close();
  const mine = delivered.filter((d) => d.ref.callUuid === call.callUuid).map((d) => d.speech);
  expect(mine.map((s) => opened(s.text))).toEqual(['i can pay 50 dollars on friday', '1234']);
  for (const s of mine) {
    expect(s.text).toMatch(/^sealed:/);
    // Above the default AI_ASR_MIN_CONFIDENCE (0.3): these two are heard well.
    expect(s.confidence).toBeGreaterThan(0.3);
    expect(s.confidence).toBeLessThanOrEqual(1);
    expect(s.endMs!).toBeGreaterThan(s.startMs!);
    expect(s.seq).toMatch(/^fork:\d+:\d+$/);
  }
  expect(mine[0]!.startMs).toBeGreaterThanOrEqual(300);
  expect(mine[1]!.startMs).toBeGreaterThan(mine[0]!.endMs!);
  await waitFor(() => Promise.resolve(gateway.calls() === 0 || undefined), 5000, 'the session closed');
});

it('on speech over the AI sends killAudio on the socket and stops the turn (barge-in); none while the AI is silent', async () => {
  const call = newCall();
  const { ws, received } = await connect(audioForkUrl(base(), SECRET, call));
  ws.send(JSON.stringify({ call_uuid: call.callUuid, language: 'en' }));
  await waitFor(() => Promise.resolve(speaking.has(call.callUuid) || undefined), 5000, 'the session');
  await sendAudio(ws, concatPcm([silence(8000, 300), await say('hello'), silence(8000, 800)]));
  await waitFor(() => Promise.resolve(delivered.some((d) => d.ref.callUuid === call.callUuid) || undefined), 30_000, 'the first utterance');
  expect(bargeIns.filter((b) => b.ref.callUuid === call.callUuid)).toEqual([]);
  speaking.get(call.callUuid)!(true);
  await sendAudio(ws, concatPcm([await say('I want to talk to a person'), silence(8000, 800)]));
  await waitFor(() => Promise.resolve(received.length > 0 || undefined), 10_000, 'killAudio');
  expect(received).toEqual([JSON.stringify({ type: 'killAudio' })]);
  const mine = bargeIns.filter((b) => b.ref.callUuid === call.callUuid);
  expect(mine).toHaveLength(1);
  expect(mine[0]!.audioMs).toBeGreaterThan(1000);
  ws.close();
});
