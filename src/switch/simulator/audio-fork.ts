import { unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import type { Clock, ClockTimer } from './clock';

/**
 * drachtio's mod_audio_fork (modules/mod_audio_fork in drachtio-freeswitch-modules), as far as the
 * simulator models it: `uuid_audio_fork` attaches a "bug" to a channel that streams the far end's
 * audio (mix type mono) to a websocket as 16-bit little-endian linear PCM, one binary frame per
 * 20 ms, and turns the server's JSON text frames into CUSTOM `mod_audio_fork::*` events.
 */

/** The module's own usage text (FORK_API_SYNTAX). */
export const FORK_USAGE =
  '-USAGE: <uuid> [start | stop | send_text | pause | resume | graceful-shutdown ] [wss-url | path] [mono | mixed | stereo] [8000 | 16000 | 24000 | 32000 | 64000] [bugname] [metadata]\n';
export const FORK_FAILED = '-ERR Operation Failed\n';
export const FORK_OK = '+OK Success\n';
/** MY_BUG_NAME. */
export const DEFAULT_BUG = 'audio_fork';
/** The websocket subprotocol the module advertises (MOD_AUDIO_FORK_SUBPROTOCOL_NAME's default). */
export const FORK_SUBPROTOCOL = 'audio.drachtio.org';
const FRAME_MS = 20;
/** Frames sent at once after the event loop stalled; beyond that the stall's audio is dropped, as a media bug's buffer overruns. */
const MAX_CATCH_UP = 100;

/**
 * switch_separate_string(cmd, ' ', argv, max): runs of spaces separate, single quotes group (and
 * are removed), and the last slot takes the rest of the line as it is.
 */
export function separateString(input: string, max: number): string[] {
  const out: string[] = [];
  let i = 0;
  const s = input;
  while (i < s.length && out.length < max) {
    while (s[i] === ' ') i++;
    if (i >= s.length) break;
    if (out.length === max - 1) {
      out.push(s.slice(i));
      break;
    }
    let cur = '';
    let quoted = false;
    for (; i < s.length; i++) {
      const c = s[i]!;
      if (c === '\\' && (s[i + 1] === "'" || s[i + 1] === '\\')) {
        cur += s[++i];
        continue;
      }
      if (c === "'") {
        quoted = !quoted;
        continue;
      }
      if (c === ' ' && !quoted) break;
      cur += c;
    }
    out.push(cur);
  }
  return out;
}

export type ForkCommand =
  | { action: 'start'; uuid: string; url: string; mix: string; rate: string; bugname: string; metadata?: string }
  | { action: 'stop'; uuid: string; bugname: string; text?: string }
  | { action: 'send_text'; uuid: string; bugname: string; text?: string }
  | { action: 'pause' | 'resume' | 'graceful-shutdown'; uuid: string; bugname: string }
  | { action: 'other'; uuid: string };

const isJsonish = (s: string) => s.startsWith('{') || s.startsWith('[');

/** fork_function's argument handling; a string is the answer for a syntax error. */
export function parseForkCommand(rest: string): ForkCommand | string {
  const argv = separateString(rest, 7);
  const [uuid = '', action = ''] = argv;
  if (argv.length < 2 || (action === 'start' && argv.length < 4)) return FORK_USAGE;
  const verb = action.toLowerCase();
  if (verb === 'stop' || verb === 'send_text') {
    let bugname = DEFAULT_BUG;
    let text: string | undefined;
    if (argv.length > 3) [bugname, text] = [argv[2]!, argv[3]!];
    else if (argv.length > 2) {
      if (isJsonish(argv[2]!)) text = argv[2]!;
      else bugname = argv[2]!;
    }
    return { action: verb, uuid, bugname, text };
  }
  if (verb === 'pause' || verb === 'resume' || verb === 'graceful-shutdown') return { action: verb, uuid, bugname: argv[2] ?? DEFAULT_BUG };
  // strcmp: "start" is case-sensitive in the module, unlike the other verbs.
  if (action === 'start') {
    if (argv.length < 5) return { action: 'other', uuid };
    let bugname = DEFAULT_BUG;
    let metadata: string | undefined;
    if (argv.length > 6) [bugname, metadata] = [argv[5]!, argv[6]!];
    else if (argv.length > 5) {
      if (isJsonish(argv[5]!)) metadata = argv[5]!;
      else bugname = argv[5]!;
    }
    return { action: 'start', uuid, url: argv[2]!, mix: argv[3]!, rate: argv[4]!, bugname, metadata };
  }
  return { action: 'other', uuid };
}

/** The sampling rate asked for: 8k, 16k or a number of Hz that is a multiple of 8000 (up to 64000), else null. */
export function forkRate(arg: string): number | null {
  if (arg === '8k') return 8000;
  if (arg === '16k') return 16_000;
  const n = /^\d+$/.test(arg) ? Number(arg) : NaN;
  return n > 0 && n <= 64_000 && n % 8000 === 0 ? n : null;
}

/** parse_ws_uri: ws, wss, http or https (the last two as ws and wss); null when the scheme or host is missing. */
export function forkUrl(arg: string): string | null {
  const m = /^(wss?|https?):\/\/(.+)$/i.exec(arg);
  if (!m) return null;
  const scheme = m[1]!.toLowerCase().replace(/^http/, 'ws');
  try {
    const url = new URL(`${scheme}://${m[2]}`);
    return url.hostname ? url.toString() : null;
  } catch {
    return null;
  }
}

export interface ForkHost {
  clock: Clock;
  /** Fires CUSTOM `<subclass>` with the channel's data and an optional body. */
  emit(subclass: string, body?: string): void;
  /** killAudio: stops what the channel is playing (CF_BREAK). */
  breakMedia(): void;
  /** The far end's audio: `count` samples at `rate` starting at clock time `fromMs`. */
  render(rate: number, fromMs: number, count: number): Int16Array;
  /** MOD_AUDIO_BASIC_AUTH_USERNAME / _PASSWORD channel variables. */
  basicAuth?: { username: string; password: string };
  tempDir: string;
}

let playCount = 0;

/** One attached bug: its websocket and the paced stream of the channel's far-end audio. */
export class AudioForkSession {
  private ws: WebSocket | undefined;
  private timer: ClockTimer | undefined;
  private startAt = 0;
  private frame = 0;
  private paused = false;
  private closing = false;
  private readonly files: string[] = [];
  /** Frames sent, for the channel snapshot. */
  framesSent = 0;
  state: 'connecting' | 'open' | 'failed' | 'closed' = 'connecting';

  constructor(
    readonly uuid: string,
    readonly bugname: string,
    readonly url: string,
    readonly rate: number,
    private readonly metadata: string | undefined,
    private readonly host: ForkHost,
  ) {}

  connect(): void {
    const headers: Record<string, string> = {};
    const auth = this.host.basicAuth;
    if (auth) headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    const ws = new WebSocket(this.url, FORK_SUBPROTOCOL, { headers, handshakeTimeout: 5000 });
    this.ws = ws;
    ws.binaryType = 'nodebuffer';
    ws.on('open', () => {
      if (this.closing) return;
      this.state = 'open';
      this.host.emit('mod_audio_fork::connect');
      if (this.metadata) ws.send(this.metadata);
      this.startAt = this.host.clock.now();
      this.frame = 0;
      this.tick();
    });
    ws.on('message', (data: Buffer, isBinary) => {
      if (!isBinary && !this.closing) this.onText(data.toString('utf8'));
    });
    ws.on('error', (err) => {
      if (this.state !== 'connecting' || this.closing) return;
      this.state = 'failed';
      this.host.emit('mod_audio_fork::connect_failed', JSON.stringify({ reason: err.message }));
    });
    ws.on('close', () => {
      this.stopPacing();
      if (this.state === 'open' && !this.closing) this.host.emit('mod_audio_fork::disconnect');
      if (this.state !== 'failed') this.state = 'closed';
    });
  }

  sendText(text: string): void {
    if (this.state === 'open') this.ws!.send(text);
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
  }

  /** fork_session_cleanup: the final text, if any, then a normal close; temp files of playAudio go. */
  close(text?: string): void {
    if (this.closing) return;
    this.closing = true;
    this.stopPacing();
    if (this.state === 'open' && text) this.ws!.send(text);
    if (this.ws && (this.state === 'open' || this.state === 'connecting')) {
      if (this.state === 'open') this.ws.close(1000);
      else this.ws.terminate();
    }
    for (const f of this.files) {
      try {
        unlinkSync(f);
      } catch {
        // already gone
      }
    }
  }

  private stopPacing(): void {
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sends every 20 ms frame whose end has passed, then waits for the next one's end. */
  private tick(): void {
    this.timer = undefined;
    if (this.state !== 'open' || this.closing) return;
    const now = this.host.clock.now();
    const due = Math.floor((now - this.startAt) / FRAME_MS);
    if (due - this.frame > MAX_CATCH_UP) this.frame = due - MAX_CATCH_UP;
    const samples = (this.rate * FRAME_MS) / 1000;
    for (; this.frame < due; this.frame++) {
      if (this.paused) continue;
      const pcm = this.host.render(this.rate, this.startAt + this.frame * FRAME_MS, samples);
      this.ws!.send(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), { binary: true });
      this.framesSent++;
    }
    this.timer = this.host.clock.setTimeout(() => this.tick(), this.startAt + (this.frame + 1) * FRAME_MS - now);
  }

  /** processIncomingMessage: JSON text frames with a `type`; anything else is ignored, as the module logs and drops it. */
  private onText(message: string): void {
    let json: unknown;
    try {
      json = JSON.parse(message);
    } catch {
      return;
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return;
    const msg = json as Record<string, unknown>;
    const data = msg.data;
    const body = data === undefined ? undefined : JSON.stringify(data);
    switch (msg.type) {
      case 'killAudio':
        this.host.emit('mod_audio_fork::kill_audio');
        this.host.breakMedia();
        return;
      case 'transcription':
        this.host.emit('mod_audio_fork::transcription', body);
        return;
      case 'transfer':
        this.host.emit('mod_audio_fork::transfer', body);
        return;
      case 'disconnect':
        this.host.emit('mod_audio_fork::disconnect', body);
        return;
      case 'error':
        this.host.emit('mod_audio_fork::error', body);
        return;
      case 'json':
        this.host.emit('mod_audio_fork::json', JSON.stringify(msg));
        return;
      case 'playAudio':
        this.playAudio(data);
        return;
      default:
    }
  }

  /**
   * playAudio: the module does not play anything; it writes the audio to a temp file and reports
   * the file (audioContent replaced by `file`) in `mod_audio_fork::play_audio` for the application
   * to play. The files are removed when the fork closes.
   */
  private playAudio(data: unknown): void {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return;
    const d = { ...(data as Record<string, unknown>) };
    const content = d.audioContent;
    delete d.audioContent;
    const type = d.audioContentType;
    let ext: string | null = null;
    if (type === 'raw') {
      const rates: Record<number, string> = { 8000: '.r8', 16000: '.r16', 24000: '.r24', 32000: '.r32', 48000: '.r48', 64000: '.r64' };
      ext = rates[Number(d.sampleRate)] ?? '.r16';
    } else if (type === 'wave' || type === 'wav') ext = '.wav';
    if (ext && typeof content === 'string') {
      const file = path.join(this.host.tempDir, `${this.uuid}_${playCount++}.tmp${ext}`);
      try {
        writeFileSync(file, Buffer.from(content, 'base64'));
        this.files.push(file);
        d.file = file;
      } catch {
        // the event still goes, without a file, as when the module cannot write it
      }
    }
    this.host.emit('mod_audio_fork::play_audio', JSON.stringify(d));
  }
}
