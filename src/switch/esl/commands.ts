import { randomUUID } from 'node:crypto';
import { EslCommandError, EslTimeoutError } from './errors';
import type { EslEvent } from './events';
import type { EslManager } from './manager';

/**
 * The switch commands the product's activities call, as FreeSWITCH api strings over the one ESL
 * manager. Every argument is validated before it reaches the wire (an ESL command is one line, and
 * a channel variable value cannot break out of `{...}`); a bad argument is a TypeError.
 *
 * Failures: EslUnavailableError (503 esl_unavailable), EslCommandError (502; `switchCause` holds
 * the FreeSWITCH cause, e.g. USER_BUSY, USER_NOT_REGISTERED).
 */

export type Endpoint =
  /** A consumer (PSTN) number through a SIP gateway: `sofia/gateway/<gateway>/<number>`. */
  | { type: 'pstn'; number: string; gateway?: string }
  /** A registered SIP extension: `user/<extension>[@<domain>]`. */
  | { type: 'agent'; extension: string; domain?: string };

/** What the originated leg does once answered. */
export type LegApp =
  | { app: 'park' }
  | { app: 'bridge'; to: Endpoint; variables?: ChannelVariables }
  | { app: 'playback'; path: string }
  | { app: 'eavesdrop'; targetUuid: string };

export type ChannelVariables = Record<string, string | number | boolean>;

export interface OriginateParams {
  to: Endpoint;
  /** origination_uuid: the call uuid (CallAttempt.call_uuid); generated when absent. */
  uuid?: string;
  callerIdNumber?: string;
  callerIdName?: string;
  /** originate_timeout in seconds (ringing longer than this ends NO_ANSWER). */
  timeoutSec?: number;
  /** Run answering-machine detection on answer (execute_on_answer=amd). */
  amd?: boolean;
  /** Extra channel variables, echoed by every event as variable_<name> (dd_call_id, dd_attempt_id, ...). */
  variables?: ChannelVariables;
  /** Default park. */
  then?: LegApp;
}

export type EavesdropMode = 'listen' | 'whisper' | 'barge';

export interface EavesdropParams {
  /** The leg to listen to; whisper speaks to this leg only, so pass the agent leg. */
  targetUuid: string;
  supervisor: { extension: string; domain?: string };
  mode: EavesdropMode;
  uuid?: string;
  callerIdNumber?: string;
  callerIdName?: string;
  variables?: ChannelVariables;
}

export interface SwitchCommandsOptions {
  /** Gateway of PSTN endpoints without one; default `default`. */
  gateway?: string;
  /** Domain of agent endpoints without one (FreeSWITCH's default domain when unset). */
  agentDomain?: string;
  /** Timeout of commands that wait for a leg to answer (agent, supervisor legs); default 30 s. */
  answerTimeoutMs?: number;
  /** Sofia profile the agents register on; default `internal` (FreeSWITCH's stock registration profile). */
  sipProfile?: string;
  /** Sofia profile the PSTN gateways live on; default `external` (FreeSWITCH's stock gateway profile). */
  gatewayProfile?: string;
}

const UUID_RE = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
const EXTENSION_RE = /^[A-Za-z0-9._-]{1,64}$/;
const DOMAIN_RE = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;
const NUMBER_RE = /^\+?[0-9]{2,20}$/;
const GATEWAY_RE = /^[A-Za-z0-9._-]{1,64}$/;
const VAR_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const CAUSE_RE = /^[A-Z_]{3,40}$/;
const PATH_RE = /^[^\s'"{}()\\]{1,1024}$/;
const DTMF_RE = /^[0-9*#A-D]{1,64}$/;

function check(ok: boolean, what: string): void {
  if (!ok) throw new TypeError(`invalid ${what}`);
}

export function assertUuid(uuid: string): void {
  check(UUID_RE.test(uuid), 'call uuid');
}

/** One `name=value` of a `{...}` block; values with spaces or commas are single-quoted. */
function encodeVar(name: string, value: string | number | boolean): string {
  check(VAR_NAME_RE.test(name), `channel variable name ${JSON.stringify(name)}`);
  const v = String(value);
  check(v.length <= 1024 && !/[\r\n'{}\\[\]<>^]/.test(v), `value of channel variable ${name}`);
  return `${name}=${/[\s,]/.test(v) ? `'${v}'` : v}`;
}

export function encodeVars(vars: Array<[string, string | number | boolean]>): string {
  return vars.length === 0 ? '' : `{${vars.map(([k, v]) => encodeVar(k, v)).join(',')}}`;
}

export function dialString(to: Endpoint, defaults: SwitchCommandsOptions = {}): string {
  if (to.type === 'pstn') {
    const gateway = to.gateway ?? defaults.gateway ?? 'default';
    check(NUMBER_RE.test(to.number), 'destination number');
    check(GATEWAY_RE.test(gateway), 'gateway');
    return `sofia/gateway/${gateway}/${to.number}`;
  }
  const domain = to.domain ?? defaults.agentDomain;
  check(EXTENSION_RE.test(to.extension), 'extension');
  if (domain !== undefined) check(DOMAIN_RE.test(domain), 'domain');
  return `user/${to.extension}${domain ? `@${domain}` : ''}`;
}

function appString(then: LegApp, defaults: SwitchCommandsOptions): string {
  switch (then.app) {
    case 'park':
      return '&park()';
    case 'bridge':
      return `&bridge(${encodeVars(Object.entries(then.variables ?? {}))}${dialString(then.to, defaults)})`;
    case 'playback':
      check(PATH_RE.test(then.path), 'prompt path');
      return `&playback(${then.path})`;
    case 'eavesdrop':
      assertUuid(then.targetUuid);
      return `&eavesdrop(${then.targetUuid})`;
  }
}

/** The `originate ...` api command and the uuid the new leg will have. */
export function buildOriginate(p: OriginateParams, defaults: SwitchCommandsOptions = {}): { uuid: string; command: string } {
  const uuid = p.uuid ?? randomUUID();
  assertUuid(uuid);
  const vars: Array<[string, string | number | boolean]> = [['origination_uuid', uuid]];
  if (p.callerIdNumber !== undefined) {
    check(NUMBER_RE.test(p.callerIdNumber), 'caller id number');
    vars.push(['origination_caller_id_number', p.callerIdNumber]);
  }
  if (p.callerIdName !== undefined) vars.push(['origination_caller_id_name', p.callerIdName]);
  if (p.timeoutSec !== undefined) {
    check(Number.isInteger(p.timeoutSec) && p.timeoutSec > 0 && p.timeoutSec <= 600, 'timeout');
    vars.push(['originate_timeout', p.timeoutSec]);
  }
  if (p.amd) vars.push(['execute_on_answer', 'amd']);
  for (const [k, v] of Object.entries(p.variables ?? {})) vars.push([k, v]);
  return { uuid, command: `originate ${encodeVars(vars)}${dialString(p.to, defaults)} ${appString(p.then ?? { app: 'park' }, defaults)}` };
}

export function eavesdropVariables(mode: EavesdropMode): Array<[string, string]> {
  switch (mode) {
    case 'listen':
      return [['eavesdrop_whisper_aleg', 'false'], ['eavesdrop_whisper_bleg', 'false']];
    case 'whisper':
      return [['eavesdrop_whisper_aleg', 'true'], ['eavesdrop_whisper_bleg', 'false']];
    case 'barge':
      return [['eavesdrop_whisper_aleg', 'true'], ['eavesdrop_whisper_bleg', 'true']];
  }
}

/**
 * `sofia profile <profile> flush_inbound_reg <extension>[@<domain>]`: FreeSWITCH expires the
 * matching registrations at once (by user and host; a bare user matches it on any host).
 */
export function buildFlushRegistration(profile: string, extension: string, domain?: string): string {
  check(GATEWAY_RE.test(profile), 'sofia profile');
  check(EXTENSION_RE.test(extension), 'extension');
  if (domain !== undefined) check(DOMAIN_RE.test(domain), 'domain');
  return `sofia profile ${profile} flush_inbound_reg ${extension}${domain ? `@${domain}` : ''}`;
}

/** `sofia status gateway <name>`: a status block, or `Invalid Gateway!` when the switch has no such gateway. */
export function buildGatewayStatus(gateway: string): string {
  check(GATEWAY_RE.test(gateway), 'gateway');
  return `sofia status gateway ${gateway}`;
}

/**
 * `sofia profile <profile> startgw|killgw <name>`: startgw makes FreeSWITCH fetch sofia.conf for that
 * one gateway (mod_xml_curl `configuration` binding, `gateway=<name>`) and add it; killgw removes it.
 */
export function buildGatewayCommand(profile: string, action: 'startgw' | 'killgw', gateway: string): string {
  check(GATEWAY_RE.test(profile), 'sofia profile');
  check(GATEWAY_RE.test(gateway), 'gateway');
  return `sofia profile ${profile} ${action} ${gateway}`;
}

export interface SwitchCommands {
  /** Places a leg; resolves once the switch accepted the job. Progress arrives as events. */
  originate(p: OriginateParams): Promise<{ uuid: string; jobUuid: string }>;
  /** Places a leg and waits for its answer; a failure rejects EslCommandError (switchCause = hangup cause). */
  originateAndWait(p: OriginateParams, timeoutMs?: number): Promise<{ uuid: string }>;
  hangup(uuid: string, cause?: string): Promise<void>;
  /** Answers a call the switch parked unanswered (an inbound call: uuid_answer). */
  answer(uuid: string): Promise<void>;
  hold(uuid: string): Promise<void>;
  unhold(uuid: string): Promise<void>;
  /** Mutes what the leg says (uuid_audio start read mute). */
  mute(uuid: string): Promise<void>;
  unmute(uuid: string): Promise<void>;
  bridge(uuidA: string, uuidB: string): Promise<void>;
  /** Sends the leg to a dialplan extension (`park`, a registered extension). */
  transfer(uuid: string, destination: string): Promise<void>;
  /** Plays a prompt to the leg (uuid_broadcast); CHANNEL_EXECUTE_COMPLETE tells when it ended. */
  playback(uuid: string, path: string, leg?: 'aleg' | 'bleg' | 'both'): Promise<void>;
  /**
   * Says text to the leg (buildSpeak) once the switch confirmed the engine's module is loaded (an
   * unloaded engine would say nothing and report nothing: FreeSWITCH only logs it), which rejects
   * EslCommandError. With `waitMs` it resolves when the speech ended (CHANNEL_EXECUTE_COMPLETE of
   * this speak on the leg) and rejects EslCommandError when the leg hangs up first, EslTimeoutError
   * after waitMs; without, CHANNEL_EXECUTE_COMPLETE tells when it ended.
   */
  speak(uuid: string, p: SpeakParams, opts?: { leg?: 'aleg' | 'bleg' | 'both'; waitMs?: number }): Promise<void>;
  /** A supervisor leg that eavesdrops on targetUuid in the given mode; resolves its uuid once answered. */
  eavesdrop(p: EavesdropParams): Promise<{ uuid: string }>;
  /** A supervisor leg bridged to consumerUuid in place of its current partner (the agent leg is released). */
  takeover(p: { consumerUuid: string; supervisor: { extension: string; domain?: string }; uuid?: string; variables?: ChannelVariables }): Promise<{ uuid: string }>;
  /** Starts recording to a WAV file path on the switch (RECORD_START / RECORD_STOP events). */
  record(uuid: string, path: string, limitSec?: number): Promise<void>;
  stopRecording(uuid: string, path?: string): Promise<void>;
  exists(uuid: string): Promise<boolean>;
  getVariable(uuid: string, name: string): Promise<string | null>;
  /** Live channels (`show channels as json`), e.g. to reconcile after a reconnect. */
  channels(): Promise<Array<Record<string, string>>>;
  /**
   * Drops the extension's SIP registrations (buildFlushRegistration). Any answer but `+OK` rejects
   * EslCommandError: FreeSWITCH answers an unknown profile without `-ERR`.
   */
  flushRegistration(extension: string, domain?: string): Promise<void>;
  /** Whether the switch has the gateway now (buildGatewayStatus). */
  gatewayKnown(gateway: string): Promise<boolean>;
  /**
   * Asks the switch to load the gateway from its configuration binding (startgw). FreeSWITCH answers
   * `+OK` whether or not the binding served it: gatewayKnown tells.
   */
  startGateway(gateway: string): Promise<void>;
  /** Removes the gateway from the switch (killgw); one the switch does not have is not an error. */
  killGateway(gateway: string): Promise<void>;
  /**
   * Simulator only: a softphone REGISTERs the extension with a credential the switch's directory
   * serves (digest-checked); agent legs to it then answer (real FreeSWITCH answers -ERR).
   */
  registerExtension(p: { extension: string; domain?: string; username: string; password: string; expiresSec?: number }): Promise<void>;
  /** Simulator only. */
  unregisterExtension(extension: string, domain?: string): Promise<void>;
  /** Simulator only: the far end presses keys. */
  simulateDtmf(uuid: string, digits: string): Promise<void>;
  /** Simulator only: the far end says `text` (a CUSTOM dd::speech event). */
  simulateSpeech(uuid: string, text: string): Promise<void>;
  /** Whether the switch has the module loaded (`module_exists mod_<name>`). */
  moduleLoaded(name: string): Promise<boolean>;
  /**
   * Streams the leg's audio to a websocket (mod_audio_fork, buildAudioForkStart); the module reports
   * CUSTOM `mod_audio_fork::connect` or `mod_audio_fork::connect_failed`.
   */
  startAudioFork(uuid: string, p: AudioForkParams): Promise<void>;
  stopAudioFork(uuid: string): Promise<void>;
  /** Stops what the leg is playing or speaking (`uuid_break`; `all` also drops what is queued). */
  breakMedia(uuid: string, all?: boolean): Promise<void>;
}

export interface AudioForkParams {
  url: string;
  sampleRate: '8k' | '16k';
  /** Sent by the module as the socket's first text frame: one line, no spaces (JSON.stringify has none). */
  metadata: string;
}

const WS_URL_RE = /^wss?:\/\/[^\s'"{}\\]{1,1024}$/;

/** `uuid_audio_fork <uuid> start <url> mono <8k|16k> <metadata>` (drachtio's mod_audio_fork, the consumer's leg only). */
export function buildAudioForkStart(uuid: string, p: AudioForkParams): string {
  assertUuid(uuid);
  check(WS_URL_RE.test(p.url), 'audio fork url');
  check(/^[^\s'\\]{1,1024}$/.test(p.metadata), 'audio fork metadata');
  return `uuid_audio_fork ${uuid} start ${p.url} mono ${p.sampleRate} ${p.metadata}`;
}

/** What the switch's `speak` application says: the TTS engine (a loaded module, `mod_<engine>`), its voice and the text. */
export interface SpeakParams {
  engine: string;
  voice: string;
  text: string;
}

const TTS_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;
/**
 * Speech text travels single-quoted in one ESL line, then is split by `speak` on `|` and expanded
 * for `${...}` variables: no control character (a newline would end the command), no quote or
 * backslash (FreeSWITCH's argument quoting), no `|` and no `$`.
 */
const SPEECH_TEXT_RE = /^[^\p{Cc}'"\\|$]{1,2000}$/u;
export const MAX_SPEECH_TEXT = 2000;

/**
 * A text the product chose, made speakable by `speak`: whitespace (line breaks included) collapsed,
 * straight quotes turned typographic (they read the same), the characters the switch would
 * interpret (`\`, `|`, `$`) dropped. What this answers is what the switch says and what the call's
 * timeline records.
 */
export function speakableText(text: string): string {
  return text
    .replace(/'/g, '\u2019')
    .replace(/"/g, '\u201d')
    .replace(/[\\|$]/g, ' ')
    .replace(/[\p{Cc}\s]+/gu, ' ')
    .trim()
    .slice(0, MAX_SPEECH_TEXT)
    .trim();
}

/** `uuid_broadcast <uuid> 'speak::<engine>|<voice>|<text>' <leg>` (mod_dptools speak through the broadcast). */
export function buildSpeak(uuid: string, p: SpeakParams, leg: 'aleg' | 'bleg' | 'both' = 'aleg'): string {
  assertUuid(uuid);
  check(TTS_NAME_RE.test(p.engine), 'TTS engine');
  check(TTS_NAME_RE.test(p.voice), 'TTS voice');
  check(SPEECH_TEXT_RE.test(p.text) && p.text.trim() !== '', 'speech text');
  return `uuid_broadcast ${uuid} 'speak::${p.engine}|${p.voice}|${p.text}' ${leg}`;
}

export function createSwitchCommands(esl: EslManager, defaults: SwitchCommandsOptions = {}): SwitchCommands {
  const answerTimeoutMs = defaults.answerTimeoutMs ?? 30_000;
  const run = async (command: string): Promise<void> => {
    await esl.api(command);
  };
  const cause = (c: string) => {
    check(CAUSE_RE.test(c), 'hangup cause');
    return c;
  };
  const ext = (extension: string, domain?: string) => {
    check(EXTENSION_RE.test(extension), 'extension');
    if (domain !== undefined) check(DOMAIN_RE.test(domain), 'domain');
    return domain ? `${extension}@${domain}` : extension;
  };

  const originateAndWait = async (p: OriginateParams, timeoutMs = answerTimeoutMs) => {
    const { uuid, command } = buildOriginate(p, defaults);
    await esl.bgapi(command, { timeoutMs });
    return { uuid };
  };

  return {
    async originate(p) {
      const { uuid, command } = buildOriginate(p, defaults);
      const { jobUuid } = await esl.submit(command);
      return { uuid, jobUuid };
    },
    originateAndWait,
    async hangup(uuid, c = 'NORMAL_CLEARING') {
      assertUuid(uuid);
      await run(`uuid_kill ${uuid} ${cause(c)}`);
    },
    async answer(uuid) {
      assertUuid(uuid);
      await run(`uuid_answer ${uuid}`);
    },
    async hold(uuid) {
      assertUuid(uuid);
      await run(`uuid_hold ${uuid}`);
    },
    async unhold(uuid) {
      assertUuid(uuid);
      await run(`uuid_hold off ${uuid}`);
    },
    async mute(uuid) {
      assertUuid(uuid);
      await run(`uuid_audio ${uuid} start read mute 1`);
    },
    async unmute(uuid) {
      assertUuid(uuid);
      await run(`uuid_audio ${uuid} stop`);
    },
    async bridge(a, b) {
      assertUuid(a);
      assertUuid(b);
      await run(`uuid_bridge ${a} ${b}`);
    },
    async transfer(uuid, destination) {
      assertUuid(uuid);
      check(EXTENSION_RE.test(destination), 'destination');
      await run(`uuid_transfer ${uuid} ${destination}`);
    },
    async playback(uuid, path, leg = 'aleg') {
      assertUuid(uuid);
      check(PATH_RE.test(path), 'prompt path');
      await run(`uuid_broadcast ${uuid} ${path} ${leg}`);
    },
    async speak(uuid, p, opts = {}) {
      const command = buildSpeak(uuid, p, opts.leg);
      const loaded = (await esl.api(`module_exists mod_${p.engine}`)).trim();
      if (loaded !== 'true') throw new EslCommandError(command, `-ERR TTS_ENGINE_NOT_LOADED mod_${p.engine}`);
      if (opts.waitMs === undefined) {
        await run(command);
        return;
      }
      const data = `${p.engine}|${p.voice}|${p.text}`;
      let settle: ((err: Error | null) => void) | null = null;
      const ended = new Promise<void>((resolve, reject) => {
        settle = (err) => (err ? reject(err) : resolve());
      });
      // Settled while the command is still in flight; awaited below.
      ended.catch(() => undefined);
      const onEvent = (ev: EslEvent) => {
        if (ev.uuid !== uuid) return;
        if (ev.name === 'CHANNEL_EXECUTE_COMPLETE' && ev.headers.Application === 'speak' && ev.headers['Application-Data'] === data) settle?.(null);
        else if (ev.name === 'CHANNEL_HANGUP') settle?.(new EslCommandError(command, `-ERR ${ev.headers['Hangup-Cause'] || 'NORMAL_CLEARING'} the leg hung up while speaking`));
      };
      const timer = setTimeout(() => settle?.(new EslTimeoutError(command, opts.waitMs!)), opts.waitMs);
      esl.on('event', onEvent);
      try {
        await run(command);
        await ended;
      } finally {
        clearTimeout(timer);
        esl.off('event', onEvent);
      }
    },
    eavesdrop: async (p) =>
      originateAndWait({
        to: { type: 'agent', ...p.supervisor },
        uuid: p.uuid,
        callerIdNumber: p.callerIdNumber,
        callerIdName: p.callerIdName,
        variables: { ...Object.fromEntries(eavesdropVariables(p.mode)), eavesdrop_enable_dtmf: false, ...p.variables },
        then: { app: 'eavesdrop', targetUuid: p.targetUuid },
      }),
    async takeover(p) {
      assertUuid(p.consumerUuid);
      const { uuid } = await originateAndWait({ to: { type: 'agent', ...p.supervisor }, uuid: p.uuid, variables: p.variables });
      try {
        await run(`uuid_bridge ${p.consumerUuid} ${uuid}`);
      } catch (err) {
        await run(`uuid_kill ${uuid} NORMAL_CLEARING`).catch(() => undefined);
        throw err;
      }
      return { uuid };
    },
    async record(uuid, path, limitSec) {
      assertUuid(uuid);
      check(PATH_RE.test(path), 'recording path');
      if (limitSec !== undefined) check(Number.isInteger(limitSec) && limitSec > 0, 'recording limit');
      await run(`uuid_record ${uuid} start ${path}${limitSec !== undefined ? ` ${limitSec}` : ''}`);
    },
    async stopRecording(uuid, path = 'all') {
      assertUuid(uuid);
      check(PATH_RE.test(path), 'recording path');
      await run(`uuid_record ${uuid} stop ${path}`);
    },
    async exists(uuid) {
      assertUuid(uuid);
      return (await esl.api(`uuid_exists ${uuid}`)).trim() === 'true';
    },
    async getVariable(uuid, name) {
      assertUuid(uuid);
      check(VAR_NAME_RE.test(name), 'variable name');
      const v = (await esl.api(`uuid_getvar ${uuid} ${name}`)).replace(/\n$/, '');
      return v === '_undef_' ? null : v;
    },
    async channels() {
      const body = await esl.api('show channels as json');
      const parsed = JSON.parse(body) as { rows?: Array<Record<string, string>> };
      return parsed.rows ?? [];
    },
    async flushRegistration(extension, domain) {
      const command = buildFlushRegistration(defaults.sipProfile ?? 'internal', extension, domain);
      const reply = await esl.api(command);
      if (!reply.startsWith('+OK')) throw new EslCommandError(command, reply.startsWith('-ERR') ? reply : `-ERR ${reply}`);
    },
    async gatewayKnown(gateway) {
      const reply = await esl.api(buildGatewayStatus(gateway));
      return !reply.trim().startsWith('Invalid Gateway');
    },
    async startGateway(gateway) {
      await run(buildGatewayCommand(defaults.gatewayProfile ?? 'external', 'startgw', gateway));
    },
    async killGateway(gateway) {
      await run(buildGatewayCommand(defaults.gatewayProfile ?? 'external', 'killgw', gateway)).catch((err: unknown) => {
        if (!(err instanceof EslCommandError && /no such gateway/i.test(err.reply))) throw err;
      });
    },
    async registerExtension(p) {
      check(/^[A-Za-z0-9._-]{1,128}$/.test(p.username), 'SIP username');
      check(/^[^\s]{1,256}$/.test(p.password), 'SIP password');
      if (p.expiresSec !== undefined) check(Number.isInteger(p.expiresSec) && p.expiresSec > 0, 'expires');
      await run(`sim_register ${ext(p.extension, p.domain)} ${p.username} ${p.password}${p.expiresSec !== undefined ? ` ${p.expiresSec}` : ''}`);
    },
    async unregisterExtension(extension, domain) {
      await run(`sim_unregister ${ext(extension, domain)}`);
    },
    async simulateDtmf(uuid, digits) {
      assertUuid(uuid);
      check(DTMF_RE.test(digits), 'DTMF digits');
      await run(`sim_dtmf ${uuid} ${digits}`);
    },
    async simulateSpeech(uuid, text) {
      assertUuid(uuid);
      check(/^[^\r\n]{1,2000}$/.test(text) && text.trim() !== '', 'speech text');
      await run(`sim_speech ${uuid} ${text}`);
    },
    async moduleLoaded(name) {
      check(/^mod_[a-z0-9_]{1,60}$/.test(name), 'module name');
      return (await esl.api(`module_exists ${name}`)).trim() === 'true';
    },
    async startAudioFork(uuid, p) {
      await run(buildAudioForkStart(uuid, p));
    },
    async stopAudioFork(uuid) {
      assertUuid(uuid);
      await run(`uuid_audio_fork ${uuid} stop`);
    },
    async breakMedia(uuid, all = false) {
      assertUuid(uuid);
      await run(`uuid_break ${uuid}${all ? ' all' : ''}`);
    },
  };
}
