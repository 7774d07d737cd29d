import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AudioForkSession, FORK_FAILED, FORK_OK, forkRate, forkUrl, parseForkCommand } from './audio-fork';
import type { Clock, ClockTimer } from './clock';
import { SimulatedConsumer, type ConsumerLine } from './consumer';
import { scriptFor } from './consumer-scripts';
import { parseDialString, parseOriginate, splitArgs, type DialString, type OriginateRequest } from './dialstring';
import { HANGUP_CAUSES, outcomeFor, type AmdVerdict, type Outcome } from './plan';
import type { SwitchEvent } from './protocol';
import { GATEWAY_PROFILE, GatewayTable } from './gateways';
import { Registrar } from './registrar';
import { wavBuffer } from './wav';

/**
 * The simulated switch: channels, registrations and the api commands that act on them. It knows
 * nothing about sockets; every state change is reported through `emit` as a FreeSWITCH event
 * (see README of this directory for the event flow of each call shape).
 */

export type LegKind = 'pstn' | 'agent';
export type EavesdropMode = 'listen' | 'whisper' | 'barge';
type Phase = 'ringing' | 'answered' | 'hangup';
type HangupDisposition = 'send_bye' | 'recv_bye' | 'send_cancel' | 'recv_cancel' | 'recv_refuse';

export interface SwitchCoreOptions {
  clock: Clock;
  ringMs: number;
  talkMs: number;
  /** Delay from answer to the AMD verdict; 0 reports it right after CHANNEL_ANSWER. */
  amdMs: number;
  /** Length of a played prompt (playback, uuid_broadcast) unless it is `silence_stream://<ms>`. */
  promptMs: number;
  /** Speech takes this long per character of its text (speak). */
  speechMsPerChar: number;
  /** Where relative uuid_record paths land. */
  recordingsDir: string;
  /** Cap of a written recording's audio. */
  maxRecordMs: number;
  hostname: string;
  /** mod_audio_fork loaded (uuid_audio_fork, module_exists). */
  audioFork: boolean;
  /** The simulated consumers' voice (numbers ending 40-49 with a fork): text to PCM at a rate. */
  synthesize: (text: string, rate: number) => Promise<Int16Array>;
  /** Pause between the end of what the switch plays and a simulated consumer's answer. */
  consumerReplyMs: number;
  /** How long a simulated consumer mid-script waits for the switch to say something before hanging up. */
  consumerPatienceMs: number;
  /** Where playAudio's files go (FreeSWITCH's temp_dir). */
  tempDir: string;
  emit: (ev: SwitchEvent) => void;
}

/** A speak, playback or sleep running on a channel; `end` completes it now (uuid_break, killAudio). */
interface MediaRun {
  timer?: ClockTimer;
  end: () => void;
}

interface Channel {
  uuid: string;
  kind: LegKind;
  /** A call the PSTN placed to a DID (inboundCall); every other leg the switch originated. */
  direction?: 'inbound';
  name: string;
  destination: string;
  cidName: string;
  cidNumber: string;
  vars: Map<string, string>;
  phase: Phase;
  fsState: string;
  callState: string;
  createdAt: number;
  progressAt?: number;
  answeredAt?: number;
  endedAt?: number;
  outcome?: Outcome;
  timeoutMs?: number;
  bridge?: { partner: string; originator: boolean };
  held: boolean;
  muted: { read: boolean; write: boolean };
  app?: { name: string; arg: string };
  timers: Set<ClockTimer>;
  recordings: Map<string, { startedAt: number; limit?: ClockTimer }>;
  eavesdrop?: { target: string; whisperA: boolean; whisperB: boolean };
  amdResult?: AmdVerdict;
  spoken: SpokenText[];
  media: Set<MediaRun>;
  /** Attached mod_audio_fork bugs by bug name. */
  forks: Map<string, AudioForkSession>;
  consumer?: SimulatedConsumer;
  /** The consumer's hang-up at talkMs (a simulated consumer with a fork replaces it). */
  talkTimer?: ClockTimer;
  /** Pending originate or bridge-app result: called once, on answer or on failure. */
  onResult?: (ok: boolean, detail: string) => void;
  afterAnswer?: () => void;
  /** B leg being dialled by this channel's bridge application. */
  dialing?: string;
}

/** One text the channel heard through `speak`, when it began. */
export interface SpokenText {
  engine: string;
  voice: string;
  text: string;
  at: string;
}

export interface ChannelSnapshot {
  uuid: string;
  kind: LegKind;
  name: string;
  destination: string;
  callerIdNumber: string;
  callerIdName: string;
  state: Phase;
  callState: string;
  application: string | null;
  applicationData: string | null;
  bridgedTo: string | null;
  held: boolean;
  muted: { read: boolean; write: boolean };
  recordings: string[];
  eavesdrop: { target: string; mode: EavesdropMode; whisperTo: 'aleg' | 'bleg' | 'both' | null } | null;
  amdResult: AmdVerdict | null;
  spoken: SpokenText[];
  /** Attached audio forks (uuid_audio_fork). */
  audioForks: Array<{ bugname: string; url: string; rate: number; state: string; framesSent: number }>;
  /** What the simulated consumer said on this channel (numbers ending 40-49 with a fork). */
  consumerSaid: ConsumerLine[];
  variables: Record<string, string>;
}

const STATE_NUMBERS: Record<string, number> = {
  CS_NEW: 0,
  CS_INIT: 1,
  CS_ROUTING: 2,
  CS_SOFT_EXECUTE: 3,
  CS_EXECUTE: 4,
  CS_EXCHANGE_MEDIA: 5,
  CS_PARK: 6,
  CS_CONSUME_MEDIA: 7,
  CS_HIBERNATE: 8,
  CS_RESET: 9,
  CS_HANGUP: 10,
  CS_REPORTING: 11,
  CS_DESTROY: 12,
};

/** Applications an originate (`&app(arg)`) or a transfer may run. */
export const ORIGINATE_APPS: ReadonlySet<string> = new Set(['park', 'echo', 'bridge', 'playback', 'speak', 'sleep', 'eavesdrop', 'three_way', 'hangup']);
/** Applications `sendmsg <uuid>` with `call-command: execute` may run. */
const SENDMSG_APPS: ReadonlySet<string> = new Set([
  'playback', 'speak', 'sleep', 'set', 'export', 'answer', 'hangup', 'park', 'amd', 'record_session', 'stop_record_session',
]);
/** The modules the simulator models (`module_exists`); the one TTS engine among them is flite. */
const MODULES: ReadonlySet<string> = new Set(['mod_commands', 'mod_dptools', 'mod_sofia', 'mod_event_socket', 'mod_amd', 'mod_flite']);
/** Channels whose spoken texts stay readable after their hangup (the oldest are forgotten first). */
const SPOKEN_HISTORY = 10_000;

/**
 * FreeSWITCH's argument cleanup (switch_separate_string): single quotes group and are removed, a
 * backslash escapes a quote, a backslash or the separator.
 */
function unquote(arg: string): string {
  let out = '';
  for (let i = 0; i < arg.length; i++) {
    const c = arg[i]!;
    if (c === '\\' && i + 1 < arg.length && `'"\\|`.includes(arg[i + 1]!)) {
      out += arg[++i];
      continue;
    }
    if (c === "'") continue;
    out += c;
  }
  return out;
}

const CHANNEL_COLUMNS = [
  'uuid', 'direction', 'created', 'created_epoch', 'name', 'state', 'cid_name', 'cid_num', 'ip_addr', 'dest',
  'application', 'application_data', 'dialplan', 'context', 'read_codec', 'read_rate', 'read_bit_rate', 'write_codec',
  'write_rate', 'write_bit_rate', 'secure', 'hostname', 'presence_id', 'presence_data', 'accountcode', 'callstate',
  'callee_name', 'callee_num', 'callee_direction', 'call_uuid', 'sent_callee_name', 'sent_callee_num',
  'initial_cid_name', 'initial_cid_num', 'initial_ip_addr', 'initial_dest', 'initial_dialplan', 'initial_context',
] as const;

const truthy = (v: string | undefined): boolean => v !== undefined && /^(true|yes|on|1|t|y)$/i.test(v.trim());

function stamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

const USAGE = {
  kill: '-USAGE: <uuid> [cause]\n',
  hold: '-USAGE: [off|toggle] <uuid> [<display>]\n',
  audio: '-USAGE: <uuid> [start [read|write] [mute|level <level>]|stop]\n',
  bridge: '-USAGE: <uuid> <other_uuid>\n',
  transfer: '-USAGE: <uuid> [-bleg|-both] <dest-exten> [<dialplan>] [<context>]\n',
  broadcast: '-USAGE: <uuid> <path> [aleg|bleg|holdb|both]\n',
  record: '-USAGE: <uuid> [start|stop|mask|unmask] <path> [<limit>] [<recording_vars>]\n',
  getvar: '-USAGE: <uuid> <var>\n',
  setvar: '-USAGE: <uuid> <var> [value]\n',
  dump: '-USAGE: <uuid> [format]\n',
  register: '-USAGE: <extension>[@<domain>] <username> <password> [<expires_sec>]\n',
  unregister: '-USAGE: <extension>[@<domain>]\n',
  answerDelay: '-USAGE: <extension> <ms>\n',
  dtmf: '-USAGE: <uuid> <digits> [<duration_ms>]\n',
  speech: '-USAGE: <uuid> <text>\n',
  hangup: '-USAGE: <uuid> [cause]\n',
  break: '-USAGE: <uuid> [all]\n',
  amd: '-USAGE: <uuid> [params]\n',
  inbound: '-USAGE: <from> <to> [<uuid>]\n',
  answer: '-USAGE: <uuid>\n',
};
const NO_SUCH_CHANNEL = '-ERR No such channel!\n';
/** The one sofia profile agents register on (FreeSWITCH's stock `internal`). */
const SOFIA_PROFILE = 'internal';

export class SwitchCore {
  readonly coreUuid = randomUUID();
  private readonly opts: SwitchCoreOptions;
  private readonly startedAt: number;
  private readonly channels = new Map<string, Channel>();
  private readonly spokenLog = new Map<string, SpokenText[]>();
  private readonly consumerLog = new Map<string, ConsumerLine[]>();
  private readonly modules: ReadonlySet<string>;
  /** Registrations, made only through the product's directory (registrar.ts). */
  readonly registrar: Registrar;
  /** Gateways of the external profile: the static default, and those fetched by startgw (gateways.ts). */
  readonly gateways: GatewayTable;
  /** Per-extension ring time of agent legs (a softphone slow to pick up); none: answered at once. */
  private readonly answerDelays = new Map<string, number>();
  private seq = 0;
  private sessionCounter = 0;
  private peak = 0;

  constructor(opts: SwitchCoreOptions) {
    this.opts = opts;
    this.startedAt = opts.clock.now();
    this.registrar = new Registrar({
      clock: opts.clock,
      hostname: opts.hostname,
      profile: SOFIA_PROFILE,
      fire: (subclass, headers) => this.opts.emit({ name: 'CUSTOM', subclass, headers: [...this.base('CUSTOM', subclass), ...headers] }),
    });
    this.gateways = new GatewayTable(opts.hostname);
    this.modules = new Set([...MODULES, ...(opts.audioFork ? ['mod_audio_fork'] : [])]);
  }

  // ---------------------------------------------------------------- commands

  /** Runs one api command line; `done` gets FreeSWITCH's answer text (now or, for originate, later). */
  execute(line: string, done: (body: string) => void): void {
    const trimmed = line.trim();
    const space = trimmed.indexOf(' ');
    const name = (space < 0 ? trimmed : trimmed.slice(0, space)).toLowerCase();
    const rest = space < 0 ? '' : trimmed.slice(space + 1).trim();
    const argv = splitArgs(rest);
    switch (name) {
      case 'originate':
        this.originate(rest, done);
        return;
      case 'sim_register':
        this.cmdRegister(argv, done);
        return;
      case 'sofia':
        // startgw fetches the gateway through the configuration binding; every other sofia command answers at once.
        if (argv[0] === 'profile' && argv[1] === GATEWAY_PROFILE && argv[2] === 'startgw' && argv[3]) {
          void this.gateways.start(argv[3], this.registrar.binding()).then(done);
          return;
        }
        done(this.cmdSofia(argv));
        return;
      case '':
        done('-ERR no api command\n');
        return;
      default:
        done(this.sync(name, rest, argv));
    }
  }

  api(line: string): Promise<string> {
    return new Promise((resolve) => this.execute(line, resolve));
  }

  private sync(name: string, rest: string, argv: string[]): string {
    switch (name) {
      case 'uuid_kill':
        return this.cmdKill(argv);
      case 'uuid_hold':
        return this.cmdHold(argv);
      case 'uuid_audio':
        return this.cmdAudio(argv);
      case 'uuid_bridge':
        return this.cmdBridge(argv);
      case 'uuid_transfer':
        return this.cmdTransfer(argv);
      case 'uuid_broadcast':
        return this.cmdBroadcast(argv);
      case 'uuid_record':
        return this.cmdRecord(argv);
      case 'uuid_exists':
        return this.channels.has(argv[0] ?? '') ? 'true' : 'false';
      case 'uuid_getvar': {
        const ch = this.channels.get(argv[0] ?? '');
        if (!argv[1]) return USAGE.getvar;
        if (!ch) return NO_SUCH_CHANNEL;
        return ch.vars.get(argv[1]) ?? '_undef_';
      }
      case 'uuid_setvar': {
        const ch = this.channels.get(argv[0] ?? '');
        if (!argv[1]) return USAGE.setvar;
        if (!ch) return NO_SUCH_CHANNEL;
        if (argv.length > 2) ch.vars.set(argv[1], argv.slice(2).join(' '));
        else ch.vars.delete(argv[1]);
        return '+OK\n';
      }
      case 'uuid_dump':
        return this.cmdDump(argv);
      case 'uuid_amd_detect': {
        const ch = this.channels.get(argv[0] ?? '');
        if (!argv[0]) return USAGE.amd;
        if (!ch) return NO_SUCH_CHANNEL;
        if (ch.phase !== 'answered') return '-ERR Channel not answered\n';
        this.startAmd(ch);
        return '+OK\n';
      }
      case 'show':
        return this.cmdShow(argv);
      case 'status':
        return this.cmdStatus();
      case 'version':
        return 'FreeSWITCH Version 1.10.12-release+dialer-switch-simulator (simulated)\n';
      case 'hostname':
        return this.opts.hostname;
      case 'create_uuid':
        return randomUUID();
      case 'echo':
        return rest;
      case 'module_exists':
        return this.modules.has(argv[0] ?? '') ? 'true' : 'false';
      case 'uuid_audio_fork':
        if (!this.modules.has('mod_audio_fork')) return `-ERR ${name} Command not found!\n`;
        return this.cmdAudioFork(rest);
      case 'uuid_break':
      case 'break':
        return this.cmdBreak(rest);
      case 'sim_unregister':
        return this.cmdUnregister(argv);
      case 'sim_registrations':
        return this.registrar.list().join('\n') + '\n';
      case 'sim_answer_delay':
        return this.cmdAnswerDelay(argv);
      case 'sim_dtmf':
        return this.cmdDtmf(argv);
      case 'sim_speech':
        return this.cmdSpeech(argv);
      case 'sim_hangup':
        return this.cmdRemoteHangup(argv);
      case 'sim_inbound':
        return this.cmdInbound(argv);
      case 'uuid_answer':
        return this.cmdAnswer(argv);
      default:
        return `-ERR ${name} Command not found!\n`;
    }
  }

  /** `sendmsg <uuid>` with headers (call-command execute|hangup). Answers the command/reply text. */
  sendmsg(uuid: string, headers: Record<string, string>): string {
    const ch = this.channels.get(uuid);
    if (!ch) return `-ERR invalid session id [${uuid}]`;
    const command = (headers['call-command'] ?? '').toLowerCase();
    if (command === 'hangup') {
      this.hangup(ch, this.causeOr(headers['hangup-cause'], 'NORMAL_CLEARING'), { disposition: 'send_bye' });
      return '+OK';
    }
    if (command !== 'execute') return '-ERR invalid command';
    const app = (headers['execute-app-name'] ?? '').toLowerCase();
    if (!SENDMSG_APPS.has(app)) return `-ERR Invalid Application ${app}`;
    this.runApp(ch, app, headers['execute-app-arg'] ?? '', { inline: false, appUuid: headers['Event-UUID'] });
    return '+OK';
  }

  // ---------------------------------------------------------------- inspection and test hooks

  snapshot(uuid: string): ChannelSnapshot | undefined {
    const ch = this.channels.get(uuid);
    if (!ch) return undefined;
    let eavesdrop: ChannelSnapshot['eavesdrop'] = null;
    if (ch.eavesdrop) {
      const { whisperA, whisperB, target } = ch.eavesdrop;
      eavesdrop = {
        target,
        mode: whisperA && whisperB ? 'barge' : whisperA || whisperB ? 'whisper' : 'listen',
        whisperTo: whisperA && whisperB ? 'both' : whisperA ? 'aleg' : whisperB ? 'bleg' : null,
      };
    }
    return {
      uuid: ch.uuid,
      kind: ch.kind,
      name: ch.name,
      destination: ch.destination,
      callerIdNumber: ch.cidNumber,
      callerIdName: ch.cidName,
      state: ch.phase,
      callState: ch.callState,
      application: ch.app?.name ?? null,
      applicationData: ch.app?.arg ?? null,
      bridgedTo: ch.bridge?.partner ?? null,
      held: ch.held,
      muted: { ...ch.muted },
      recordings: [...ch.recordings.keys()],
      eavesdrop,
      amdResult: ch.amdResult ?? null,
      spoken: ch.spoken.map((t) => ({ ...t })),
      audioForks: [...ch.forks.values()].map((f) => ({ bugname: f.bugname, url: f.url, rate: f.rate, state: f.state, framesSent: f.framesSent })),
      consumerSaid: (ch.consumer?.said ?? []).map((l) => ({ ...l })),
      variables: Object.fromEntries(ch.vars),
    };
  }

  /** Every text spoken to a channel, also after its hangup. */
  spokenTo(uuid: string): SpokenText[] {
    return (this.spokenLog.get(uuid) ?? []).map((t) => ({ ...t }));
  }

  /** What the simulated consumer said on a channel, also after its hangup. */
  consumerSaidTo(uuid: string): ConsumerLine[] {
    return (this.consumerLog.get(uuid) ?? []).map((l) => ({ ...l }));
  }

  snapshots(): ChannelSnapshot[] {
    return [...this.channels.keys()].map((u) => this.snapshot(u)!);
  }

  /** Drops every channel and timer without events (simulator shutdown). */
  reset(): void {
    for (const ch of this.channels.values()) {
      for (const t of ch.timers) this.opts.clock.clearTimeout(t);
      for (const f of ch.forks.values()) f.close();
      ch.consumer?.stop();
    }
    this.channels.clear();
    this.registrar.reset();
  }

  // ---------------------------------------------------------------- events

  private base(name: string, subclass?: string): Array<[string, string]> {
    const now = this.opts.clock.now();
    const h: Array<[string, string]> = [['Event-Name', name]];
    if (subclass) h.push(['Event-Subclass', subclass]);
    h.push(
      ['Core-UUID', this.coreUuid],
      ['FreeSWITCH-Hostname', this.opts.hostname],
      ['FreeSWITCH-Switchname', this.opts.hostname],
      ['FreeSWITCH-IPv4', '127.0.0.1'],
      ['FreeSWITCH-IPv6', '::1'],
      ['Event-Date-Local', stamp(now)],
      ['Event-Date-GMT', new Date(now).toUTCString()],
      ['Event-Date-Timestamp', String(now * 1000)],
      ['Event-Calling-File', 'switch-simulator'],
      ['Event-Calling-Function', name.toLowerCase()],
      ['Event-Calling-Line-Number', '0'],
      ['Event-Sequence', String(++this.seq)],
    );
    return h;
  }

  private channelData(ch: Channel, other?: Channel): Array<[string, string]> {
    const us = (t?: number) => (t === undefined ? '0' : String(t * 1000));
    const answerState = ch.phase === 'hangup' ? 'hangup' : ch.phase === 'answered' ? 'answered' : 'ringing';
    const direction = ch.direction ?? 'outbound';
    const h: Array<[string, string]> = [
      ['Channel-State', ch.fsState],
      ['Channel-Call-State', ch.callState],
      ['Channel-State-Number', String(STATE_NUMBERS[ch.fsState] ?? 0)],
      ['Channel-Name', ch.name],
      ['Unique-ID', ch.uuid],
      ['Call-Direction', direction],
      ['Presence-Call-Direction', direction],
      ['Channel-HIT-Dialplan', 'false'],
      ['Channel-Call-UUID', ch.uuid],
      ['Answer-State', answerState],
      ['Channel-Read-Codec-Name', 'PCMU'],
      ['Channel-Read-Codec-Rate', '8000'],
      ['Channel-Write-Codec-Name', 'PCMU'],
      ['Channel-Write-Codec-Rate', '8000'],
      ['Caller-Direction', direction],
      ['Caller-Logical-Direction', direction],
      ['Caller-Dialplan', 'XML'],
      ['Caller-Caller-ID-Name', ch.cidName],
      ['Caller-Caller-ID-Number', ch.cidNumber],
      ['Caller-Orig-Caller-ID-Name', ch.cidName],
      ['Caller-Orig-Caller-ID-Number', ch.cidNumber],
      ['Caller-Callee-ID-Name', 'Outbound Call'],
      ['Caller-Callee-ID-Number', ch.destination],
      ['Caller-ANI', ch.cidNumber],
      ['Caller-Destination-Number', ch.destination],
      ['Caller-Unique-ID', ch.uuid],
      ['Caller-Source', 'src/switch_ivr_originate.c'],
      ['Caller-Context', ch.direction === 'inbound' ? 'public' : 'default'],
      ['Caller-Channel-Name', ch.name],
      ['Caller-Profile-Index', '1'],
      ['Caller-Profile-Created-Time', us(ch.createdAt)],
      ['Caller-Channel-Created-Time', us(ch.createdAt)],
      ['Caller-Channel-Answered-Time', us(ch.answeredAt)],
      ['Caller-Channel-Progress-Time', us(ch.progressAt)],
      ['Caller-Channel-Hangup-Time', us(ch.endedAt)],
    ];
    const partner = other ?? (ch.bridge ? this.channels.get(ch.bridge.partner) : undefined);
    if (partner) {
      const originator = ch.bridge ? ch.bridge.originator : !partner.bridge?.originator;
      h.push(
        ['Other-Type', originator ? 'originatee' : 'originator'],
        ['Other-Leg-Direction', 'outbound'],
        ['Other-Leg-Unique-ID', partner.uuid],
        ['Other-Leg-Channel-Name', partner.name],
        ['Other-Leg-Caller-ID-Name', partner.cidName],
        ['Other-Leg-Caller-ID-Number', partner.cidNumber],
        ['Other-Leg-Destination-Number', partner.destination],
      );
    }
    for (const [k, v] of ch.vars) h.push([`variable_${k}`, v]);
    return h;
  }

  private emitChannel(name: string, ch: Channel, extra: Array<[string, string]> = [], opts: { subclass?: string; other?: Channel; body?: string } = {}): void {
    this.opts.emit({
      name,
      subclass: opts.subclass,
      headers: [...this.base(name, opts.subclass), ...extra, ...this.channelData(ch, opts.other)],
      body: opts.body,
    });
  }

  /** A job result as FreeSWITCH reports a bgapi command. */
  backgroundJob(jobUuid: string, command: string, args: string, body: string): SwitchEvent {
    return {
      name: 'BACKGROUND_JOB',
      headers: [...this.base('BACKGROUND_JOB'), ['Job-UUID', jobUuid], ['Job-Command', command], ['Job-Command-Arg', args]],
      body,
    };
  }

  /** An event fired with `sendevent`. */
  customEvent(name: string, headers: Record<string, string>, body?: string): SwitchEvent {
    const subclass = headers['Event-Subclass'];
    const h = this.base(name, subclass);
    for (const [k, v] of Object.entries(headers)) if (k !== 'Event-Name' && k !== 'Event-Subclass' && k !== 'Content-Length') h.push([k, v]);
    return { name, subclass, headers: h, body: body || undefined };
  }

  // ---------------------------------------------------------------- timers

  private schedule(ch: Channel, ms: number, fn: () => void): ClockTimer {
    const timer = this.opts.clock.setTimeout(() => {
      ch.timers.delete(timer);
      fn();
    }, ms);
    ch.timers.add(timer);
    return timer;
  }

  private cancel(ch: Channel, timer: ClockTimer | undefined): void {
    if (!timer) return;
    this.opts.clock.clearTimeout(timer);
    ch.timers.delete(timer);
  }

  // ---------------------------------------------------------------- call model

  private isRegistered(extension: string, domain?: string): boolean {
    return this.registrar.isRegistered(extension, domain);
  }

  private causeOr(value: string | undefined, fallback: string): string {
    const c = (value ?? '').trim().toUpperCase();
    return c in HANGUP_CAUSES ? c : fallback;
  }

  /** Creates a channel (no events yet) or answers the cause of an immediate failure. */
  private newChannel(req: DialString & { cidName?: string; cidNumber?: string; timeoutSec?: number }): Channel | string {
    const vars = new Map<string, string>(req.vars);
    const ep = req.endpoint;
    if (ep.kind === 'error') return this.causeOr(ep.cause, 'NORMAL_CLEARING');
    if (ep.kind === 'unsupported') return 'CHAN_NOT_IMPLEMENTED';
    // sofia's outgoing channel looks the gateway up before anything else: an unknown one creates no channel.
    if (ep.kind === 'pstn' && ep.gateway !== undefined && !this.gateways.has(ep.gateway)) return 'INVALID_GATEWAY';
    const uuid = vars.get('origination_uuid') || randomUUID();
    if (this.channels.has(uuid)) return 'NORMAL_TEMPORARY_FAILURE';
    let outcome: Outcome | undefined;
    let destination: string;
    const stdVars = new Map<string, string>([
      ['direction', 'outbound'],
      ['is_outbound', 'true'],
      ['uuid', uuid],
      ['session_id', String(++this.sessionCounter)],
      ['channel_name', ep.kind === 'user' || ep.kind === 'pstn' ? ep.channelName : ''],
    ]);
    if (ep.kind === 'user') {
      if (!/^[A-Za-z0-9._-]+$/.test(ep.extension) || !this.isRegistered(ep.extension, ep.domain)) {
        this.sessionCounter--;
        return 'USER_NOT_REGISTERED';
      }
      destination = ep.extension;
      stdVars.set('dialed_user', ep.extension);
      stdVars.set('dialed_domain', ep.domain ?? 'default');
    } else {
      const planned = outcomeFor(ep.number);
      if (!planned) {
        this.sessionCounter--;
        return 'INVALID_NUMBER_FORMAT';
      }
      outcome = planned;
      destination = ep.number;
      if (ep.gateway) stdVars.set('sip_gateway_name', ep.gateway);
    }
    const allVars = new Map<string, string>([...stdVars, ...vars]);
    const timeoutVar = vars.get('originate_timeout') ?? vars.get('call_timeout');
    const timeoutSec = req.timeoutSec ?? (timeoutVar && /^\d+$/.test(timeoutVar) ? Number(timeoutVar) : undefined);
    const ch: Channel = {
      uuid,
      kind: ep.kind === 'user' ? 'agent' : 'pstn',
      name: ep.channelName,
      destination,
      cidName: vars.get('origination_caller_id_name') ?? req.cidName ?? 'FreeSWITCH',
      cidNumber: vars.get('origination_caller_id_number') ?? req.cidNumber ?? '0000000000',
      vars: allVars,
      phase: 'ringing',
      fsState: 'CS_INIT',
      callState: 'DOWN',
      createdAt: this.opts.clock.now(),
      outcome,
      timeoutMs: timeoutSec !== undefined && timeoutSec > 0 ? timeoutSec * 1000 : undefined,
      held: false,
      muted: { read: false, write: false },
      timers: new Set(),
      recordings: new Map(),
      spoken: [],
      media: new Set(),
      forks: new Map(),
    };
    this.channels.set(uuid, ch);
    this.peak = Math.max(this.peak, this.channels.size);
    return ch;
  }

  /** CHANNEL_CREATE, then an agent leg answers at once and a consumer leg rings. */
  private launch(ch: Channel): void {
    this.emitChannel('CHANNEL_CREATE', ch);
    const agentRingMs = ch.kind === 'agent' ? (this.answerDelays.get(ch.destination) ?? 0) : 0;
    if (ch.kind === 'agent' && agentRingMs <= 0) {
      this.answer(ch);
      return;
    }
    ch.progressAt = this.opts.clock.now();
    ch.callState = 'RINGING';
    ch.fsState = 'CS_CONSUME_MEDIA';
    this.emitChannel('CHANNEL_PROGRESS', ch);
    const ringMs = ch.kind === 'agent' ? agentRingMs : this.opts.ringMs;
    if (ch.timeoutMs !== undefined && ch.timeoutMs < ringMs) {
      this.schedule(ch, ch.timeoutMs, () => this.hangup(ch, 'NO_ANSWER', { disposition: 'send_cancel', sipStatus: 487 }));
      return;
    }
    this.schedule(ch, ringMs, () => {
      if (ch.kind === 'agent') {
        this.answer(ch);
        return;
      }
      const outcome = ch.outcome!;
      if (outcome.answered) this.answer(ch);
      else this.hangup(ch, outcome.hangupCause, { disposition: 'recv_refuse', sipStatus: outcome.sipStatus });
    });
  }

  private answer(ch: Channel): void {
    ch.phase = 'answered';
    ch.answeredAt = this.opts.clock.now();
    ch.callState = 'ACTIVE';
    ch.fsState = 'CS_EXECUTE';
    ch.vars.set('endpoint_disposition', 'ANSWER');
    this.emitChannel('CHANNEL_ANSWER', ch);
    const result = ch.onResult;
    ch.onResult = undefined;
    result?.(true, ch.uuid);
    if (ch.phase !== 'answered') return;
    if (ch.kind === 'pstn') {
      ch.talkTimer = this.schedule(ch, this.opts.talkMs, () => this.hangup(ch, 'NORMAL_CLEARING', { disposition: 'recv_bye', sipStatus: 200 }));
    }
    const onAnswer = ch.vars.get('execute_on_answer') ?? '';
    if (/(^|[\s,])amd\b/i.test(onAnswer)) this.startAmd(ch);
    const next = ch.afterAnswer;
    ch.afterAnswer = undefined;
    if (ch.phase === 'answered') next?.();
  }

  /** mod_amd's verdict: CUSTOM `amd` with AMD-Result / AMD-Cause, and channel variables amd_result / amd_cause. */
  private startAmd(ch: Channel): void {
    const verdict: AmdVerdict = ch.outcome?.answered ? ch.outcome.amd : 'HUMAN';
    const cause = ch.outcome?.answered ? ch.outcome.amdCause : 'HUMAN';
    const fire = () => {
      if (ch.phase !== 'answered') return;
      ch.amdResult = verdict;
      ch.vars.set('amd_result', verdict);
      ch.vars.set('amd_cause', cause);
      ch.vars.set('amd_result_epoch', String(Math.floor(this.opts.clock.now() / 1000)));
      this.emitChannel('CUSTOM', ch, [['AMD-Result', verdict], ['AMD-Cause', cause]], { subclass: 'amd' });
    };
    if (this.opts.amdMs <= 0) fire();
    else this.schedule(ch, this.opts.amdMs, fire);
  }

  private hangup(ch: Channel, cause: string, opts: { disposition: HangupDisposition; sipStatus?: number }): void {
    if (ch.phase === 'hangup') return;
    for (const t of ch.timers) this.opts.clock.clearTimeout(t);
    ch.timers.clear();
    ch.media.clear();
    // The media bug's CLOSE: each fork's websocket closes with no final text and no event.
    for (const f of ch.forks.values()) f.close();
    ch.forks.clear();
    ch.consumer?.stop();
    for (const file of [...ch.recordings.keys()]) this.recordStop(ch, file);
    const wasAnswered = ch.phase === 'answered';
    const now = this.opts.clock.now();
    ch.phase = 'hangup';
    ch.endedAt = now;
    ch.callState = 'HANGUP';
    ch.fsState = 'CS_HANGUP';
    ch.held = false;
    const sipStatus = opts.sipStatus ?? (wasAnswered ? 200 : opts.disposition === 'send_cancel' ? 487 : undefined);
    const q850 = HANGUP_CAUSES[cause] ?? 16;
    const secs = (a: number, b: number) => String(Math.floor((b - a) / 1000));
    const v = ch.vars;
    v.set('hangup_cause', cause);
    v.set('hangup_cause_q850', String(q850));
    v.set('sip_hangup_disposition', opts.disposition);
    if (sipStatus !== undefined) {
      v.set('sip_term_status', String(sipStatus));
      v.set('sip_term_cause', String(q850));
    }
    v.set('start_stamp', stamp(ch.createdAt));
    v.set('start_epoch', String(Math.floor(ch.createdAt / 1000)));
    v.set('start_uepoch', String(ch.createdAt * 1000));
    v.set('progress_epoch', ch.progressAt ? String(Math.floor(ch.progressAt / 1000)) : '0');
    v.set('answer_stamp', ch.answeredAt ? stamp(ch.answeredAt) : '');
    v.set('answer_epoch', ch.answeredAt ? String(Math.floor(ch.answeredAt / 1000)) : '0');
    v.set('answer_uepoch', ch.answeredAt ? String(ch.answeredAt * 1000) : '0');
    v.set('end_stamp', stamp(now));
    v.set('end_epoch', String(Math.floor(now / 1000)));
    v.set('end_uepoch', String(now * 1000));
    v.set('duration', secs(ch.createdAt, now));
    v.set('mduration', String(now - ch.createdAt));
    v.set('billsec', ch.answeredAt ? secs(ch.answeredAt, now) : '0');
    v.set('billmsec', ch.answeredAt ? String(now - ch.answeredAt) : '0');
    v.set('progresssec', ch.progressAt ? secs(ch.createdAt, ch.progressAt) : '0');
    v.set('progressmsec', ch.progressAt ? String(ch.progressAt - ch.createdAt) : '0');
    v.set('answersec', ch.answeredAt ? secs(ch.createdAt, ch.answeredAt) : '0');
    v.set('answermsec', ch.answeredAt ? String(ch.answeredAt - ch.createdAt) : '0');
    v.set('waitsec', ch.answeredAt ? secs(ch.createdAt, ch.answeredAt) : '0');
    this.emitChannel('CHANNEL_HANGUP', ch, [['Hangup-Cause', cause]]);
    let partner: Channel | undefined;
    if (ch.bridge) {
      partner = this.channels.get(ch.bridge.partner);
      if (partner) this.unbridge(ch, partner);
    }
    ch.fsState = 'CS_REPORTING';
    this.emitChannel('CHANNEL_HANGUP_COMPLETE', ch, [['Hangup-Cause', cause]]);
    ch.fsState = 'CS_DESTROY';
    this.emitChannel('CHANNEL_DESTROY', ch);
    this.channels.delete(ch.uuid);
    const result = ch.onResult;
    ch.onResult = undefined;
    result?.(false, cause);
    if (ch.dialing) {
      const b = this.channels.get(ch.dialing);
      ch.dialing = undefined;
      if (b && b.phase === 'ringing') this.hangup(b, 'ORIGINATOR_CANCEL', { disposition: 'send_cancel' });
    }
    if (partner && partner.phase !== 'hangup') this.afterUnbridge(partner);
    for (const other of [...this.channels.values()]) {
      if (other.eavesdrop?.target === ch.uuid) this.endEavesdrop(other);
    }
  }

  /** Emits CHANNEL_UNBRIDGE (from the originator's side) and separates the two legs. */
  private unbridge(a: Channel, b: Channel): void {
    const [orig, other] = a.bridge?.originator ? [a, b] : [b, a];
    this.emitChannel('CHANNEL_UNBRIDGE', orig, [['Bridge-A-Unique-ID', orig.uuid], ['Bridge-B-Unique-ID', other.uuid]], { other });
    for (const leg of [a, b]) {
      leg.bridge = undefined;
      leg.vars.delete('bridge_to');
      if (leg.phase !== 'hangup') leg.fsState = 'CS_EXECUTE';
    }
  }

  /** What a leg does when its bridge partner left: park with park_after_bridge=true, else hang up. */
  private afterUnbridge(leg: Channel): void {
    if (truthy(leg.vars.get('park_after_bridge'))) this.park(leg);
    else this.hangup(leg, 'NORMAL_CLEARING', { disposition: 'send_bye' });
  }

  private bridge(a: Channel, b: Channel): void {
    if (a.bridge?.partner === b.uuid) return;
    for (const leg of [a, b]) {
      if (!leg.bridge) continue;
      const old = this.channels.get(leg.bridge.partner);
      if (!old) continue;
      this.unbridge(leg, old);
      this.afterUnbridge(old);
    }
    if (a.phase !== 'answered' || b.phase !== 'answered') return;
    if (a.eavesdrop) a.eavesdrop = undefined;
    if (b.eavesdrop) b.eavesdrop = undefined;
    a.bridge = { partner: b.uuid, originator: true };
    b.bridge = { partner: a.uuid, originator: false };
    for (const [leg, other] of [[a, b], [b, a]] as const) {
      leg.app = { name: 'bridge', arg: other.uuid };
      leg.fsState = 'CS_EXCHANGE_MEDIA';
      leg.vars.set('bridge_to', other.uuid);
      leg.vars.set('last_bridge_to', other.uuid);
    }
    this.emitChannel('CHANNEL_BRIDGE', a, [['Bridge-A-Unique-ID', a.uuid], ['Bridge-B-Unique-ID', b.uuid]]);
    a.consumer?.bridged();
    b.consumer?.bridged();
  }

  private park(ch: Channel): void {
    ch.app = { name: 'park', arg: '' };
    ch.fsState = 'CS_EXECUTE';
    this.emitChannel('CHANNEL_PARK', ch);
  }

  private promptMs(arg: string): number {
    const m = /^silence_stream:\/\/(\d+)/.exec(arg);
    return m ? Number(m[1]) : this.opts.promptMs;
  }

  private execEvent(name: 'CHANNEL_EXECUTE' | 'CHANNEL_EXECUTE_COMPLETE', ch: Channel, app: string, arg: string, appUuid: string, response?: string): void {
    const extra: Array<[string, string]> = [
      ['Application', app],
      ['Application-Data', arg],
      ['Application-UUID', appUuid],
    ];
    if (response !== undefined) extra.push(['Application-Response', response]);
    this.emitChannel(name, ch, extra);
  }

  /**
   * Runs an application on an answered channel. `inline` is an originate's `&app()` or a transfer
   * target: when such an application ends, the channel hangs up NORMAL_CLEARING, as FreeSWITCH does
   * when the dialplan runs out.
   */
  private runApp(ch: Channel, app: string, arg: string, opts: { inline: boolean; appUuid?: string }): void {
    const appUuid = opts.appUuid ?? randomUUID();
    const finish = (response: string) => {
      if (ch.phase === 'hangup') return;
      this.execEvent('CHANNEL_EXECUTE_COMPLETE', ch, app, arg, appUuid, response);
      if (opts.inline) this.hangup(ch, 'NORMAL_CLEARING', { disposition: 'send_bye' });
    };
    switch (app) {
      case 'park':
        this.park(ch);
        return;
      case 'echo':
        ch.app = { name: 'echo', arg };
        this.execEvent('CHANNEL_EXECUTE', ch, app, arg, appUuid);
        return;
      case 'playback':
      case 'speak':
      case 'sleep': {
        ch.app = { name: app, arg };
        this.execEvent('CHANNEL_EXECUTE', ch, app, arg, appUuid);
        this.playMedia(ch, app, arg, (response) => {
          ch.vars.set('current_application_response', response);
          finish(response);
        });
        return;
      }
      case 'set':
      case 'export': {
        this.execEvent('CHANNEL_EXECUTE', ch, app, arg, appUuid);
        const eq = arg.indexOf('=');
        if (eq > 0) ch.vars.set(arg.slice(0, eq), arg.slice(eq + 1));
        finish('_none_');
        return;
      }
      case 'answer':
        this.execEvent('CHANNEL_EXECUTE', ch, app, arg, appUuid);
        if (ch.phase === 'ringing' && ch.direction === 'inbound') this.answer(ch);
        finish('_none_');
        return;
      case 'amd':
        this.execEvent('CHANNEL_EXECUTE', ch, app, arg, appUuid);
        this.execEvent('CHANNEL_EXECUTE_COMPLETE', ch, app, arg, appUuid, '_none_');
        this.startAmd(ch);
        return;
      case 'hangup':
        this.execEvent('CHANNEL_EXECUTE', ch, app, arg, appUuid);
        this.hangup(ch, this.causeOr(arg, 'NORMAL_CLEARING'), { disposition: 'send_bye' });
        return;
      case 'bridge':
        this.appBridge(ch, arg, appUuid);
        return;
      case 'record_session':
      case 'stop_record_session': {
        this.execEvent('CHANNEL_EXECUTE', ch, app, arg, appUuid);
        const [file = '', limit] = arg.trim().split(/\s+/);
        const response = app === 'record_session' ? this.recordCommand(ch, 'start', file, limit) : this.recordCommand(ch, 'stop', file);
        ch.vars.set('current_application_response', response.trim());
        finish(response.trim());
        return;
      }
      case 'eavesdrop':
      case 'three_way':
        this.startEavesdrop(ch, arg.trim(), app === 'three_way', appUuid);
        return;
      default:
        finish('_none_');
    }
  }

  /** The bridge application: dial the B leg, bridge on its answer, hang up A when it fails. */
  private appBridge(a: Channel, dial: string, appUuid: string): void {
    a.app = { name: 'bridge', arg: dial };
    this.execEvent('CHANNEL_EXECUTE', a, 'bridge', dial, appUuid);
    const fail = (cause: string) => {
      if (a.phase === 'hangup') return;
      a.vars.set('originate_disposition', cause);
      this.execEvent('CHANNEL_EXECUTE_COMPLETE', a, 'bridge', dial, appUuid, cause);
      this.hangup(a, 'NORMAL_CLEARING', { disposition: 'send_bye' });
    };
    const leg = this.newChannel(parseDialString(dial));
    if (typeof leg === 'string') {
      fail(leg);
      return;
    }
    a.dialing = leg.uuid;
    leg.onResult = (ok, detail) => {
      a.dialing = undefined;
      if (!ok) {
        fail(detail);
        return;
      }
      if (a.phase !== 'answered') {
        this.hangup(leg, 'ORIGINATOR_CANCEL', { disposition: 'send_bye' });
        return;
      }
      a.vars.set('originate_disposition', 'SUCCESS');
      this.bridge(a, leg);
    };
    this.launch(leg);
  }

  private startEavesdrop(sup: Channel, target: string, threeWay: boolean, appUuid: string): void {
    const app = threeWay ? 'three_way' : 'eavesdrop';
    sup.app = { name: app, arg: target };
    this.execEvent('CHANNEL_EXECUTE', sup, app, target, appUuid);
    const t = this.channels.get(target);
    if (!t || t === sup || t.phase === 'hangup') {
      this.execEvent('CHANNEL_EXECUTE_COMPLETE', sup, app, target, appUuid, '_none_');
      this.hangup(sup, 'NORMAL_CLEARING', { disposition: 'send_bye' });
      return;
    }
    sup.vars.set('eavesdrop_target_uuid', target);
    sup.vars.set('eavesdrop_app_uuid', appUuid);
    sup.eavesdrop = {
      target,
      whisperA: threeWay || truthy(sup.vars.get('eavesdrop_whisper_aleg')),
      whisperB: threeWay || truthy(sup.vars.get('eavesdrop_whisper_bleg')),
    };
  }

  private endEavesdrop(sup: Channel): void {
    const e = sup.eavesdrop;
    if (!e) return;
    sup.eavesdrop = undefined;
    const app = sup.app?.name ?? 'eavesdrop';
    this.execEvent('CHANNEL_EXECUTE_COMPLETE', sup, app, e.target, sup.vars.get('eavesdrop_app_uuid') ?? randomUUID(), '_none_');
    this.hangup(sup, 'NORMAL_CLEARING', { disposition: 'send_bye' });
  }

  private originate(args: string, done: (body: string) => void): void {
    const req = parseOriginate(args);
    if ('error' in req) {
      done(req.error);
      return;
    }
    if (req.target.kind === 'app' && !ORIGINATE_APPS.has(req.target.app)) {
      done(`-ERR Invalid Application ${req.target.app}\n`);
      return;
    }
    const ch = this.newChannel(req);
    if (typeof ch === 'string') {
      done(`-ERR ${ch}\n`);
      return;
    }
    ch.onResult = (ok, detail) => done(ok ? `+OK ${detail}\n` : `-ERR ${detail}\n`);
    ch.afterAnswer = () => this.startTarget(ch, req);
    this.launch(ch);
  }

  private startTarget(ch: Channel, req: OriginateRequest): void {
    if (req.target.kind === 'app') this.runApp(ch, req.target.app, req.target.arg, { inline: true });
    else this.route(ch, req.target.exten, req.target.dialplan);
  }

  /** Where a transfer or an originate to an extension goes: inline apps, park, a registered user. */
  private route(ch: Channel, dest: string, dialplan: string): void {
    if (dialplan.toLowerCase() === 'inline') {
      const first = dest.split(',')[0] ?? '';
      const colon = first.indexOf(':');
      const app = (colon < 0 ? first : first.slice(0, colon)).toLowerCase();
      const arg = colon < 0 ? '' : first.slice(colon + 1);
      if (ORIGINATE_APPS.has(app)) this.runApp(ch, app, arg, { inline: true });
      else this.hangup(ch, 'NO_ROUTE_DESTINATION', { disposition: 'send_bye' });
      return;
    }
    if (dest === 'park') {
      this.park(ch);
      return;
    }
    const [extension = '', domain] = dest.split('@');
    if (this.isRegistered(extension, domain)) this.appBridge(ch, `user/${dest}`, randomUUID());
    else this.hangup(ch, 'NO_ROUTE_DESTINATION', { disposition: 'send_bye' });
  }

  // ---------------------------------------------------------------- recordings

  private resolveRecording(file: string): string {
    return path.isAbsolute(file) ? file : path.join(this.opts.recordingsDir, file);
  }

  private recordStart(ch: Channel, file: string, limitSec?: number): boolean {
    if (ch.recordings.has(file)) return true;
    try {
      mkdirSync(path.dirname(file), { recursive: true });
    } catch {
      return false;
    }
    const rec: { startedAt: number; limit?: ClockTimer } = { startedAt: this.opts.clock.now() };
    if (limitSec && limitSec > 0) rec.limit = this.schedule(ch, limitSec * 1000, () => this.recordStop(ch, file));
    ch.recordings.set(file, rec);
    this.emitChannel('RECORD_START', ch, [['Record-File-Path', file]]);
    return true;
  }

  /** Writes the WAV (8 kHz 16-bit mono, a 440 Hz tone of the recorded length, at least one second). */
  private recordStop(ch: Channel, file: string): void {
    const rec = ch.recordings.get(file);
    if (!rec) return;
    ch.recordings.delete(file);
    this.cancel(ch, rec.limit);
    const elapsed = this.opts.clock.now() - rec.startedAt;
    const durationMs = Math.min(this.opts.maxRecordMs, Math.max(1000, elapsed));
    let completion = 'success';
    try {
      writeFileSync(file, wavBuffer({ durationMs, sampleRate: 8000 }));
    } catch {
      completion = 'failure';
    }
    ch.vars.set('record_ms', String(durationMs));
    ch.vars.set('record_seconds', String(Math.floor(durationMs / 1000)));
    ch.vars.set('record_samples', String(Math.round(durationMs * 8)));
    this.emitChannel('RECORD_STOP', ch, [
      ['Record-File-Path', file],
      ['Record-Completion-Cause', completion],
    ]);
  }

  // ---------------------------------------------------------------- api commands

  private live(uuid: string | undefined): Channel | undefined {
    const ch = uuid ? this.channels.get(uuid) : undefined;
    return ch && ch.phase !== 'hangup' ? ch : undefined;
  }

  private cmdKill(argv: string[]): string {
    if (!argv[0]) return USAGE.kill;
    const ch = this.live(argv[0]);
    if (!ch) return NO_SUCH_CHANNEL;
    if (ch.phase === 'ringing') this.hangup(ch, this.causeOr(argv[1], 'ORIGINATOR_CANCEL'), { disposition: 'send_cancel' });
    else this.hangup(ch, this.causeOr(argv[1], 'NORMAL_CLEARING'), { disposition: 'send_bye' });
    return '+OK\n';
  }

  private cmdHold(argv: string[]): string {
    let mode: 'on' | 'off' | 'toggle' = 'on';
    let i = 0;
    if (argv[0] === 'off' || argv[0] === 'toggle') {
      mode = argv[0];
      i = 1;
    }
    if (!argv[i]) return USAGE.hold;
    const ch = this.live(argv[i]);
    if (!ch) return NO_SUCH_CHANNEL;
    if (ch.phase !== 'answered') return '-ERR Operation failed\n';
    const hold = mode === 'toggle' ? !ch.held : mode === 'on';
    if (hold !== ch.held) {
      ch.held = hold;
      ch.callState = hold ? 'HELD' : 'ACTIVE';
      this.emitChannel(hold ? 'CHANNEL_HOLD' : 'CHANNEL_UNHOLD', ch);
    }
    return '+OK Success\n';
  }

  private cmdAudio(argv: string[]): string {
    const [uuid, action, direction, kind, level] = argv;
    if (!uuid || !action) return USAGE.audio;
    const ch = this.live(uuid);
    if (!ch) return NO_SUCH_CHANNEL;
    if (action === 'stop') {
      ch.muted = { read: false, write: false };
      return '+OK Success\n';
    }
    if (action !== 'start' || (direction !== 'read' && direction !== 'write') || (kind !== 'mute' && kind !== 'level')) return USAGE.audio;
    if (kind === 'mute') ch.muted[direction] = level === undefined ? true : Number(level) !== 0;
    else if (level === undefined || !/^-?\d+$/.test(level)) return USAGE.audio;
    return '+OK Success\n';
  }

  private cmdBridge(argv: string[]): string {
    if (!argv[0] || !argv[1]) return USAGE.bridge;
    const a = this.live(argv[0]);
    const b = this.live(argv[1]);
    if (!a || !b || a === b || a.phase !== 'answered' || b.phase !== 'answered') return '-ERR Invalid uuid\n';
    this.bridge(a, b);
    return `+OK ${b.uuid}\n`;
  }

  private cmdTransfer(argv: string[]): string {
    const args = [...argv];
    let leg: 'aleg' | 'bleg' | 'both' = 'aleg';
    if (args[1] === '-bleg' || args[1] === '-both') {
      leg = args[1] === '-bleg' ? 'bleg' : 'both';
      args.splice(1, 1);
    }
    const [uuid, dest, dialplan = 'XML'] = args;
    if (!uuid || !dest) return USAGE.transfer;
    const ch = this.live(uuid);
    if (!ch) return NO_SUCH_CHANNEL;
    const partner = ch.bridge ? this.live(ch.bridge.partner) : undefined;
    if (leg === 'bleg' && !partner) return '-ERR No B-leg\n';
    const targets = leg === 'aleg' ? [ch] : leg === 'bleg' ? [partner!] : [ch, ...(partner ? [partner] : [])];
    if (ch.bridge && partner) {
      this.unbridge(ch, partner);
      for (const p of [ch, partner]) if (!targets.includes(p)) this.afterUnbridge(p);
    }
    for (const t of targets) {
      if (t.phase !== 'answered') continue;
      if (t.eavesdrop) t.eavesdrop = undefined;
      this.route(t, dest, dialplan);
    }
    return '+OK\n';
  }

  /**
   * `uuid_broadcast <uuid> <path>|<app>::<arg> [leg]`: the switch accepts it at once and runs the
   * application on each leg; playback, speak and sleep are modeled (a playback of a file that does
   * not exist ends at once `FILE NOT FOUND`, a speak with an engine not loaded ends at once having
   * said nothing), hangup hangs up, and any other application ends at once doing nothing.
   */
  private cmdBroadcast(argv: string[]): string {
    const [uuid, quoted, legArg = 'aleg'] = argv;
    if (!uuid || !quoted) return USAGE.broadcast;
    const ch = this.live(uuid);
    if (!ch) return NO_SUCH_CHANNEL;
    const what = unquote(quoted);
    const partner = ch.bridge ? this.live(ch.bridge.partner) : undefined;
    const legs = legArg === 'bleg' ? (partner ? [partner] : []) : legArg === 'both' ? [ch, ...(partner ? [partner] : [])] : [ch];
    const sep = what.indexOf('::');
    const app = sep < 0 ? 'playback' : what.slice(0, sep).toLowerCase();
    const arg = sep < 0 ? what : what.slice(sep + 2);
    for (const leg of legs) {
      if (app === 'hangup') {
        this.hangup(leg, this.causeOr(arg, 'NORMAL_CLEARING'), { disposition: 'send_bye' });
        continue;
      }
      const appUuid = randomUUID();
      this.execEvent('CHANNEL_EXECUTE', leg, app, arg, appUuid);
      this.playMedia(leg, app, arg, (response) => {
        if (leg.phase === 'hangup') return;
        leg.vars.set('current_application_response', response);
        this.execEvent('CHANNEL_EXECUTE_COMPLETE', leg, app, arg, appUuid, response);
      });
    }
    return '+OK Message queued\n';
  }

  /**
   * How long a media application runs on the leg and what it answers (Application-Response, as
   * mod_dptools sets it): a missing file plays nothing (`FILE NOT FOUND`); speech with a loaded
   * engine takes time in proportion to its text and is remembered per channel; speech with any
   * other engine says nothing (FreeSWITCH logs `Invalid TTS module`).
   */
  private mediaApp(ch: Channel, app: string, arg: string): { ms: number; response: string } {
    switch (app) {
      case 'sleep':
        return { ms: Number(arg) || 0, response: '_none_' };
      case 'playback':
        return this.playable(arg) ? { ms: this.promptMs(arg), response: 'FILE PLAYED' } : { ms: 0, response: 'FILE NOT FOUND' };
      case 'speak': {
        const parts = arg.split('|');
        const [engine = '', voice = '', ...words] = parts.length >= 3 ? parts : ['', '', ...parts];
        const text = words.join('|');
        if (!MODULES.has(`mod_${engine}`) || text.trim() === '') return { ms: 0, response: '_none_' };
        const spoken: SpokenText = { engine, voice, text, at: new Date(this.opts.clock.now()).toISOString() };
        ch.spoken.push(spoken);
        this.logSpoken(ch.uuid, spoken);
        return { ms: Math.max(1, Math.round(text.length * this.opts.speechMsPerChar)), response: '_none_' };
      }
      default:
        return { ms: 0, response: '_none_' };
    }
  }

  /**
   * Runs playback/speak/sleep for its length; `done` gets the application's response when it ends,
   * whether it ran out or was broken (uuid_break, killAudio): mod_dptools answers a broken
   * playback `FILE PLAYED` as a finished one (SWITCH_STATUS_BREAK), and speak and sleep set no
   * response. A simulated consumer hears what is audible: a speak's text or a played file.
   */
  private playMedia(ch: Channel, app: string, arg: string, done: (response: string) => void): void {
    const { ms, response } = this.mediaApp(ch, app, arg);
    if (ms <= 0) {
      done(response);
      return;
    }
    const audible = app === 'speak' || app === 'playback';
    const run: MediaRun = {
      end: () => {
        if (!ch.media.delete(run)) return;
        this.cancel(ch, run.timer);
        done(response);
        if (audible) ch.consumer?.mediaEnded();
      },
    };
    ch.media.add(run);
    run.timer = this.schedule(ch, ms, run.end);
    if (audible) ch.consumer?.mediaStarted(app === 'speak' ? (ch.spoken[ch.spoken.length - 1]?.text ?? '') : null);
  }

  /**
   * `uuid_break <uuid> [all|both]`: ends what the channel is playing now (CF_BREAK, or stopping the
   * broadcast). The simulator runs broadcasts at once instead of queueing them, so every playback,
   * speak and sleep running on the channel ends; `all` (flush the queue) adds nothing. `both` also
   * breaks the bridged partner.
   */
  private cmdBreak(rest: string): string {
    if (rest === '') return USAGE.break;
    const sp = rest.indexOf(' ');
    const uuid = sp < 0 ? rest : rest.slice(0, sp);
    const flag = sp < 0 ? '' : rest.slice(sp + 1);
    const ch = this.live(uuid);
    if (!ch) return NO_SUCH_CHANNEL;
    this.breakMedia(ch);
    if (flag.includes('both') && ch.bridge) {
      const partner = this.live(ch.bridge.partner);
      if (partner) this.breakMedia(partner);
    }
    return '+OK\n';
  }

  private breakMedia(ch: Channel): void {
    for (const run of [...ch.media]) run.end();
  }

  /**
   * `uuid_audio_fork` (mod_audio_fork's fork_function): start, stop, send_text, pause, resume. The
   * module answers `-ERR Operation Failed` for every refusal. Modeled: mix type mono only (the
   * channel's far end), rates 8k/16k or a multiple of 8000 Hz up to 64000, on an answered channel
   * (no early media is modeled); graceful-shutdown is not modeled and refused.
   */
  private cmdAudioFork(rest: string): string {
    const cmd = parseForkCommand(rest);
    if (typeof cmd === 'string') return cmd;
    const ch = this.live(cmd.uuid);
    if (!ch) return FORK_FAILED;
    switch (cmd.action) {
      case 'start': {
        const url = forkUrl(cmd.url);
        const rate = forkRate(cmd.rate);
        if (cmd.mix !== 'mono' || !url || !rate || ch.phase !== 'answered' || ch.forks.has(cmd.bugname)) return FORK_FAILED;
        const username = ch.vars.get('MOD_AUDIO_BASIC_AUTH_USERNAME');
        const fork = new AudioForkSession(ch.uuid, cmd.bugname, url, rate, cmd.metadata, {
          clock: this.opts.clock,
          emit: (subclass, body) => {
            if (ch.phase !== 'hangup') this.emitChannel('CUSTOM', ch, [], { subclass, body });
          },
          breakMedia: () => this.breakMedia(ch),
          render: (r, fromMs, count) => (ch.consumer ? ch.consumer.render(r, fromMs, count) : new Int16Array(count)),
          basicAuth: username ? { username, password: ch.vars.get('MOD_AUDIO_BASIC_AUTH_PASSWORD') ?? '' } : undefined,
          tempDir: this.opts.tempDir,
        });
        ch.forks.set(cmd.bugname, fork);
        this.attachConsumer(ch, rate);
        fork.connect();
        return FORK_OK;
      }
      case 'stop': {
        const fork = ch.forks.get(cmd.bugname);
        if (!fork) return FORK_FAILED;
        ch.forks.delete(cmd.bugname);
        fork.close(cmd.text);
        return FORK_OK;
      }
      case 'send_text': {
        const fork = ch.forks.get(cmd.bugname);
        if (!fork || cmd.text === undefined) return FORK_FAILED;
        fork.sendText(cmd.text);
        return FORK_OK;
      }
      case 'pause':
      case 'resume': {
        const fork = ch.forks.get(cmd.bugname);
        if (!fork) return FORK_FAILED;
        fork.setPaused(cmd.action === 'pause');
        return FORK_OK;
      }
      default:
        return FORK_FAILED;
    }
  }

  /**
   * A human-answered consumer number ending 40-49 with a fork attached is a simulated consumer
   * (docs/simulated-consumer.md): it speaks its script into the fork and hangs up by its own rule
   * instead of at talkMs.
   */
  private attachConsumer(ch: Channel, rate: number): void {
    if (ch.consumer || ch.kind !== 'pstn' || ch.direction === 'inbound' || ch.outcome?.kind !== 'human') return;
    const script = scriptFor(ch.destination);
    if (!script) return;
    this.cancel(ch, ch.talkTimer);
    ch.talkTimer = undefined;
    const log: ConsumerLine[] = [];
    if (this.consumerLog.size >= SPOKEN_HISTORY) this.consumerLog.delete(this.consumerLog.keys().next().value!);
    this.consumerLog.set(ch.uuid, log);
    ch.consumer = new SimulatedConsumer(ch.uuid, script, rate, {
      clock: this.opts.clock,
      synthesize: this.opts.synthesize,
      mediaRunning: () => ch.media.size > 0,
      hangup: () => this.hangup(ch, 'NORMAL_CLEARING', { disposition: 'recv_bye', sipStatus: 200 }),
      talkMs: this.opts.talkMs,
      replyDelayMs: this.opts.consumerReplyMs,
      patienceMs: this.opts.consumerPatienceMs,
      onLine: (_uuid, line) => log.push({ ...line }),
    });
  }

  /** Tone and silence streams always play; a file path plays only when the file exists (relative paths: the recordings folder). */
  private playable(file: string): boolean {
    if (/^(silence_stream|tone_stream):\/\//.test(file)) return true;
    return existsSync(this.resolveRecording(file));
  }

  private logSpoken(uuid: string, spoken: SpokenText): void {
    const list = this.spokenLog.get(uuid);
    if (list) {
      list.push({ ...spoken });
      return;
    }
    if (this.spokenLog.size >= SPOKEN_HISTORY) this.spokenLog.delete(this.spokenLog.keys().next().value!);
    this.spokenLog.set(uuid, [{ ...spoken }]);
  }

  private cmdRecord(argv: string[]): string {
    const [uuid, action, file, limit] = argv;
    if (!uuid || !action || !file) return USAGE.record;
    const ch = this.live(uuid);
    if (!ch) return NO_SUCH_CHANNEL;
    return this.recordCommand(ch, action.toLowerCase(), file, limit);
  }

  /**
   * uuid_record's and record_session's work on a live channel. FreeSWITCH records only a channel
   * whose media is up (switch_ivr_record_session: "Media not enabled on channel"): a leg still
   * ringing (the simulator models no early media) is refused.
   */
  private recordCommand(ch: Channel, action: string, file: string, limit?: string): string {
    if (!file) return USAGE.record;
    switch (action) {
      case 'start': {
        if (ch.phase !== 'answered') return '-ERR Cannot record session!\n';
        const limitSec = limit !== undefined && /^\d+$/.test(limit) ? Number(limit) : undefined;
        return this.recordStart(ch, this.resolveRecording(file), limitSec) ? '+OK Success\n' : '-ERR Cannot record session!\n';
      }
      case 'stop': {
        const files = file === 'all' ? [...ch.recordings.keys()] : [this.resolveRecording(file)];
        if (!files.some((f) => ch.recordings.has(f))) return '-ERR Cannot stop record session!\n';
        for (const f of files) this.recordStop(ch, f);
        return '+OK Success\n';
      }
      case 'mask':
      case 'unmask':
        return ch.recordings.has(this.resolveRecording(file)) ? '+OK Success\n' : '-ERR Cannot mask recording session!\n';
      default:
        return USAGE.record;
    }
  }

  private cmdDump(argv: string[]): string {
    if (!argv[0]) return USAGE.dump;
    const ch = this.channels.get(argv[0]);
    if (!ch) return NO_SUCH_CHANNEL;
    const headers: Array<[string, string]> = [['Event-Name', 'CHANNEL_DATA'], ...this.channelData(ch)];
    if (argv[1] === 'json') return JSON.stringify(Object.fromEntries(headers));
    return headers.map(([k, v]) => `${k}: ${v}\n`).join('');
  }

  private channelRow(ch: Channel): Record<(typeof CHANNEL_COLUMNS)[number], string> {
    return {
      uuid: ch.uuid,
      direction: 'outbound',
      created: stamp(ch.createdAt),
      created_epoch: String(Math.floor(ch.createdAt / 1000)),
      name: ch.name,
      state: ch.fsState,
      cid_name: ch.cidName,
      cid_num: ch.cidNumber,
      ip_addr: '',
      dest: ch.destination,
      application: ch.app?.name ?? '',
      application_data: ch.app?.arg ?? '',
      dialplan: 'XML',
      context: 'default',
      read_codec: 'PCMU',
      read_rate: '8000',
      read_bit_rate: '64000',
      write_codec: 'PCMU',
      write_rate: '8000',
      write_bit_rate: '64000',
      secure: '',
      hostname: this.opts.hostname,
      presence_id: '',
      presence_data: '',
      accountcode: '',
      callstate: ch.callState,
      callee_name: 'Outbound Call',
      callee_num: ch.destination,
      callee_direction: '',
      call_uuid: ch.uuid,
      sent_callee_name: '',
      sent_callee_num: '',
      initial_cid_name: ch.cidName,
      initial_cid_num: ch.cidNumber,
      initial_ip_addr: '',
      initial_dest: ch.destination,
      initial_dialplan: 'XML',
      initial_context: 'default',
    };
  }

  /** `show channels|calls [count] [as json|as delim <d>]`. */
  private cmdShow(argv: string[]): string {
    const what = (argv[0] ?? '').toLowerCase();
    if (what !== 'channels' && what !== 'calls') return `-USAGE: show channels|calls [count] [as json|as delim <delim>]\n`;
    const live = [...this.channels.values()].filter((c) => c.phase !== 'hangup');
    let rows: Array<Record<string, string>>;
    if (what === 'channels') {
      rows = live.map((c) => this.channelRow(c));
    } else {
      rows = [];
      for (const c of live) {
        if (c.bridge && !c.bridge.originator) continue;
        const row: Record<string, string> = { ...this.channelRow(c) };
        const b = c.bridge ? this.channels.get(c.bridge.partner) : undefined;
        const brow = b ? this.channelRow(b) : undefined;
        for (const col of CHANNEL_COLUMNS) row[`b_${col}`] = brow ? brow[col] : '';
        row.call_created_epoch = row.created_epoch!;
        rows.push(row);
      }
    }
    if (argv[1] === 'count') return `\n${rows.length} total.\n`;
    const asIdx = argv.indexOf('as');
    const format = asIdx >= 0 ? (argv[asIdx + 1] ?? '').toLowerCase() : '';
    if (format === 'json') return JSON.stringify(rows.length ? { row_count: rows.length, rows } : { row_count: 0 });
    const delim = format === 'delim' ? (argv[asIdx + 2] ?? ',') : ',';
    const cols = rows[0] ? Object.keys(rows[0]) : [...CHANNEL_COLUMNS];
    const lines = [cols.join(delim), ...rows.map((r) => cols.map((c) => r[c] ?? '').join(delim))];
    return `${lines.join('\n')}\n\n${rows.length} total.\n`;
  }

  private cmdStatus(): string {
    let ms = this.opts.clock.now() - this.startedAt;
    const unit = (n: number) => {
      const v = Math.floor(ms / n);
      ms -= v * n;
      return v;
    };
    const years = unit(365 * 86_400_000);
    const days = unit(86_400_000);
    const hours = unit(3_600_000);
    const minutes = unit(60_000);
    const seconds = unit(1000);
    return (
      `UP ${years} years, ${days} days, ${hours} hours, ${minutes} minutes, ${seconds} seconds, ${ms} milliseconds, 0 microseconds\n` +
      'FreeSWITCH (Version 1.10.12-release+dialer-switch-simulator 64bit) is ready\n' +
      `${this.sessionCounter} session(s) since startup\n` +
      `${this.channels.size} session(s) - peak ${this.peak}, last 5min ${this.peak} \n` +
      '0 session(s) per Sec out of max 30, peak 0, last 5min 0 \n' +
      '1000 session(s) max\n' +
      'min idle cpu 0.00/99.00\n' +
      'Current Stack Size/Max 240K/8192K\n'
    );
  }

  /**
   * `sim_register <extension>[@<domain>] <username> <password> [expires_sec]`: a softphone REGISTERs
   * (the registrar challenges it and checks the digest against the product's directory). The domain
   * defaults to the switch's hostname, the expiry to 3600 s.
   */
  private cmdRegister(argv: string[], done: (body: string) => void): void {
    const [target, username, password, expires] = argv;
    if (!target || !username || !password) {
      done(USAGE.register);
      return;
    }
    const [extension = '', domain = this.opts.hostname] = target.split('@');
    const expiresSec = expires === undefined ? 3600 : /^\d{1,6}$/.test(expires) ? Number(expires) : NaN;
    void this.registrar.register({ extension, domain, username, password, expiresSec }).then(done);
  }

  /** `sim_unregister <extension>[@<domain>]`: the softphone's REGISTER with Expires: 0. */
  private cmdUnregister(argv: string[]): string {
    const target = argv[0];
    if (!target) return USAGE.unregister;
    const [extension = '', domain] = target.split('@');
    const n = this.registrar.unregister(extension, domain);
    return n > 0 ? `+OK unregistered ${target}\n` : `-ERR not registered ${target}\n`;
  }

  /** `sim_answer_delay <extension> <ms>`: agent legs to the extension ring this long before the softphone answers (0: at once). */
  private cmdAnswerDelay(argv: string[]): string {
    const [extension, ms] = argv;
    if (!extension || !ms || !/^\d{1,7}$/.test(ms)) return USAGE.answerDelay;
    if (Number(ms) === 0) this.answerDelays.delete(extension);
    else this.answerDelays.set(extension, Number(ms));
    return '+OK\n';
  }

  /**
   * `sofia profile <profile> flush_inbound_reg [<user>[@<host>]] [reboot]`, FreeSWITCH's words:
   * `<user>@<host>` drops that user's registrations on that host, a bare `<user>` drops them on
   * every host, no target drops all (each with a sofia::unregister). Only the one profile exists; another is FreeSWITCH's `Invalid Profile` answer.
   */
  private cmdSofia(argv: string[]): string {
    const [word, profile, action, target] = argv;
    if (word === 'status' && profile === 'gateway' && action) return this.gateways.status(action);
    if (word === 'profile' && profile === GATEWAY_PROFILE && action === 'killgw') return target ? this.gateways.kill(target) : '-ERR missing gw name\n';
    if (word !== 'profile' || !profile || action !== 'flush_inbound_reg') {
      return '-ERR the simulator implements only: sofia profile <profile> flush_inbound_reg [<user>[@<host>]] [reboot], sofia profile external startgw|killgw <gateway>, sofia status gateway <gateway>\n';
    }
    if (profile !== SOFIA_PROFILE) return `Invalid Profile [${profile}]`;
    const [user, host] = target === undefined || target === 'reboot' ? [undefined, undefined] : target.split('@');
    this.registrar.flush(user, host);
    return '+OK flushing all registrations matching specified call_id\n';
  }

  private cmdDtmf(argv: string[]): string {
    const [uuid, digits, duration] = argv;
    if (!uuid || !digits) return USAGE.dtmf;
    if (!/^[0-9*#A-Da-d]+$/.test(digits)) return '-ERR invalid DTMF digits\n';
    const ch = this.live(uuid);
    if (!ch) return NO_SUCH_CHANNEL;
    if (ch.phase !== 'answered') return '-ERR Channel not answered\n';
    const samples = duration !== undefined && /^\d+$/.test(duration) ? String(Number(duration) * 8) : '2000';
    for (const digit of digits.toUpperCase()) {
      if (ch.phase !== 'answered') break;
      this.emitChannel('DTMF', ch, [
        ['DTMF-Digit', digit],
        ['DTMF-Duration', samples],
        ['DTMF-Source', 'RTP'],
      ]);
      if (ch.eavesdrop && ch.vars.get('eavesdrop_enable_dtmf') !== 'false') {
        const modes: Record<string, [boolean, boolean]> = { '0': [false, false], '1': [false, true], '2': [true, false], '3': [true, true] };
        const m = modes[digit];
        if (m) [ch.eavesdrop.whisperA, ch.eavesdrop.whisperB] = m;
      }
    }
    return '+OK\n';
  }

  /** What a speech recognizer reports for one consumer utterance: CUSTOM dd::speech (docs/ai-calls.md). */
  private cmdSpeech(argv: string[]): string {
    const [uuid, ...words] = argv;
    if (!uuid || words.length === 0) return USAGE.speech;
    const ch = this.live(uuid);
    if (!ch) return NO_SUCH_CHANNEL;
    if (ch.phase !== 'answered') return '-ERR Channel not answered\n';
    this.emitChannel('CUSTOM', ch, [['Speech-Text', words.join(' ')]], { subclass: 'dd::speech' });
    return '+OK\n';
  }

  /**
   * A call from the PSTN (`from`) to a DID (`to`), left as the inbound dialplan leaves it
   * (docs/freeswitch/dialplan/public.xml): marked dd_direction=inbound with dd_did, parked and not
   * answered (CHANNEL_CREATE, then CHANNEL_PARK). The caller hangs up talkMs after an answer.
   */
  private cmdInbound(argv: string[]): string {
    const [from, to, wanted] = argv;
    if (!from || !to || !/^\+?\d{8,15}$/.test(to) || !/^\+?\d{3,15}$/.test(from)) return USAGE.inbound;
    const uuid = wanted || randomUUID();
    if (this.channels.has(uuid)) return '-ERR uuid in use\n';
    const did = `+${to.replace(/^\+/, '')}`;
    const now = this.opts.clock.now();
    const ch: Channel = {
      uuid,
      kind: 'pstn',
      direction: 'inbound',
      name: `sofia/external/${from}@pstn`,
      destination: to,
      cidName: from,
      cidNumber: from,
      vars: new Map([
        ['direction', 'inbound'],
        ['uuid', uuid],
        ['session_id', String(++this.sessionCounter)],
        ['dd_direction', 'inbound'],
        ['dd_did', did],
        ['hangup_after_bridge', 'true'],
      ]),
      phase: 'ringing',
      fsState: 'CS_INIT',
      callState: 'RINGING',
      createdAt: now,
      progressAt: now,
      held: false,
      muted: { read: false, write: false },
      timers: new Set(),
      recordings: new Map(),
      spoken: [],
      media: new Set(),
      forks: new Map(),
    };
    this.channels.set(uuid, ch);
    this.peak = Math.max(this.peak, this.channels.size);
    this.emitChannel('CHANNEL_CREATE', ch);
    this.park(ch);
    return `+OK ${uuid}\n`;
  }

  /** uuid_answer: answers a ringing inbound call (an originated leg is answered by its far end). */
  private cmdAnswer(argv: string[]): string {
    const ch = this.live(argv[0]);
    if (!argv[0]) return USAGE.answer;
    if (!ch) return NO_SUCH_CHANNEL;
    if (ch.phase === 'ringing' && ch.direction === 'inbound') this.answer(ch);
    return '+OK\n';
  }

  private cmdRemoteHangup(argv: string[]): string {
    if (!argv[0]) return USAGE.hangup;
    const ch = this.live(argv[0]);
    if (!ch) return NO_SUCH_CHANNEL;
    const answered = ch.phase === 'answered';
    this.hangup(ch, this.causeOr(argv[1], 'NORMAL_CLEARING'), { disposition: answered ? 'recv_bye' : 'recv_cancel', sipStatus: answered ? 200 : 487 });
    return '+OK\n';
  }
}

