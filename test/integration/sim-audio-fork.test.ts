import { randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { Connection, type Event as ModeslEvent } from 'modesl';
import { WebSocketServer, type WebSocket } from 'ws';
import { ROOT_DIR } from '../../src/config';
import { levelDbfs } from '../../src/speech/audio';
import { collectionCallCorpus } from '../../src/speech/domain-corpus';
import { SpeechEngine } from '../../src/speech/engine-process';
import { OfflineSpeechRecognizer, OfflineSpeechSynthesizer } from '../../src/speech/offline';
import type { SpeechSynthesizer, Utterance } from '../../src/speech/types';
import { fromModeslEvent, type EslEvent } from '../../src/switch/esl/events';
import { startSwitchSimulator, type SwitchSimulator } from '../../src/switch/simulator';

/**
 * mod_audio_fork and the simulated consumers over real TCP (modesl) and a real websocket server,
 * on the real clock: audio is paced in real time, so these tests take seconds, not minutes. The
 * consumer's voice is the product's offline synthesizer and what it streams is decoded with the
 * product's offline recognizer.
 */

jest.setTimeout(120_000);

const GUARD_MS = 15_000;

interface Frame {
  at: number;
  text?: string;
  pcm?: Buffer;
}

interface ForkServer {
  url: string;
  conns: Array<{ ws: WebSocket; protocol: string; frames: Frame[]; closed: Promise<void> }>;
  connected(): Promise<ForkServer['conns'][number]>;
  close(): Promise<void>;
}

async function forkServer(): Promise<ForkServer> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: (p) => (p.has('audio.drachtio.org') ? 'audio.drachtio.org' : false) });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const conns: ForkServer['conns'] = [];
  const waiting: Array<(c: ForkServer['conns'][number]) => void> = [];
  wss.on('connection', (ws) => {
    const frames: Frame[] = [];
    const closed = new Promise<void>((r) => ws.on('close', () => r()));
    ws.on('message', (data: Buffer, isBinary) => frames.push(isBinary ? { at: Date.now(), pcm: Buffer.from(data) } : { at: Date.now(), text: data.toString('utf8') }));
    const conn = { ws, protocol: ws.protocol, frames, closed };
    conns.push(conn);
    waiting.shift()?.(conn);
  });
  const port = (wss.address() as net.AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/fork`,
    conns,
    connected: () => (conns.length > 0 ? Promise.resolve(conns[conns.length - 1]!) : new Promise((r) => waiting.push(r))),
    close: () =>
      new Promise((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
}

interface Client {
  events: EslEvent[];
  api(command: string): Promise<string>;
  waitFor(pred: (e: EslEvent) => boolean, label: string, timeoutMs?: number): Promise<EslEvent>;
  close(): void;
}

async function connect(port: number): Promise<Client> {
  const events: EslEvent[] = [];
  const waiters: Array<{ pred: (e: EslEvent) => boolean; resolve: (e: EslEvent) => void }> = [];
  const conn = await new Promise<Connection>((resolve, reject) => {
    const c: Connection = new Connection('127.0.0.1', port, 'ClueCon', () => resolve(c));
    c.on('error', reject);
  });
  conn.on('esl::event::**', (ev: unknown, headers: unknown) => {
    const type = (headers as Record<string, unknown> | undefined)?.['Content-Type'];
    if (type !== 'text/event-json') return;
    const e = fromModeslEvent(ev as ModeslEvent);
    events.push(e);
    for (const w of [...waiters]) {
      if (w.pred(e)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  });
  await new Promise<void>((resolve) => conn.events('json', ['ALL'], () => resolve()));
  return {
    events,
    api: (command) => new Promise((resolve) => conn.api(command, (res) => resolve(res.getBody()))),
    waitFor(pred, label, timeoutMs = GUARD_MS) {
      const found = events.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event ${label}; got ${events.map((e) => e.subclass ?? e.name).join(', ')}`)), timeoutMs);
        waiters.push({
          pred,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
      });
    },
    close: () => conn.disconnect(),
  };
}

let engine: SpeechEngine;
let asr: OfflineSpeechRecognizer;
/** Every voice the simulated consumers were given, by rate and text (eSpeak's output varies a little from one synthesis to the next). */
const voices = new Map<string, Int16Array>();
let sim: SwitchSimulator;
let esl: Client;
let server: ForkServer;

beforeAll(async () => {
  engine = new SpeechEngine({ toolsDir: path.join(ROOT_DIR, '.tools') });
  await engine.setLanguageModel('domain', collectionCallCorpus());
  await engine.warmUp();
  asr = new OfflineSpeechRecognizer(engine, { eouSilenceMs: 500 });
  const espeak = new OfflineSpeechSynthesizer(engine);
  const synthesizer: SpeechSynthesizer = {
    provider: espeak.provider,
    synthesize: async (text, opts) => {
      const out = await espeak.synthesize(text, opts);
      voices.set(`${opts?.sampleRate}|${text}`, out.pcm.samples);
      return out;
    },
  };
  sim = await startSwitchSimulator({ ringMs: 20, talkMs: 1500, synthesizer, heartbeatMs: 0 });
  esl = await connect(sim.port);
});

afterAll(async () => {
  esl.close();
  await sim.stop();
  await engine.close();
});

beforeEach(async () => {
  server = await forkServer();
});

afterEach(async () => {
  await server.close();
  for (const ch of sim.channels()) await sim.api(`uuid_kill ${ch.uuid}`);
});

/** An answered consumer leg, parked. */
async function call(number: string): Promise<string> {
  const uuid = randomUUID();
  expect(await esl.api(`originate {origination_uuid=${uuid}}sofia/gateway/default/${number} &park()`)).toBe(`+OK ${uuid}\n`);
  return uuid;
}

const custom = (uuid: string, subclass: string) => (e: EslEvent) => e.uuid === uuid && e.subclass === subclass;
const complete = (uuid: string, app: string) => (e: EslEvent) => e.uuid === uuid && e.name === 'CHANNEL_EXECUTE_COMPLETE' && e.headers.Application === app;

/** Decodes a fork's binary frames (from `fromAt`, Date.now() ms) with the product's recognizer. */
async function decode(frames: Frame[], rate: number, fromAt = 0): Promise<Utterance[]> {
  const stream = asr.openStream({ sampleRate: rate, channel: randomUUID() });
  const out: Utterance[] = [];
  stream.on('utterance', (u) => out.push(u));
  for (const f of frames) {
    if (!f.pcm || f.at < fromAt) continue;
    const pcm = new Int16Array(f.pcm.buffer, f.pcm.byteOffset, f.pcm.byteLength / 2);
    stream.feed(pcm.slice());
  }
  await stream.close();
  return out;
}

const audioFrames = (frames: Frame[]) => frames.filter((f) => f.pcm);

/** The stream's samples: the binary frames received before `untilAt` (Date.now() ms), end to end. */
function streamed(frames: Frame[], untilAt: number): Int16Array {
  const bytes = Buffer.concat(frames.filter((f) => f.pcm && f.at < untilAt).map((f) => f.pcm!));
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
}

/** Where `voice` starts in `stream`, sample for sample, after silence; -1 when the stream does not carry it whole. */
function voiceAt(stream: Int16Array, voice: Int16Array): number {
  const heardFrom = stream.findIndex((v) => v !== 0);
  const voiceFrom = voice.findIndex((v) => v !== 0);
  const at = heardFrom - voiceFrom;
  if (heardFrom < 0 || at < 0 || at + voice.length > stream.length) return -1;
  for (let i = 0; i < voice.length; i++) if (stream[at + i] !== voice[i]) return -1;
  return at;
}
const loud = (f: Frame) => levelDbfs(new Int16Array(f.pcm!.buffer, f.pcm!.byteOffset, f.pcm!.byteLength / 2)) > -50;

describe('uuid_audio_fork', () => {
  it('is refused for an unknown or unanswered channel, a bad mix type, rate or url, and without arguments', async () => {
    const uuid = await call('15550100');
    const ringing = sim.inboundCall({ from: '15551230000', to: '15559870000' });
    expect(await esl.api(`uuid_audio_fork ${randomUUID()} start ${server.url} mono 8k`)).toBe('-ERR Operation Failed\n');
    expect(await esl.api(`uuid_audio_fork ${ringing} start ${server.url} mono 8k`)).toBe('-ERR Operation Failed\n');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mixed 8k`)).toBe('-ERR Operation Failed\n');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ${server.url} stereo 16k`)).toBe('-ERR Operation Failed\n');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 11k`)).toBe('-ERR Operation Failed\n');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ftp://127.0.0.1/x mono 8k`)).toBe('-ERR Operation Failed\n');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ${server.url}`)).toMatch(/^-USAGE: <uuid> \[start \| stop/);
    expect(await esl.api(`uuid_audio_fork ${uuid}`)).toMatch(/^-USAGE: /);
    expect(await esl.api(`uuid_audio_fork ${uuid} stop`)).toBe('-ERR Operation Failed\n');
    expect(await esl.api('module_exists mod_audio_fork')).toBe('true');
    expect(server.conns).toHaveLength(0);
  });

  it('is an unknown command when mod_audio_fork is not loaded', async () => {
    const bare = await startSwitchSimulator({ audioFork: false, ringMs: 20, heartbeatMs: 0 });
    try {
      expect(await bare.api('module_exists mod_audio_fork')).toBe('false');
      expect(await bare.api(`uuid_audio_fork ${randomUUID()} start ${server.url} mono 8k`)).toBe('-ERR uuid_audio_fork Command not found!\n');
    } finally {
      await bare.stop();
    }
  });

  it('connects with the drachtio subprotocol, sends the metadata first, then 20 ms L16 frames in real time', async () => {
    const uuid = await call('15550101');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 16k {"callId":"c-1"}`)).toBe('+OK Success\n');
    const conn = await server.connected();
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    expect(conn.protocol).toBe('audio.drachtio.org');
    await new Promise((r) => setTimeout(r, 1000));
    const until = Date.now();
    expect(conn.frames[0]!.text).toBe('{"callId":"c-1"}');
    const audio = audioFrames(conn.frames).filter((f) => f.at <= until);
    expect(audio.every((f) => f.pcm!.length === 640)).toBe(true);
    // Real-time pace: about one frame per 20 ms from the first, never a burst ahead of the clock.
    // Timed from the first frame, not the connect event: frames flow before that event reaches the test.
    const elapsed = until - audio[0]!.at;
    expect(elapsed).toBeGreaterThan(800);
    expect(audio.length).toBeGreaterThanOrEqual(Math.floor(elapsed / 20) - 10);
    expect(audio.length).toBeLessThanOrEqual(Math.ceil(elapsed / 20) + 2);
    expect(sim.channel(uuid)!.audioForks).toEqual([expect.objectContaining({ bugname: 'audio_fork', rate: 16_000, state: 'open' })]);
  });

  it('sends 320-byte frames at 8k, send_text frames, and the final text on stop before closing', async () => {
    const uuid = await call('15550102');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 8k`)).toBe('+OK Success\n');
    const conn = await server.connected();
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    expect(await esl.api(`uuid_audio_fork ${uuid} send_text {"dtmf":"5"}`)).toBe('+OK Success\n');
    await new Promise((r) => setTimeout(r, 200));
    expect(await esl.api(`uuid_audio_fork ${uuid} stop {"bye":true}`)).toBe('+OK Success\n');
    await conn.closed;
    const texts = conn.frames.filter((f) => f.text).map((f) => f.text);
    expect(texts).toEqual(['{"dtmf":"5"}', '{"bye":true}']);
    expect(audioFrames(conn.frames).length).toBeGreaterThan(3);
    expect(audioFrames(conn.frames).every((f) => f.pcm!.length === 320)).toBe(true);
    expect(conn.frames[conn.frames.length - 1]!.text).toBe('{"bye":true}');
    expect(sim.channel(uuid)!.audioForks).toEqual([]);
  });

  it('closes the websocket when the channel hangs up', async () => {
    const uuid = await call('15550103');
    await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 8k`);
    const conn = await server.connected();
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    expect(await esl.api(`uuid_kill ${uuid}`)).toBe('+OK\n');
    await conn.closed;
  });

  it('reports connect_failed when nothing listens', async () => {
    const dead = net.createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const port = (dead.address() as net.AddressInfo).port;
    await new Promise((r) => dead.close(r));
    const uuid = await call('15550104');
    expect(await esl.api(`uuid_audio_fork ${uuid} start ws://127.0.0.1:${port}/x mono 8k`)).toBe('+OK Success\n');
    const failed = await esl.waitFor(custom(uuid, 'mod_audio_fork::connect_failed'), 'connect_failed');
    expect(JSON.parse(failed.body)).toEqual({ reason: expect.stringMatching(/ECONNREFUSED/) });
    expect(esl.events.some(custom(uuid, 'mod_audio_fork::connect'))).toBe(false);
  });

  it('turns the server text frames into events; killAudio stops a speak early', async () => {
    const uuid = await call('15550105');
    await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 8k`);
    const conn = await server.connected();
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    conn.ws.send(JSON.stringify({ type: 'transcription', data: { text: 'hello', confidence: 0.9 } }));
    conn.ws.send(JSON.stringify({ type: 'error', data: { reason: 'x' } }));
    conn.ws.send('not json');
    conn.ws.send(JSON.stringify({ type: 'whatever' }));
    conn.ws.send(JSON.stringify({ type: 'disconnect' }));
    expect(JSON.parse((await esl.waitFor(custom(uuid, 'mod_audio_fork::transcription'), 'transcription')).body)).toEqual({ text: 'hello', confidence: 0.9 });
    expect(JSON.parse((await esl.waitFor(custom(uuid, 'mod_audio_fork::error'), 'error')).body)).toEqual({ reason: 'x' });
    expect((await esl.waitFor(custom(uuid, 'mod_audio_fork::disconnect'), 'disconnect')).body).toBe('');

    const text = 'This is a long announcement that would take many seconds to say from start to finish on this call.';
    expect(await esl.api(`uuid_broadcast ${uuid} 'speak::flite|kal|${text}' aleg`)).toBe('+OK Message queued\n');
    const startedAt = Date.now();
    await esl.waitFor((e) => e.uuid === uuid && e.name === 'CHANNEL_EXECUTE' && e.headers.Application === 'speak', 'speak');
    conn.ws.send(JSON.stringify({ type: 'killAudio' }));
    await esl.waitFor(custom(uuid, 'mod_audio_fork::kill_audio'), 'kill_audio');
    const done = await esl.waitFor(complete(uuid, 'speak'), 'speak complete');
    expect(Date.now() - startedAt).toBeLessThan(text.length * 60 - 2000);
    expect(done.headers['Application-Response']).toBe('_none_');
  });

  it('writes playAudio to a file and reports it in play_audio', async () => {
    const uuid = await call('15550106');
    await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 8k`);
    const conn = await server.connected();
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    const audio = Buffer.alloc(1600, 1).toString('base64');
    conn.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: audio, textContent: 'hi' } }));
    const ev = await esl.waitFor(custom(uuid, 'mod_audio_fork::play_audio'), 'play_audio');
    const body = JSON.parse(ev.body) as Record<string, unknown>;
    expect(body).toEqual({ audioContentType: 'raw', sampleRate: 8000, textContent: 'hi', file: expect.stringMatching(new RegExp(`${uuid}_\\d+\\.tmp\\.r8$`)) });
    expect(await esl.api(`uuid_broadcast ${uuid} ${String(body.file)} aleg`)).toBe('+OK Message queued\n');
    expect((await esl.waitFor(complete(uuid, 'playback'), 'playback')).headers['Application-Response']).toBe('FILE PLAYED');
  });
});

describe('uuid_break', () => {
  it('ends a playback early with FILE PLAYED, answers No such channel and usage as FreeSWITCH', async () => {
    const uuid = await call('15550107');
    expect(await esl.api('uuid_break')).toBe('-USAGE: <uuid> [all]\n');
    expect(await esl.api(`uuid_break ${randomUUID()}`)).toBe('-ERR No such channel!\n');
    await esl.api(`uuid_broadcast ${uuid} silence_stream://20000 aleg`);
    await esl.waitFor((e) => e.uuid === uuid && e.name === 'CHANNEL_EXECUTE' && e.headers.Application === 'playback', 'playback');
    const startedAt = Date.now();
    expect(await esl.api(`uuid_break ${uuid} all`)).toBe('+OK\n');
    const done = await esl.waitFor(complete(uuid, 'playback'), 'playback complete');
    expect(Date.now() - startedAt).toBeLessThan(2000);
    expect(done.headers['Application-Response']).toBe('FILE PLAYED');
  });
});

describe('the simulated consumer', () => {
  it('40 answers only after a speak completes, and the stream carries its lines (the first sample for sample, the answer decoded)', async () => {
    const uuid = await call('15550140');
    await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 8k`);
    const conn = await server.connected();
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    // Nothing has been said to it: it stays silent (and does not hang up at talkMs).
    await new Promise((r) => setTimeout(r, 2000));
    expect(audioFrames(conn.frames).some(loud)).toBe(false);
    expect(sim.channel(uuid)!.state).toBe('answered');

    await esl.api(`uuid_broadcast ${uuid} 'speak::flite|kal|Hello, am I speaking with John Smith?' aleg`);
    const firstDone = await esl.waitFor(complete(uuid, 'speak'), 'speak complete');
    const firstDoneAt = Number(firstDone.headers['Event-Date-Timestamp']) / 1000;
    await waitUntil(() => sim.consumerSaid(uuid).length === 1, 'first line');
    const [line] = sim.consumerSaid(uuid);
    expect(line).toEqual(expect.objectContaining({ text: 'yes that is right', bargeIn: false }));
    expect(Date.parse(line!.at)).toBeGreaterThanOrEqual(firstDoneAt + 700);
    expect(audioFrames(conn.frames).filter((f) => f.at < firstDoneAt).some(loud)).toBe(false);

    await waitUntil(() => Date.now() > Date.parse(line!.at) + line!.durationMs + 300, 'end of the line');
    const mark = Date.now();
    await esl.api(`uuid_broadcast ${uuid} 'speak::flite|kal|For your security, please tell me your 5-digit ZIP code.' aleg`);
    await waitUntil(() => sim.consumerSaid(uuid).length === 2, 'second line');
    const second = sim.consumerSaid(uuid)[1]!;
    expect(second.text).toBe('three zero three zero one');
    await waitUntil(() => Date.now() > Date.parse(second.at) + second.durationMs + 800, 'end of the answer');

    // The first line is checked sample for sample: PocketSphinx hears an 8 kHz "yes" as "the of" at about one
    // start offset in ten (measured over 433 offsets), while the digits below decode at every offset.
    const voice = voices.get(`8000|${line!.text}`)!;
    const before = streamed(conn.frames, mark);
    const at = voiceAt(before, voice);
    expect(at).toBeGreaterThan(0);
    expect(before.subarray(at + voice.length).every((v) => v === 0)).toBe(true);
    const answer = await decode(conn.frames, 8000, mark);
    expect(answer.map((u) => u.text)).toEqual(['three zero three zero one']);
  });

  it('44 barges in while a long speak is still playing', async () => {
    const uuid = await call('15550144');
    await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 16k`);
    const conn = await server.connected();
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    const text = 'Hello, this is an automated assistant calling on behalf of the lender. Am I speaking with John Smith, the account holder on file with us today?';
    await esl.api(`uuid_broadcast ${uuid} 'speak::flite|kal|${text}' aleg`);
    const started = await esl.waitFor((e) => e.uuid === uuid && e.name === 'CHANNEL_EXECUTE' && e.headers.Application === 'speak', 'speak');
    await waitUntil(() => sim.consumerSaid(uuid).length === 1, 'barge-in');
    const line = sim.consumerSaid(uuid)[0]!;
    expect(line).toEqual(expect.objectContaining({ text: 'yes that is right', bargeIn: true }));
    const startedAt = Number(started.headers['Event-Date-Timestamp']) / 1000;
    expect(Date.parse(line.at) - startedAt).toBeGreaterThanOrEqual(900);
    expect(Date.parse(line.at) - startedAt).toBeLessThan(text.length * 60);
    expect(esl.events.some(complete(uuid, 'speak'))).toBe(false);
    // The product hears it and stops its turn.
    await waitUntil(() => Date.now() > Date.parse(line.at) + line.durationMs + 600, 'end of the line');
    conn.ws.send(JSON.stringify({ type: 'killAudio' }));
    await esl.waitFor(complete(uuid, 'speak'), 'speak broken');
    const heard = await decode(conn.frames, 16_000);
    expect(heard.map((u) => u.text)).toEqual(['yes that is right']);
  });

  it('without a fork, a 4x number hangs up at talkMs as before and says nothing', async () => {
    const uuid = await call('15550140');
    const hangup = await esl.waitFor((e) => e.uuid === uuid && e.name === 'CHANNEL_HANGUP_COMPLETE', 'hangup', 5000);
    expect(hangup.headers['Hangup-Cause']).toBe('NORMAL_CLEARING');
    expect(hangup.variables.sip_hangup_disposition).toBe('recv_bye');
    expect(sim.consumerSaid(uuid)).toEqual([]);
  });

  it('45 hangs up a few seconds after its script ends and the line is quiet', async () => {
    const uuid = await call('15550145');
    await esl.api(`uuid_audio_fork ${uuid} start ${server.url} mono 8k`);
    await esl.waitFor(custom(uuid, 'mod_audio_fork::connect'), 'connect');
    await esl.api(`uuid_broadcast ${uuid} 'speak::flite|kal|Am I speaking with John Smith?' aleg`);
    await waitUntil(() => sim.consumerSaid(uuid).length === 1, 'its line');
    const line = sim.consumerSaid(uuid)[0]!;
    expect(line.text).toBe('stop calling me');
    const hangup = await esl.waitFor((e) => e.uuid === uuid && e.name === 'CHANNEL_HANGUP_COMPLETE', 'hangup', 12_000);
    expect(hangup.variables.sip_hangup_disposition).toBe('recv_bye');
    expect(Number(hangup.headers['Event-Date-Timestamp']) / 1000 - (Date.parse(line.at) + line.durationMs)).toBeGreaterThanOrEqual(4900);
    expect(sim.consumerSaid(uuid)).toHaveLength(1);
  });
});

async function waitUntil(cond: () => boolean, label: string, timeoutMs = GUARD_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
