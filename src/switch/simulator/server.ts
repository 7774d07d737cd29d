import { randomUUID } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SpeechEngine } from '../../speech/engine-process';
import { OfflineSpeechSynthesizer } from '../../speech/offline';
import type { SpeechSynthesizer } from '../../speech/types';
import { realClock, type Clock, type ClockTimer } from './clock';
import type { ConsumerLine } from './consumer';
import {
  apiResponse,
  AUTH_REQUEST,
  commandReply,
  CommandReader,
  DISCONNECT_NOTICE,
  serializeEvent,
  type EslCommand,
  type EventFormat,
  type SwitchEvent,
} from './protocol';
import { Subscription } from './subscription';
import { SwitchCore, type ChannelSnapshot, type SpokenText } from './switch';

export interface SwitchSimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Event-socket password; default `ClueCon`, FreeSWITCH's default. */
  password?: string;
  /** Ringing time of consumer legs; default SIM_RING_MS or 500. */
  ringMs?: number;
  /** How long an answered consumer talks before hanging up; default SIM_TALK_MS or 3000. */
  talkMs?: number;
  /** Delay from answer to the AMD verdict; default SIM_AMD_MS or 0. */
  amdMs?: number;
  /** Length of a played prompt; default SIM_PROMPT_MS or 1000. */
  promptMs?: number;
  /** Time `speak` takes per character of its text; default SIM_SPEECH_MS_PER_CHAR or 60 (about flite's pace). */
  speechMsPerChar?: number;
  /** Cap of a recording's audio; default 60 s. */
  maxRecordMs?: number;
  /**
   * Interval of the HEARTBEAT event sent to connections subscribed to it (FreeSWITCH's
   * `event-heartbeat-interval`); default SIM_HEARTBEAT_MS or 20000, FreeSWITCH's default.
   */
  heartbeatMs?: number;
  /** Base of relative `uuid_record` paths; default `<tmpdir>/dialer-switch-sim/recordings`. */
  recordingsDir?: string;
  /** Default the real clock; tests pass createFakeClock(). */
  clock?: Clock;
  hostname?: string;
  /**
   * The product's switch directory (mod_xml_curl `gateway-url`), e.g. `http://127.0.0.1:8080/switch/directory`;
   * default SIM_DIRECTORY_URL. Without one every REGISTER fails (nothing can register).
   */
  directoryUrl?: string;
  /** mod_xml_curl `gateway-credentials` (`user:password`, HTTP basic auth); default SIM_DIRECTORY_CREDENTIALS. */
  directoryCredentials?: string;
  /** mod_audio_fork loaded (`uuid_audio_fork`); default true, SIM_AUDIO_FORK=0 unloads it. */
  audioFork?: boolean;
  /**
   * The simulated consumers' voice (docs/simulated-consumer.md); default the product's offline
   * synthesizer (eSpeak NG), started on the first line a consumer says and stopped with the simulator.
   */
  synthesizer?: SpeechSynthesizer;
  /** Where the default synthesizer's engine is installed; default TOOLS_DIR or `<repo>/.tools`. */
  toolsDir?: string;
  /** Pause between the end of what the switch plays and a simulated consumer's answer; default SIM_CONSUMER_REPLY_MS or 800. */
  consumerReplyMs?: number;
  /** How long a simulated consumer mid-script waits for the switch to speak before hanging up; default SIM_CONSUMER_PATIENCE_MS or 30000. */
  consumerPatienceMs?: number;
}

/** A simulated softphone's REGISTER (digest-authenticated against the directory). */
export interface SoftphoneRegistration {
  extension: string;
  /** Realm and address-of-record host; default the simulator's hostname. */
  domain?: string;
  username: string;
  password: string;
  /** Default 3600; not refreshed within it, the registration expires (sofia::expire). */
  expiresSec?: number;
}

export interface SwitchSimulator {
  readonly host: string;
  readonly port: number;
  readonly password: string;
  readonly clock: Clock;
  /** Runs an api command in process, exactly as `api <command>` over the socket would. */
  api(command: string): Promise<string>;
  /**
   * A softphone REGISTERs through the directory (sim_register); resolves `+OK registered <aor>`, rejects
   * with the switch's refusal (`-ERR 403 Forbidden` for an unknown user or a wrong password).
   */
  register(reg: SoftphoneRegistration): Promise<string>;
  /** The softphone unregisters (`1001` on every domain, or `1001@domain`). */
  unregister(extension: string): void;
  /** Points the switch at the product's directory (after start, once the API's port is known). */
  useDirectory(url: string | null, credentials?: string): void;
  /** Agent legs to the extension ring `ms` before the softphone answers (0: at once). */
  setAnswerDelay(extension: string, ms: number): void;
  /** Registered `<extension>@<domain>` entries. */
  registrations(): string[];
  /** The consumer presses keys: one DTMF event per digit. */
  dtmf(uuid: string, digits: string): void;
  /** The far end hangs up (recv_bye). */
  remoteHangup(uuid: string, cause?: string): void;
  /**
   * A caller (`from`) dials a DID (`to`): the channel arrives parked and unanswered as the inbound
   * dialplan leaves it (CHANNEL_CREATE, CHANNEL_PARK, dd_direction=inbound). Answers its uuid.
   */
  inboundCall(call: { from: string; to: string; uuid?: string }): string;
  channel(uuid: string): ChannelSnapshot | undefined;
  channels(): ChannelSnapshot[];
  /** Every text `speak` said to a channel (engine, voice, text, when it began), also after its hangup. */
  spoken(uuid: string): SpokenText[];
  /** What the simulated consumer said on a channel (text, when, how long, barge-in), also after its hangup. */
  consumerSaid(uuid: string): ConsumerLine[];
  /** Authenticated and unauthenticated client connections now open (frozen ones included). */
  connectionCount(): number;
  /**
   * Makes every connection open now half-open, as a firewall that silently drops the flow: the
   * simulator stops reading from and writing to those sockets (replies and events are lost)
   * without closing them. Connections made afterwards work normally. Answers how many froze.
   */
  freezeConnections(): number;
  /** In-process tap on every event the switch fires (whatever the subscriptions). */
  onEvent(listener: (ev: SwitchEvent) => void): () => void;
  /** Closes the listener, drops every client connection and every call. */
  stop(): Promise<void>;
}

function envMs(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

class Session {
  authed = false;
  readonly sub = new Subscription();
  private readonly reader = new CommandReader();
  private readonly queue: EslCommand[] = [];
  private busy = false;
  private holding = false;
  private held: string[] = [];
  closed = false;
  frozen = false;

  constructor(
    readonly socket: net.Socket,
    private readonly sim: SimulatorServer,
  ) {}

  onData(chunk: Buffer): void {
    if (this.closed || this.frozen) return;
    try {
      this.queue.push(...this.reader.push(chunk));
    } catch {
      this.close();
      return;
    }
    this.pump();
  }

  private pump(): void {
    while (!this.busy && !this.closed && this.queue.length > 0) this.handle(this.queue.shift()!);
  }

  write(data: string): void {
    if (!this.closed && !this.frozen && !this.socket.destroyed) this.socket.write(data);
  }

  freeze(): void {
    this.frozen = true;
    // Unread bytes stay in the kernel: the client's writes still succeed until its window fills.
    this.socket.pause();
  }

  /** Events fired while this connection's own command runs go out after that command's reply. */
  deliver(data: string): void {
    if (this.holding) this.held.push(data);
    else this.write(data);
  }

  private release(): void {
    this.holding = false;
    const held = this.held;
    this.held = [];
    for (const d of held) this.write(d);
  }

  private handle(cmd: EslCommand): void {
    this.holding = true;
    let reply: string | Promise<string>;
    try {
      reply = this.dispatch(cmd);
    } catch {
      reply = commandReply('-ERR command failed');
    }
    if (typeof reply === 'string') {
      this.write(reply);
      this.release();
      return;
    }
    this.busy = true;
    this.release();
    void reply.then((text) => {
      this.write(text);
      this.busy = false;
      this.pump();
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.end();
  }

  private dispatch(cmd: EslCommand): string | Promise<string> {
    const line = cmd.line;
    const space = line.indexOf(' ');
    const verb = (space < 0 ? line : line.slice(0, space)).toLowerCase();
    const rest = space < 0 ? '' : line.slice(space + 1).trim();
    if (!this.authed) {
      if (verb === 'auth' && rest === this.sim.password) {
        this.authed = true;
        return commandReply('+OK accepted');
      }
      // A wrong password (or any command before auth) ends the connection, as FreeSWITCH does.
      this.write(commandReply('-ERR invalid'));
      this.write(DISCONNECT_NOTICE);
      this.close();
      return '';
    }
    const core = this.sim.core;
    switch (verb) {
      case 'auth':
        return commandReply('+OK accepted');
      case 'api': {
        let immediate: string | undefined;
        let resolve: ((body: string) => void) | undefined;
        core.execute(rest, (body) => {
          if (resolve) resolve(apiResponse(body));
          else immediate = apiResponse(body);
        });
        if (immediate !== undefined) return immediate;
        return new Promise<string>((r) => {
          resolve = r;
        });
      }
      case 'bgapi': {
        const jobUuid = cmd.headers['Job-UUID'] || randomUUID();
        const sp = rest.indexOf(' ');
        const command = sp < 0 ? rest : rest.slice(0, sp);
        const args = sp < 0 ? '' : rest.slice(sp + 1);
        core.execute(rest, (body) => this.sim.fire(core.backgroundJob(jobUuid, command, args, body)));
        return commandReply(`+OK Job-UUID: ${jobUuid}`, [['Job-UUID', jobUuid]]);
      }
      case 'event': {
        const [format = '', ...words] = rest.split(/\s+/).filter(Boolean);
        const fmt = format.toLowerCase();
        if (fmt === 'xml') return commandReply('-ERR xml event format is not supported by the simulator');
        if (fmt !== 'plain' && fmt !== 'json') return commandReply('-ERR invalid format');
        if (!this.sub.enable(fmt, words)) return commandReply('-ERR no keywords supplied');
        this.sim.syncHeartbeat();
        return commandReply(`+OK event listener enabled ${fmt}`);
      }
      case 'nixevent':
        this.sub.nix(rest.split(/\s+/).filter(Boolean));
        this.sim.syncHeartbeat();
        return commandReply('+OK events nixed');
      case 'noevents':
        this.sub.clear();
        this.sim.syncHeartbeat();
        return commandReply('+OK no longer listening for events');
      case 'filter': {
        const parts = rest.split(/\s+/).filter(Boolean);
        if (parts[0]?.toLowerCase() === 'delete') {
          if (!parts[1]) return commandReply('-ERR invalid syntax');
          this.sub.deleteFilter(parts[1], parts.length > 2 ? parts.slice(2).join(' ') : undefined);
          return commandReply(`+OK filter deleted. [${parts[1]}]=[${parts.slice(2).join(' ')}]`);
        }
        if (parts.length < 2) return commandReply('-ERR invalid syntax');
        this.sub.addFilter(parts[0]!, parts.slice(1).join(' '));
        return commandReply(`+OK filter added. [${parts[0]}]=[${parts.slice(1).join(' ')}]`);
      }
      case 'sendmsg':
        return commandReply(core.sendmsg(rest, cmd.headers));
      case 'sendevent': {
        const name = (rest.split(/\s+/)[0] ?? '').toUpperCase();
        if (!name) return commandReply('-ERR invalid event');
        const ev = core.customEvent(name, cmd.headers, cmd.body);
        this.sim.fire(ev);
        return commandReply(`+OK ${randomUUID()}`);
      }
      case 'log':
        return commandReply(`+OK log level ${rest || 'debug'} [7]`);
      case 'nolog':
        return commandReply('+OK no longer logging');
      case 'linger':
        return commandReply('+OK will linger');
      case 'nolinger':
        return commandReply('+OK will not linger');
      case 'exit':
        this.write(commandReply('+OK bye'));
        this.write(DISCONNECT_NOTICE);
        this.close();
        return '';
      default:
        return commandReply('-ERR command not found');
    }
  }
}

class SimulatorServer {
  readonly core: SwitchCore;
  readonly sessions = new Set<Session>();
  readonly taps = new Set<(ev: SwitchEvent) => void>();
  private readonly clock: Clock;
  private readonly startedAt: number;
  private heartbeatTimer: ClockTimer | undefined;

  constructor(
    readonly password: string,
    private readonly heartbeatMs: number,
    coreOpts: Omit<ConstructorParameters<typeof SwitchCore>[0], 'emit'>,
  ) {
    this.core = new SwitchCore({ ...coreOpts, emit: (ev) => this.fire(ev) });
    this.clock = coreOpts.clock;
    this.startedAt = coreOpts.clock.now();
  }

  /**
   * FreeSWITCH fires HEARTBEAT whether anyone listens or not; the simulator keeps its timer only
   * while a connection subscribes, so a fake clock shows no pending timer that nobody can observe.
   */
  syncHeartbeat(): void {
    const wanted = this.heartbeatMs > 0 && [...this.sessions].some((s) => s.authed && !s.closed && !s.frozen && s.sub.listensTo('HEARTBEAT'));
    if (wanted && !this.heartbeatTimer) this.armHeartbeat();
    if (!wanted && this.heartbeatTimer) {
      this.clock.clearTimeout(this.heartbeatTimer);
      this.heartbeatTimer = undefined;
    }
  }

  stopHeartbeat(): void {
    if (this.heartbeatTimer) this.clock.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  private armHeartbeat(): void {
    this.heartbeatTimer = this.clock.setTimeout(() => {
      this.heartbeatTimer = undefined;
      this.fire(this.heartbeat());
      this.syncHeartbeat();
    }, this.heartbeatMs);
  }

  /** switch_core.c send_heartbeat()'s headers. */
  private heartbeat(): SwitchEvent {
    let ms = this.clock.now() - this.startedAt;
    const uptimeMs = ms;
    const unit = (n: number) => {
      const v = Math.floor(ms / n);
      ms -= v * n;
      return v;
    };
    const [years, days, hours, minutes, seconds] = [365 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000].map(unit);
    const sessions = String(this.core.snapshots().length);
    return this.core.customEvent('HEARTBEAT', {
      'Event-Info': 'System Ready',
      'Up-Time': `${years} years, ${days} days, ${hours} hours, ${minutes} minutes, ${seconds} seconds, ${ms} milliseconds, 0 microseconds`,
      'FreeSWITCH-Version': '1.10.12-release+dialer-switch-simulator',
      'Uptime-msec': String(uptimeMs),
      'Session-Count': sessions,
      'Max-Sessions': '1000',
      'Session-Per-Sec': '30',
      'Idle-CPU': '99.000000',
      'Heartbeat-Interval': String(Math.round(this.heartbeatMs / 1000)),
    });
  }

  fire(ev: SwitchEvent): void {
    const cache: Partial<Record<EventFormat, string>> = {};
    for (const s of this.sessions) {
      if (!s.authed || s.closed || !s.sub.wants(ev)) continue;
      const format = s.sub.format!;
      s.deliver((cache[format] ??= serializeEvent(ev, format)));
    }
    for (const tap of this.taps) tap(ev);
  }
}

/** Starts the FreeSWITCH event-socket simulator (CONTRACT.md section 2) on a TCP port. */
export async function startSwitchSimulator(options: SwitchSimulatorOptions = {}): Promise<SwitchSimulator> {
  const host = options.host ?? '127.0.0.1';
  const password = options.password ?? 'ClueCon';
  const clock = options.clock ?? realClock;
  let ownEngine: SpeechEngine | undefined;
  let synthesizer = options.synthesizer;
  const voices = new Map<string, Promise<Int16Array>>();
  const synthesize = (text: string, rate: number): Promise<Int16Array> => {
    const key = `${rate}|${text}`;
    let voice = voices.get(key);
    if (!voice) {
      if (!synthesizer) {
        ownEngine = new SpeechEngine({ toolsDir: options.toolsDir ?? (process.env.TOOLS_DIR?.trim() || path.resolve(__dirname, '../../../.tools')) });
        synthesizer = new OfflineSpeechSynthesizer(ownEngine);
      }
      voice = synthesizer.synthesize(text, { language: 'en', sampleRate: rate }).then((s) => s.pcm.samples);
      // A failed synthesis is tried again next time instead of being remembered.
      voice.catch(() => voices.delete(key));
      voices.set(key, voice);
    }
    return voice;
  };
  const sim = new SimulatorServer(password, options.heartbeatMs ?? envMs('SIM_HEARTBEAT_MS', 20_000), {
    clock,
    ringMs: options.ringMs ?? envMs('SIM_RING_MS', 500),
    talkMs: options.talkMs ?? envMs('SIM_TALK_MS', 3000),
    amdMs: options.amdMs ?? envMs('SIM_AMD_MS', 0),
    promptMs: options.promptMs ?? envMs('SIM_PROMPT_MS', 1000),
    speechMsPerChar: options.speechMsPerChar ?? envMs('SIM_SPEECH_MS_PER_CHAR', 60),
    maxRecordMs: options.maxRecordMs ?? 60_000,
    recordingsDir: options.recordingsDir ?? path.join(os.tmpdir(), 'dialer-switch-sim', 'recordings'),
    hostname: options.hostname ?? 'switch-simulator',
    audioFork: options.audioFork ?? process.env.SIM_AUDIO_FORK?.trim() !== '0',
    synthesize,
    consumerReplyMs: options.consumerReplyMs ?? envMs('SIM_CONSUMER_REPLY_MS', 800),
    consumerPatienceMs: options.consumerPatienceMs ?? envMs('SIM_CONSUMER_PATIENCE_MS', 30_000),
    tempDir: os.tmpdir(),
  });

  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    const session = new Session(socket, sim);
    sim.sessions.add(session);
    socket.on('data', (chunk: Buffer) => session.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      session.closed = true;
      sim.sessions.delete(session);
      sim.syncHeartbeat();
    });
    socket.write(AUTH_REQUEST);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const directoryUrl = options.directoryUrl ?? (process.env.SIM_DIRECTORY_URL?.trim() || undefined);
  if (directoryUrl) {
    sim.core.registrar.useDirectory({ url: directoryUrl, credentials: options.directoryCredentials ?? (process.env.SIM_DIRECTORY_CREDENTIALS || undefined) });
  }

  const apiOrThrow = (command: string) => {
    let out = '';
    sim.core.execute(command, (body) => {
      out = body;
    });
    if (out.startsWith('-')) throw new Error(`${command}: ${out.trim()}`);
  };

  return {
    host,
    port,
    password,
    clock,
    api: (command) => sim.core.api(command),
    async register(reg) {
      const target = reg.domain ? `${reg.extension}@${reg.domain}` : reg.extension;
      const answer = await sim.core.api(`sim_register ${target} ${reg.username} ${reg.password}${reg.expiresSec !== undefined ? ` ${reg.expiresSec}` : ''}`);
      if (!answer.startsWith('+OK')) throw new Error(`REGISTER ${target}: ${answer.trim()}`);
      return answer.trim();
    },
    unregister: (extension) => apiOrThrow(`sim_unregister ${extension}`),
    useDirectory: (url, credentials) => sim.core.registrar.useDirectory(url ? { url, credentials } : null),
    setAnswerDelay: (extension, ms) => apiOrThrow(`sim_answer_delay ${extension} ${ms}`),
    registrations: () => sim.core.registrar.list(),
    dtmf: (uuid, digits) => apiOrThrow(`sim_dtmf ${uuid} ${digits}`),
    remoteHangup: (uuid, cause) => apiOrThrow(`sim_hangup ${uuid}${cause ? ` ${cause}` : ''}`),
    inboundCall({ from, to, uuid }) {
      const id = uuid ?? randomUUID();
      apiOrThrow(`sim_inbound ${from} ${to} ${id}`);
      return id;
    },
    channel: (uuid) => sim.core.snapshot(uuid),
    spoken: (uuid) => sim.core.spokenTo(uuid),
    consumerSaid: (uuid) => sim.core.consumerSaidTo(uuid),
    channels: () => sim.core.snapshots(),
    connectionCount: () => sim.sessions.size,
    freezeConnections() {
      for (const s of sim.sessions) s.freeze();
      sim.syncHeartbeat();
      return sim.sessions.size;
    },
    onEvent(listener) {
      sim.taps.add(listener);
      return () => sim.taps.delete(listener);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sim.sessions) {
          s.closed = true;
          s.socket.destroy();
        }
        sim.sessions.clear();
        sim.stopHeartbeat();
        sim.core.reset();
        server.close(() => {
          if (ownEngine) void ownEngine.close().then(() => resolve(), () => resolve());
          else resolve();
        });
      }),
  };
}
