import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Client as TemporalClient } from '@temporalio/client';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { AppDeps } from '../../deps';
import type { Logger } from '../../lib/logger';
import { createSwitchCommands, type EslEvent, type EslManager } from '../../switch/esl';
import { createSpeech, spokenNumbersToDigits, type RecognitionStream, type SpeechLanguage, type SpeechRecognizer, type Utterance } from '../../speech';
import { AI_SPEECH_SIGNAL, type AiCallRef, type AiSpeech } from '../../contracts/ai-call';
import { aiCallWorkflowId } from '../../../workflows/ids';
import { recordCallEvent } from '../call-events/call-event.service';
import { MAX_SPEECH_CHARS } from './ai-call.rules';
import { sealSpeech } from './ai-speech.seal';
import { AUDIO_FORK_RATE, AUDIO_FORK_SUBPROTOCOL, verifyAudioForkPath } from './audio-fork';

/** What the gateway does with what it hears; the worker's wiring is createAudioGatewayHooks. */
export interface AudioGatewayHooks {
  /** One utterance to the call's AI workflow (its words already sealed). */
  deliver(ref: AiCallRef, speech: AiSpeech): Promise<void>;
  /** The consumer spoke over the AI: stop its turn, put it on the timeline. */
  bargeIn(ref: AiCallRef, at: Date, audioMs: number): Promise<void>;
  /** Follows the AI's speech on the leg (true while it speaks); answers the unsubscribe. */
  watchSpeaking(callUuid: string, onChange: (speaking: boolean) => void): () => void;
}

export interface AudioGatewayOptions {
  port: number;
  host?: string;
  secret: string;
  recognizer: SpeechRecognizer;
  /** Seals the words before they enter a workflow history (ai-speech.seal.ts). */
  seal: (text: string) => string;
  logger: Logger;
  hooks: AudioGatewayHooks;
}

export interface AudioGateway {
  port: number;
  /** Calls with a socket open now. */
  calls(): number;
  /** Stops accepting, closes every socket and waits for the utterances in flight to be delivered. */
  close(): Promise<void>;
}

const KILL_AUDIO = JSON.stringify({ type: 'killAudio' });
/** A 20 ms frame at 16 kHz is 640 bytes: anything near this is not the audio the module sends. */
const MAX_FRAME_BYTES = 64 * 1024;

function refuse(socket: Socket, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

/**
 * The AI's ears (docs/ai-calls.md, The audio path): a websocket server in the worker that takes
 * the consumer's leg from the switch's mod_audio_fork. The path must carry the call's HMAC token
 * (audio-fork.ts) and the socket the `audio.drachtio.org` subprotocol; anything else is refused
 * before the upgrade. Per call: the first text frame is the fork's metadata (the language), then
 * binary frames of 16-bit little-endian mono PCM at 8 kHz go to a recognition stream of this
 * worker's recognizer; each utterance (one without words as confidence 0) is delivered (the AI workflow's aiSpeech signal through
 * Temporal, so any worker's workflow code handles it) with its confidence and audio offsets, in
 * order. Speech over the AI's turn (barge-in) sends `killAudio` on the socket and stops the turn.
 * Neither the words nor the audio are logged or kept: the audio lives only in the stream's buffers.
 */
export async function startAudioGateway(opts: AudioGatewayOptions): Promise<AudioGateway> {
  const sessions = new Map<string, ForkSession>();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has(AUDIO_FORK_SUBPROTOCOL) ? AUDIO_FORK_SUBPROTOCOL : false),
  });
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { connection: 'close' }).end();
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    const ref = verifyAudioForkPath(path, opts.secret);
    const protocols = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim());
    if (!ref || !protocols.includes(AUDIO_FORK_SUBPROTOCOL)) {
      // The path holds the token: never logged.
      opts.logger.warn({ remote: req.socket.remoteAddress, reason: ref ? 'subprotocol' : 'token' }, 'audio fork refused');
      refuse(socket, ref ? '400 Bad Request' : '401 Unauthorized');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      // A fork started again for the same call (a reconnect) replaces the old socket.
      sessions.get(ref.callUuid)?.ws.close(1000, 'replaced');
      const session = new ForkSession(ref, ws, opts);
      sessions.set(ref.callUuid, session);
      void session.done.then(() => {
        if (sessions.get(ref.callUuid) === session) sessions.delete(ref.callUuid);
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    calls: () => sessions.size,
    async close() {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions.values()) s.ws.close(1001, 'gateway closing');
      await Promise.all([...sessions.values()].map((s) => s.done));
      wss.close();
      await closing;
    },
  };
}

/** One call's socket: metadata, audio frames, a recognition stream, and what it hears delivered in order. */
class ForkSession {
  readonly done: Promise<void>;
  private stream: RecognitionStream | null = null;
  private language: SpeechLanguage = 'en';
  private speaking = false;
  private firstFrameAt: number | null = null;
  private remainder: Buffer | null = null;
  private deliveries: Promise<void> = Promise.resolve();
  private readonly connectedAt = Date.now();
  private readonly unwatch: () => void;

  constructor(
    private readonly ref: AiCallRef,
    readonly ws: WebSocket,
    private readonly opts: AudioGatewayOptions,
  ) {
    this.unwatch = opts.hooks.watchSpeaking(ref.callUuid, (speaking) => {
      this.speaking = speaking;
      this.stream?.setAgentSpeaking(speaking);
    });
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    this.done = new Promise<void>((resolve) => {
      ws.once('close', () => resolve(this.finish()));
    });
    ws.on('error', (err) => opts.logger.warn({ call_uuid: ref.callUuid, err: err.message }, 'audio fork socket error'));
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    const bytesOf = (d: RawData) => (Buffer.isBuffer(d) ? d : Buffer.concat(Array.isArray(d) ? d : [Buffer.from(d)]));
    if (!isBinary) {
      // The fork's metadata (our own JSON from startAudioFork); only the language is read.
      if (this.stream) return;
      try {
        const meta = JSON.parse(bytesOf(data).toString('utf8')) as { language?: unknown };
        if (meta.language === 'es' || meta.language === 'en') this.language = meta.language;
      } catch {
        // Not ours: the defaults hold.
      }
      return;
    }
    const stream = this.openStream();
    if (!stream) return;
    let bytes = bytesOf(data);
    if (this.remainder) {
      bytes = Buffer.concat([this.remainder, bytes]);
      this.remainder = null;
    }
    if (bytes.length % 2 === 1) {
      this.remainder = bytes.subarray(bytes.length - 1);
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    if (bytes.length === 0) return;
    this.firstFrameAt ??= Date.now();
    // A copy: the socket's buffer may sit at an odd offset, and Int16Array needs an aligned one.
    const samples = new Int16Array(bytes.length / 2);
    for (let i = 0; i < samples.length; i += 1) samples[i] = bytes.readInt16LE(i * 2);
    stream.feed(samples);
  }

  private openStream(): RecognitionStream | null {
    if (this.stream) return this.stream;
    try {
      this.stream = this.opts.recognizer.openStream({ sampleRate: AUDIO_FORK_RATE, language: this.language, channel: this.ref.callUuid });
    } catch (err) {
      this.opts.logger.warn({ call_uuid: this.ref.callUuid, err: (err as Error).message }, 'no recognition stream for the call');
      this.ws.close(1011, 'no recognizer');
      return null;
    }
    const stream = this.stream;
    stream.setAgentSpeaking(this.speaking);
    stream.on('utterance', (u) => this.onUtterance(u));
    stream.on('barge_in', ({ atMs }) => this.onBargeIn(atMs));
    stream.on('error', (err) => this.opts.logger.warn({ call_uuid: this.ref.callUuid, err: err.message }, 'an utterance was not recognized'));
    return stream;
  }

  private onUtterance(u: Utterance): void {
    const words = u.text.trim();
    // Speech the recognizer made no words of is still a turn of the consumer's: delivered as
    // nothing heard (confidence 0), so the AI asks again instead of waiting in silence.
    const text = words === '' ? '' : this.language === 'en' ? spokenNumbersToDigits(words) : words;
    const streamStart = this.firstFrameAt ?? this.connectedAt;
    const speech: AiSpeech = {
      seq: `fork:${this.connectedAt}:${Math.round(u.startMs)}`,
      text: this.opts.seal(text.slice(0, MAX_SPEECH_CHARS)),
      at: new Date(Math.min(Date.now(), streamStart + u.endMs)).toISOString(),
      confidence: words === '' ? 0 : Math.round(u.confidence * 1000) / 1000,
      startMs: Math.round(u.startMs),
      endMs: Math.round(u.endMs),
    };
    this.deliveries = this.deliveries.then(() =>
      this.opts.hooks.deliver(this.ref, speech).catch((err: unknown) =>
        this.opts.logger.warn({ call_uuid: this.ref.callUuid, err: (err as Error).message }, 'an utterance was not delivered to the AI'),
      ),
    );
  }

  private onBargeIn(atMs: number): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(KILL_AUDIO);
    void this.opts.hooks
      .bargeIn(this.ref, new Date(), Math.round(atMs))
      .catch((err: unknown) => this.opts.logger.warn({ call_uuid: this.ref.callUuid, err: (err as Error).message }, 'barge-in not applied'));
  }

  private async finish(): Promise<void> {
    this.unwatch();
    await this.stream?.close().catch(() => undefined);
    await this.deliveries;
  }
}

/**
 * The worker's hooks: utterances signal the call's AI workflow through Temporal; a barge-in breaks
 * the leg's speech (uuid_break: what stops `speak` on FreeSWITCH; the killAudio frame is the fork
 * module's own) and writes `barge_in` on the timeline; the AI's speech is followed from this
 * worker's ESL events (CHANNEL_EXECUTE / CHANNEL_EXECUTE_COMPLETE of `speak` on the leg).
 */
export function createAudioGatewayHooks(deps: Pick<AppDeps, 'db' | 'logger'>, esl: EslManager, temporal: TemporalClient): AudioGatewayHooks {
  const cmds = createSwitchCommands(esl);
  return {
    async deliver(ref, speech) {
      await temporal.workflow.getHandle(aiCallWorkflowId(ref.tenantId, ref.callUuid)).signal<[AiSpeech]>(AI_SPEECH_SIGNAL, speech);
    },
    async bargeIn(ref, at, audioMs) {
      await cmds.breakMedia(ref.callUuid).catch(() => undefined);
      await recordCallEvent(deps, ref.tenantId, ref.callAttemptId, { event: 'barge_in', at, data: { audio_ms: audioMs }, dedupKey: `barge_in:${audioMs}` });
    },
    watchSpeaking(callUuid, onChange) {
      const onEvent = (ev: EslEvent) => {
        if (ev.uuid !== callUuid || ev.headers.Application !== 'speak') return;
        if (ev.name === 'CHANNEL_EXECUTE') onChange(true);
        else if (ev.name === 'CHANNEL_EXECUTE_COMPLETE') onChange(false);
      };
      esl.on('event', onEvent);
      return () => esl.off('event', onEvent);
    },
  };
}

/**
 * The worker's audio gateway from the configuration (AI_AUDIO_WS_PORT, AI_AUDIO_SECRET), with its
 * own speech engine (warmed up at once: the first install takes a minute). Answers its stop.
 */
export function runAudioGateway(deps: AppDeps, esl: EslManager, temporal: TemporalClient): () => Promise<void> {
  const { AI_AUDIO_WS_PORT: port, AI_AUDIO_SECRET: secret } = deps.config;
  if (port === undefined || !secret) return () => Promise.resolve();
  const logger = deps.logger.child({ component: 'ai-audio' });
  const speech = createSpeech(deps.config, (level, msg) => logger[level](msg));
  void speech.engine?.warmUp().catch((err: unknown) => logger.error({ err: (err as Error).message }, 'speech engine did not start'));
  const gateway = startAudioGateway({
    port,
    host: deps.config.HOST,
    secret,
    recognizer: speech.recognizer,
    seal: (text) => sealSpeech(deps.box, text),
    logger,
    hooks: createAudioGatewayHooks(deps, esl, temporal),
  }).then(
    (g) => {
      logger.info({ port: g.port }, 'AI audio gateway listening');
      return g;
    },
    (err: unknown) => {
      logger.error({ err: (err as Error).message, port }, 'AI audio gateway could not start; AI calls forked to this worker are refused');
      return null;
    },
  );
  return async () => {
    await (await gateway)?.close();
    await speech.close();
  };
}
