import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Connection, type Event as ModeslEvent } from 'modesl';
import { Counter, Gauge, type Registry } from 'prom-client';
import { EslCommandError, EslTimeoutError, EslUnavailableError, isErrorReply } from './errors';
import { fromModeslEvent, headerText, type EslEvent } from './events';
import { LivenessProbe, type LivenessClock } from './liveness';

/**
 * The one event-socket connection the product keeps to FreeSWITCH (or the simulator), on modesl.
 *
 * - connects and authenticates, then subscribes (`event json ...`) to ESL_EVENTS; the link is
 *   `up` only once the subscription is acknowledged;
 * - when the socket drops (or connecting fails) it is `down` and reconnects after a capped
 *   exponential back-off with jitter, for ever, until close();
 * - api()/bgapi()/submit() reject at once with EslUnavailableError while down, with
 *   EslTimeoutError (an EslUnavailableError) when no reply comes in time, and with EslCommandError
 *   when the switch answers `-ERR`;
 * - a half-open link (TCP up, switch silent) is caught by a liveness probe: nothing heard from the
 *   switch (HEARTBEAT events, replies, the probe's own `api status`) for livenessTimeoutMs destroys
 *   the socket, and the link takes the same reconnect-and-resubscribe path as after a drop;
 * - every event arrives as an `event` (EslEvent); `up` carries `{ reconnect: true }` after a
 *   re-connection so consumers can reconcile live calls (`show channels as json`); `down` and
 *   `retry` report losses and scheduled reconnection attempts.
 *
 * Commands never carry a newline (protocol injection): such a command is refused with a TypeError.
 * Logs name the command verb only: originate arguments hold phone numbers.
 */

/**
 * Events the product subscribes to. BACKGROUND_JOB and CHANNEL_EXECUTE_COMPLETE (modesl's required
 * events) come first: after the word CUSTOM every further word is a subclass. HEARTBEAT keeps an
 * idle link audible to the liveness probe.
 */
export const ESL_EVENTS: readonly string[] = [
  'BACKGROUND_JOB',
  'CHANNEL_EXECUTE_COMPLETE',
  'HEARTBEAT',
  'CHANNEL_CREATE',
  'CHANNEL_PROGRESS',
  'CHANNEL_PROGRESS_MEDIA',
  'CHANNEL_ANSWER',
  'CHANNEL_BRIDGE',
  'CHANNEL_UNBRIDGE',
  'CHANNEL_HOLD',
  'CHANNEL_UNHOLD',
  'CHANNEL_PARK',
  'CHANNEL_EXECUTE',
  'CHANNEL_HANGUP',
  'CHANNEL_HANGUP_COMPLETE',
  'DTMF',
  'RECORD_START',
  'RECORD_STOP',
  'CUSTOM',
  'amd',
  'sofia::register',
  'sofia::unregister',
  'sofia::expire',
  'dd::speech',
  // The consumer's audio stream to the AI's audio gateway (docs/ai-calls.md).
  'mod_audio_fork::connect',
  'mod_audio_fork::connect_failed',
  'mod_audio_fork::disconnect',
];

export interface EslLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface EslManagerOptions {
  host: string;
  port: number;
  password: string;
  logger: EslLogger;
  /**
   * Registers esl_connection_up, esl_reconnects_total, esl_commands_total{kind,outcome},
   * esl_liveness_failures_total and esl_last_event_age_seconds.
   */
  metrics?: { registry: Registry };
  /** Events to subscribe to; default ESL_EVENTS. */
  events?: readonly string[];
  /** Reply timeout of api() and of bgapi()/submit() acceptance; default 5000 ms. */
  commandTimeoutMs?: number;
  /** Timeout of a bgapi() job result (an originate waits for answer); default 60000 ms. */
  jobTimeoutMs?: number;
  /** TCP connect plus authentication plus subscription; default 5000 ms. */
  connectTimeoutMs?: number;
  /** Reconnect delay: min(maxMs, initialMs * 2^attempt), jittered to 50-100 %. Default 250 ms / 30 s. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Jitter source; default Math.random. */
  random?: () => number;
  /**
   * Silence (nothing at all from the switch) after which an up link is declared half-open and
   * reconnected; an `api status` probe goes out after a third of it. Default 15000 ms.
   */
  livenessTimeoutMs?: number;
  /** Time source of the liveness probe; default the system clock. */
  livenessClock?: LivenessClock;
}

export type EslLinkState = 'up' | 'down';

export interface EslHealth {
  state: EslLinkState;
  /** When the link entered this state (ISO 8601). */
  since: string;
  /** Most recent connection error, kept after recovery; null when none has happened. */
  lastError: string | null;
  /** Successful re-connections after a loss. */
  reconnects: number;
  /** close() was called: no further reconnection. */
  closed: boolean;
}

export interface CommandOptions {
  timeoutMs?: number;
}

export interface EslManagerEventMap {
  event: [EslEvent];
  up: [{ reconnect: boolean }];
  down: [{ error: string | null }];
  /** A reconnection is scheduled after a failed or lost connection. */
  retry: [{ error: string | null; attempt: number; delayMs: number }];
}

export interface EslManager extends EventEmitter<EslManagerEventMap> {
  health(): EslHealth;
  isUp(): boolean;
  /** Resolves when the link is up; rejects EslUnavailableError after timeoutMs (default 5000). */
  waitUntilUp(timeoutMs?: number): Promise<void>;
  /** `api <command>`: resolves the response body. */
  api(command: string, opts?: CommandOptions): Promise<string>;
  /** `bgapi <command>`: resolves the BACKGROUND_JOB body (timeoutMs bounds the whole job). */
  bgapi(command: string, opts?: CommandOptions): Promise<string>;
  /** `bgapi <command>` without waiting for the job: resolves once the switch accepted it. */
  submit(command: string, opts?: CommandOptions): Promise<{ jobUuid: string }>;
  /** Stops reconnecting, fails in-flight commands, sends `exit` and closes the socket. */
  close(): Promise<void>;
}

/** Delay before reconnect attempt `attempt` (0-based): equal jitter over a capped exponential. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

interface Metrics {
  up: Gauge;
  reconnects: Counter;
  commands: Counter<'kind' | 'outcome'>;
  livenessFailures: Counter;
}

/** The manager whose silence a registry's esl_last_event_age_seconds reports (the last one created on it). */
const silenceSources = new WeakMap<Registry, () => number>();

function metricsOn(registry: Registry, silenceMs: () => number): Metrics {
  const get = <T>(name: string, make: () => T): T => (registry.getSingleMetric(name) as T | undefined) ?? make();
  silenceSources.set(registry, silenceMs);
  get(
    'esl_last_event_age_seconds',
    () =>
      new Gauge({
        name: 'esl_last_event_age_seconds',
        help: 'Seconds since the switch last sent anything (event, heartbeat, reply) on the event-socket link',
        registers: [registry],
        collect() {
          const source = silenceSources.get(registry);
          if (source) this.set(source() / 1000);
        },
      }),
  );
  return {
    livenessFailures: get(
      'esl_liveness_failures_total',
      () =>
        new Counter({
          name: 'esl_liveness_failures_total',
          help: 'Event-socket links found half-open (silent past the liveness timeout) and reconnected',
          registers: [registry],
        }),
    ),
    up: get('esl_connection_up', () => new Gauge({ name: 'esl_connection_up', help: '1 while the switch event-socket link is up', registers: [registry] })),
    reconnects: get(
      'esl_reconnects_total',
      () => new Counter({ name: 'esl_reconnects_total', help: 'Re-connections to the switch after the link was lost', registers: [registry] }),
    ),
    commands: get(
      'esl_commands_total',
      () =>
        new Counter({
          name: 'esl_commands_total',
          help: 'Switch commands by kind (api, bgapi) and outcome (ok, error, unavailable, timeout)',
          labelNames: ['kind', 'outcome'] as const,
          registers: [registry],
        }),
    ),
  };
}

type Outcome = 'ok' | 'error' | 'unavailable' | 'timeout';

interface InFlight {
  fail(err: Error): void;
}

interface Tracker<T> {
  arm(ms: number): void;
  ok(value: T): void;
  refuse(reply: string): void;
}

const verb = (command: string): string => command.trim().split(/\s+/)[0] ?? '';

class EslManagerImpl extends EventEmitter<EslManagerEventMap> implements EslManager {
  private conn: Connection | null = null;
  private state: EslLinkState = 'down';
  private since = new Date();
  private lastError: string | null = null;
  /** Error seen on the current connection attempt. */
  private connError: string | null = null;
  private reconnects = 0;
  private attempt = 0;
  private everUp = false;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<InFlight>();
  private readonly jobs = new Map<string, (ev: EslEvent) => void>();
  private readonly metrics: Metrics | undefined;
  private readonly liveness: LivenessProbe;
  private readonly o: Required<Omit<EslManagerOptions, 'metrics' | 'backoff' | 'livenessClock'>> & { initialMs: number; maxMs: number };

  constructor(opts: EslManagerOptions) {
    super();
    this.o = {
      host: opts.host,
      port: opts.port,
      password: opts.password,
      logger: opts.logger,
      events: opts.events ?? ESL_EVENTS,
      commandTimeoutMs: opts.commandTimeoutMs ?? 5000,
      jobTimeoutMs: opts.jobTimeoutMs ?? 60_000,
      connectTimeoutMs: opts.connectTimeoutMs ?? 5000,
      random: opts.random ?? Math.random,
      initialMs: opts.backoff?.initialMs ?? 250,
      maxMs: opts.backoff?.maxMs ?? 30_000,
      livenessTimeoutMs: opts.livenessTimeoutMs ?? 15_000,
    };
    this.liveness = new LivenessProbe({
      timeoutMs: this.o.livenessTimeoutMs,
      clock: opts.livenessClock,
      probe: () => this.probe(),
      dead: (silentMs) => this.onSilent(silentMs),
    });
    this.metrics = opts.metrics ? metricsOn(opts.metrics.registry, () => this.liveness.silenceMs()) : undefined;
    this.metrics?.up.set(0);
  }

  // ------------------------------------------------------------ link

  connect(): void {
    if (this.closed || this.conn) return;
    const { host, port, password, logger } = this.o;
    logger.debug({ host, port, attempt: this.attempt }, 'esl connecting');
    this.connError = null;
    const conn = new Connection(host, port, password, () => this.onAuthenticated(conn));
    this.conn = conn;
    const socket = conn.socket!;
    // modesl writes a command in several small writes: without this, Nagle holds them back.
    socket.setNoDelay(true);
    socket.setTimeout(this.o.connectTimeoutMs, () => {
      if (this.conn === conn && this.state !== 'up') {
        this.connError = 'timed out connecting to the switch';
        socket.destroy();
      }
    });
    conn.on('error', (err: unknown) => {
      if (this.conn === conn && !this.connError) this.connError = err instanceof Error ? err.message : String(err);
    });
    conn.on('esl::event::auth::fail', () => {
      this.connError = 'authentication failed';
      socket.destroy();
    });
    conn.on('esl::event::**', (ev: unknown, headers: unknown) => this.onFrame(conn, ev as ModeslEvent, headers as Record<string, unknown> | undefined));
    socket.on('data', () => {
      if (this.conn === conn) this.liveness.heard();
    });
    socket.on('close', () => this.onClose(conn));
  }

  private onAuthenticated(conn: Connection): void {
    if (this.conn !== conn) return;
    conn.events('json', [...this.o.events], (reply) => {
      if (this.conn !== conn) return;
      const text = headerText(reply, 'Reply-Text');
      if (!text.startsWith('+OK')) {
        this.connError = `event subscription refused: ${text}`;
        conn.socket?.destroy();
        return;
      }
      conn.socket?.setTimeout(0);
      this.markUp();
    });
  }

  private markUp(): void {
    const reconnect = this.everUp;
    if (reconnect) {
      this.reconnects++;
      this.metrics?.reconnects.inc();
    }
    this.everUp = true;
    this.attempt = 0;
    this.state = 'up';
    this.since = new Date();
    this.metrics?.up.set(1);
    this.liveness.start();
    this.o.logger.info({ host: this.o.host, port: this.o.port, reconnect }, 'esl link up');
    this.emit('up', { reconnect });
  }

  private onClose(conn: Connection): void {
    if (this.conn !== conn) return;
    this.conn = null;
    this.liveness.stop();
    conn.removeAllListeners();
    conn.on('error', () => undefined);
    const wasUp = this.state === 'up';
    if (!this.closed) this.lastError = this.connError ?? 'connection closed by the switch';
    this.state = 'down';
    if (wasUp) this.since = new Date();
    this.metrics?.up.set(0);
    this.failAll(new EslUnavailableError(this.closed ? 'ESL manager closed' : 'connection to the switch lost'));
    if (wasUp) {
      if (this.closed) this.o.logger.info({}, 'esl link closed');
      else this.o.logger.warn({ error: this.lastError }, 'esl link down');
      this.emit('down', { error: this.closed ? null : this.lastError });
    }
    if (!this.closed) this.scheduleReconnect();
  }

  /** Asks the switch for any answer; the reply itself is only a sign of life (see heard()). */
  private probe(): void {
    const conn = this.conn;
    if (!conn || this.state !== 'up') return;
    this.o.logger.debug({ silentMs: this.liveness.silenceMs() }, 'esl liveness probe');
    try {
      conn.api('status', () => undefined);
    } catch (err) {
      this.o.logger.debug({ err }, 'esl liveness probe not sent');
    }
  }

  /** Half-open: the socket looks connected but nothing comes back. Drop it; onClose reconnects. */
  private onSilent(silentMs: number): void {
    const conn = this.conn;
    if (!conn || this.state !== 'up') return;
    this.connError = `no traffic from the switch for ${silentMs} ms (half-open link)`;
    this.metrics?.livenessFailures.inc();
    this.o.logger.warn({ host: this.o.host, port: this.o.port, silentMs, timeoutMs: this.o.livenessTimeoutMs }, 'esl link silent, reconnecting');
    conn.socket?.destroy();
  }

  private scheduleReconnect(): void {
    const delay = backoffDelay(this.attempt++, this.o.initialMs, this.o.maxMs, this.o.random);
    this.o.logger.debug({ delayMs: delay, attempt: this.attempt, error: this.lastError }, 'esl reconnect scheduled');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect();
    }, delay);
    try {
      this.emit('retry', { error: this.lastError, attempt: this.attempt, delayMs: delay });
    } catch (err) {
      this.o.logger.error({ err }, 'esl retry listener failed');
    }
  }

  private onFrame(conn: Connection, ev: ModeslEvent, headers: Record<string, unknown> | undefined): void {
    if (this.conn !== conn) return;
    const type = headers?.['Content-Type'];
    if (type !== 'text/event-json' && type !== 'text/event-plain') return;
    const event = fromModeslEvent(ev);
    if (event.name === 'BACKGROUND_JOB' && event.jobUuid) {
      const handler = this.jobs.get(event.jobUuid);
      if (handler) {
        this.jobs.delete(event.jobUuid);
        handler(event);
      }
    }
    try {
      this.emit('event', event);
    } catch (err) {
      this.o.logger.error({ err, event: event.name }, 'esl event listener failed');
    }
  }

  private failAll(err: Error): void {
    const all = [...this.inFlight];
    this.inFlight.clear();
    this.jobs.clear();
    for (const f of all) f.fail(err);
  }

  // ------------------------------------------------------------ commands

  private count(kind: 'api' | 'bgapi', outcome: Outcome): void {
    this.metrics?.commands.inc({ kind, outcome });
  }

  private ready(command: string, kind: 'api' | 'bgapi'): Connection {
    if (/[\r\n]/.test(command) || command.trim() === '') throw new TypeError('an ESL command is one non-empty line');
    if (this.state !== 'up' || !this.conn || !this.conn.socket) {
      this.count(kind, 'unavailable');
      throw new EslUnavailableError(this.closed ? 'ESL manager closed' : 'switch control link is down', command);
    }
    return this.conn;
  }

  /** Tracks one command: settles once, and fails on disconnect or when its timeout (arm) expires. */
  private track<T>(kind: 'api' | 'bgapi', command: string, resolve: (v: T) => void, reject: (e: Error) => void): Tracker<T> {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (outcome: Outcome, fn: () => void): void => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      this.inFlight.delete(entry);
      this.count(kind, outcome);
      fn();
    };
    const entry: InFlight = { fail: (err) => settle(err instanceof EslTimeoutError ? 'timeout' : 'unavailable', () => reject(err)) };
    this.inFlight.add(entry);
    return {
      arm: (ms) => {
        if (done) return;
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => entry.fail(new EslTimeoutError(command, ms)), ms);
      },
      ok: (value) => settle('ok', () => resolve(value)),
      refuse: (reply) => settle('error', () => reject(new EslCommandError(command, reply))),
    };
  }

  api(command: string, opts: CommandOptions = {}): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const conn = this.ready(command, 'api');
      const t = this.track('api', command, resolve, reject);
      t.arm(opts.timeoutMs ?? this.o.commandTimeoutMs);
      this.o.logger.debug({ command: verb(command) }, 'esl api');
      conn.api(command, (res) => {
        const body = res.getBody() ?? '';
        if (isErrorReply(body)) t.refuse(body.trim());
        else t.ok(body);
      });
    });
  }

  /** Sends `bgapi` with our own Job-UUID; the command/reply says whether the switch took the job. */
  private sendBgapi(conn: Connection, command: string, onAccepted: () => void, onRefused: (reply: string) => void): string {
    const jobUuid = randomUUID();
    this.o.logger.debug({ command: verb(command), jobUuid }, 'esl bgapi');
    conn.sendRecv(`bgapi ${command}`, { 'Job-UUID': jobUuid }, (reply) => {
      const text = headerText(reply, 'Reply-Text');
      if (text.startsWith('+OK')) onAccepted();
      else onRefused(text);
    });
    return jobUuid;
  }

  bgapi(command: string, opts: CommandOptions = {}): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const conn = this.ready(command, 'bgapi');
      let jobUuid = '';
      const t = this.track('bgapi', command, resolve, (err) => {
        this.jobs.delete(jobUuid);
        reject(err);
      });
      t.arm(this.o.commandTimeoutMs);
      jobUuid = this.sendBgapi(
        conn,
        command,
        () => t.arm(opts.timeoutMs ?? this.o.jobTimeoutMs),
        (reply) => t.refuse(reply),
      );
      this.jobs.set(jobUuid, (ev) => {
        if (isErrorReply(ev.body)) t.refuse(ev.body.trim());
        else t.ok(ev.body);
      });
    });
  }

  submit(command: string, opts: CommandOptions = {}): Promise<{ jobUuid: string }> {
    return new Promise<{ jobUuid: string }>((resolve, reject) => {
      const conn = this.ready(command, 'bgapi');
      const t = this.track('bgapi', command, resolve, reject);
      t.arm(opts.timeoutMs ?? this.o.commandTimeoutMs);
      const jobUuid: string = this.sendBgapi(
        conn,
        command,
        () => t.ok({ jobUuid }),
        (reply) => t.refuse(reply),
      );
    });
  }

  // ------------------------------------------------------------ state

  health(): EslHealth {
    return { state: this.state, since: this.since.toISOString(), lastError: this.lastError, reconnects: this.reconnects, closed: this.closed };
  }

  isUp(): boolean {
    return this.state === 'up';
  }

  waitUntilUp(timeoutMs = 5000): Promise<void> {
    if (this.state === 'up') return Promise.resolve();
    if (this.closed) return Promise.reject(new EslUnavailableError('ESL manager closed'));
    return new Promise<void>((resolve, reject) => {
      const onUp = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.off('up', onUp);
        reject(new EslUnavailableError(`switch control link not up within ${timeoutMs} ms${this.lastError ? `: ${this.lastError}` : ''}`));
      }, timeoutMs);
      this.once('up', onUp);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.liveness.stop();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const conn = this.conn;
    const socket = conn?.socket;
    // A link not yet authenticated has nothing to say goodbye to, and modesl's disconnect() on a
    // socket still connecting nulls the socket its connect callback then parses (a TypeError out of
    // the event loop): drop it instead.
    if (!conn || !socket || socket.destroyed || this.state !== 'up') {
      socket?.destroy();
      if (conn) this.onClose(conn);
      this.failAll(new EslUnavailableError('ESL manager closed'));
      return;
    }
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      const force = setTimeout(() => socket.destroy(), 1000);
      force.unref();
      try {
        conn.disconnect();
      } catch {
        socket.destroy();
      }
    });
    this.failAll(new EslUnavailableError('ESL manager closed'));
  }
}

/** Creates the manager and starts connecting at once (see waitUntilUp). */
export function createEslManager(options: EslManagerOptions): EslManager {
  const manager = new EslManagerImpl(options);
  manager.connect();
  return manager;
}
