import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/lib/logger';
import {
  createEslManager,
  createSwitchCommands,
  EslCommandError,
  EslTimeoutError,
  EslUnavailableError,
  type EslEvent,
  type EslManager,
  type EslManagerOptions,
} from '../../src/switch/esl';
import { createFakeClock, readWavHeader, startSwitchSimulator, type FakeClock, type SwitchSimulator } from '../../src/switch/simulator';
import { fakePassword, fakeRegisterArgs, fakeUsername, startFakeDirectory, type FakeDirectory } from '../helpers/fake-directory';

/**
 * The connection manager against the simulator over real TCP. The switch runs on a fake clock; the
 * manager's own timers (back-off, timeouts) are real but short, and every wait is for an event.
 */

const RING_MS = 500;
const TALK_MS = 3000;
const GUARD_MS = 5000;
const PASSWORD = 'sim-secret';
/** FreeSWITCH's default event-heartbeat-interval; the switch runs on the fake clock. */
const HEARTBEAT_MS = 20_000;

let clock: FakeClock;
let sim: SwitchSimulator;
let registry: Registry;
let dir: string;
let directory: FakeDirectory;

beforeAll(async () => {
  directory = await startFakeDirectory();
});
afterAll(() => directory.close());
const managers: EslManager[] = [];

function manager(overrides: Partial<EslManagerOptions> = {}): EslManager {
  const m = createEslManager({
    host: '127.0.0.1',
    port: sim.port,
    password: PASSWORD,
    logger: createLogger('silent'),
    metrics: { registry },
    backoff: { initialMs: 10, maxMs: 100 },
    ...overrides,
  });
  managers.push(m);
  return m;
}

/** Events the manager emits from now on, and a way to wait for one. */
function recorder(m: EslManager) {
  const events: EslEvent[] = [];
  const waiters = new Set<{ pred: (e: EslEvent) => boolean; resolve: (e: EslEvent) => void }>();
  m.on('event', (e) => {
    events.push(e);
    for (const w of waiters) {
      if (!w.pred(e)) continue;
      waiters.delete(w);
      w.resolve(e);
    }
  });
  return {
    events,
    waitFor(pred: (e: EslEvent) => boolean, label: string): Promise<EslEvent> {
      const found = events.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event ${label}; got ${events.map((e) => e.name).join(', ')}`)), GUARD_MS);
        waiters.add({
          pred,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
      });
    },
  };
}

function next(m: EslManager, name: 'up' | 'down' | 'retry', pred: (arg: any) => boolean = () => true): Promise<any> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${name} within ${GUARD_MS} ms`)), GUARD_MS);
    const listener = (arg: unknown) => {
      if (!pred(arg)) return;
      clearTimeout(timer);
      m.off(name, listener);
      resolve(arg);
    };
    m.on(name, listener);
  });
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  return m.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value ?? 0;
}

beforeEach(async () => {
  clock = createFakeClock();
  registry = new Registry();
  dir = mkdtempSync(path.join(os.tmpdir(), 'esl-manager-test-'));
  sim = await startSwitchSimulator({ clock, password: PASSWORD, ringMs: RING_MS, talkMs: TALK_MS, heartbeatMs: HEARTBEAT_MS, recordingsDir: dir });
  sim.useDirectory(directory.url, directory.credentials);
});

afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('ESL connection manager', () => {
  test('connects and authenticates through modesl, subscribes, and reports health and metrics', async () => {
    const m = manager();
    expect(m.health().state).toBe('down');
    await m.waitUntilUp();
    expect(m.isUp()).toBe(true);
    expect(m.health()).toMatchObject({ state: 'up', lastError: null, reconnects: 0, closed: false });
    expect(Date.parse(m.health().since)).toBeLessThanOrEqual(Date.now());
    expect(await metric('esl_connection_up')).toBe(1);
    expect(await m.api('status')).toMatch(/^UP /);
    expect(await metric('esl_commands_total', { kind: 'api', outcome: 'ok' })).toBe(1);
    expect(sim.connectionCount()).toBe(1);
  });

  test('-ERR answers reject EslCommandError (api and bgapi); a multi-line command is refused before the wire', async () => {
    const m = manager();
    await m.waitUntilUp();
    const err = await m.api('no_such_command x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EslCommandError);
    expect(err).toMatchObject({ reply: '-ERR no_such_command Command not found!', switchCause: 'no_such_command' });
    expect(await metric('esl_commands_total', { kind: 'api', outcome: 'error' })).toBe(1);

    const busy = await m.bgapi('originate error/USER_BUSY &park()').catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(EslCommandError);
    expect((busy as EslCommandError).switchCause).toBe('USER_BUSY');
    expect(await m.bgapi('echo job done')).toBe('job done');
    expect(await m.submit('echo fire and forget')).toEqual({ jobUuid: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    await expect(m.api('status\n\nexit')).rejects.toThrow(TypeError);
    expect(await m.api('echo still fine')).toBe('still fine');
  });

  test('a reply that does not come in time rejects EslTimeoutError; the late reply does not confuse the next command', async () => {
    const m = manager();
    const rec = recorder(m);
    await m.waitUntilUp();
    // api originate only answers when the call is answered: the fake clock is not moving.
    const slow = m.api('originate {origination_uuid=slow-1}sofia/gateway/default/5551230042 &park()', { timeoutMs: 50 }).catch((e: unknown) => e);
    await rec.waitFor((e) => e.name === 'CHANNEL_PROGRESS', 'ringing');
    const err = await slow;
    expect(err).toBeInstanceOf(EslTimeoutError);
    expect(err).toBeInstanceOf(EslUnavailableError);
    expect(await metric('esl_commands_total', { kind: 'api', outcome: 'timeout' })).toBe(1);
    clock.advance(RING_MS);
    await rec.waitFor((e) => e.name === 'CHANNEL_ANSWER', 'answer');
    expect(await m.api('echo after the late reply')).toBe('after the late reply');
    expect(m.isUp()).toBe(true);
  });

  test('survives the switch stopping and restarting: down, fast EslUnavailableError, up again, reconnect counted', async () => {
    const m = manager();
    await m.waitUntilUp();
    const port = sim.port;
    const rec = recorder(m);
    const inFlight = m.api('originate {origination_uuid=lost-1}sofia/gateway/default/5551230042 &park()').catch((e: unknown) => e);
    await rec.waitFor((e) => e.name === 'CHANNEL_PROGRESS', 'ringing');

    const down = next(m, 'down');
    await sim.stop();
    expect(await down).toEqual({ error: expect.any(String) });
    expect(m.health()).toMatchObject({ state: 'down', reconnects: 0 });
    expect(m.health().lastError).toBeTruthy();
    expect(await metric('esl_connection_up')).toBe(0);
    const lost = await inFlight;
    expect(lost).toBeInstanceOf(EslUnavailableError);
    expect((lost as Error).message).toBe('connection to the switch lost');

    const started = Date.now();
    const refused = await m.api('status').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EslUnavailableError);
    expect((refused as Error).message).toBe('switch control link is down');
    expect(Date.now() - started).toBeLessThan(500);
    await expect(m.bgapi('status')).rejects.toBeInstanceOf(EslUnavailableError);
    expect(await metric('esl_commands_total', { kind: 'api', outcome: 'unavailable' })).toBe(2);

    const up = next(m, 'up');
    sim = await startSwitchSimulator({ clock, port, password: PASSWORD, ringMs: RING_MS, talkMs: TALK_MS, recordingsDir: dir });
    sim.useDirectory(directory.url, directory.credentials);
    expect(await up).toEqual({ reconnect: true });
    expect(m.health()).toMatchObject({ state: 'up', reconnects: 1 });
    expect(await metric('esl_reconnects_total')).toBe(1);
    expect(await metric('esl_connection_up')).toBe(1);
    expect(await m.api('echo back')).toBe('back');

    // Events flow again on the new connection (the subscription was renewed).
    await m.api(`sim_register ${fakeRegisterArgs('1001')}`);
    await rec.waitFor((e) => e.subclass === 'sofia::register', 'register event after reconnect');
  });

  test('close() while the socket is still connecting drops it: nothing is parsed on a closed link, no retry', async () => {
    // In the same tick as the connect: the TCP handshake has not completed. modesl's disconnect()
    // would null the socket its connect callback then hands its parser (a TypeError thrown out of
    // the event loop, at shutdown or during a reconnect).
    const m = manager();
    const retried = jest.fn();
    m.on('retry', retried);
    await m.close();
    expect(m.health()).toMatchObject({ state: 'down', closed: true });
    // The handshake's turn of the event loop, and then some: an uncaught error there fails this test.
    await new Promise((r) => setTimeout(r, 50));
    expect(retried).not.toHaveBeenCalled();
    await expect(m.api('status')).rejects.toThrow('ESL manager closed');
  });

  test('close() ends cleanly: exit, no reconnection, commands refused', async () => {
    const m = manager();
    await m.waitUntilUp();
    const down = next(m, 'down');
    await m.close();
    expect(await down).toEqual({ error: null });
    expect(m.health()).toMatchObject({ state: 'down', closed: true });
    await expect(m.api('status')).rejects.toThrow('ESL manager closed');
    await expect(m.waitUntilUp(10)).rejects.toBeInstanceOf(EslUnavailableError);
    await m.close();
    const deadline = Date.now() + GUARD_MS;
    while (sim.connectionCount() > 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(sim.connectionCount()).toBe(0);
  });

  test('a wrong password keeps the link down with "authentication failed"', async () => {
    const m = manager({ password: 'wrong' });
    const retry = await next(m, 'retry');
    expect(retry).toMatchObject({ error: 'authentication failed', attempt: 1 });
    expect(m.health()).toMatchObject({ state: 'down', lastError: 'authentication failed' });
    const second = await next(m, 'retry');
    expect(second).toMatchObject({ error: 'authentication failed', attempt: 2 });
    expect(second.delayMs).toBeGreaterThanOrEqual(10);
    expect(second.delayMs).toBeLessThanOrEqual(20);
    await expect(m.waitUntilUp(1)).rejects.toThrow('authentication failed');
  });

  test('nothing listening: down with the connect error, and up as soon as the switch appears', async () => {
    const port = sim.port;
    await sim.stop();
    const m = manager({ port });
    expect((await next(m, 'retry')).error).toContain('ECONNREFUSED');
    expect(m.health().state).toBe('down');
    const up = next(m, 'up');
    sim = await startSwitchSimulator({ clock, port, password: PASSWORD, ringMs: RING_MS, talkMs: TALK_MS, recordingsDir: dir });
    expect(await up).toEqual({ reconnect: false });
    expect(m.health().reconnects).toBe(0);
  });
});

describe('liveness: a half-open link', () => {
  /** Short, so the test takes about a second; production uses ESL_LIVENESS_TIMEOUT_MS (15 s). */
  const LIVENESS_MS = 600;
  /** Timer and scheduling latency allowed on top of the bound on a loaded machine. */
  const SLACK_MS = 400;

  function capturingLogger() {
    const lines: Array<{ level: string; msg: string; obj: Record<string, unknown> }> = [];
    const waiters = new Set<() => void>();
    const at = (level: string) => (obj: object, msg?: string) => {
      lines.push({ level, msg: msg ?? '', obj: obj as Record<string, unknown> });
      for (const w of [...waiters]) w();
    };
    return {
      lines,
      logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
      until(pred: () => boolean, label: string): Promise<void> {
        if (pred()) return Promise.resolve();
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no log ${label}`)), GUARD_MS);
          const w = () => {
            if (!pred()) return;
            waiters.delete(w);
            clearTimeout(timer);
            resolve();
          };
          waiters.add(w);
        });
      },
    };
  }

  test('an idle link lives on its probes; a frozen socket is found within the bound, dropped, reconnected and resubscribed', async () => {
    const log = capturingLogger();
    const m = manager({ livenessTimeoutMs: LIVENESS_MS, logger: log.logger });
    const rec = recorder(m);
    await m.waitUntilUp();

    // The switch's clock stands still, so no HEARTBEAT comes: only the `api status` probe, sent
    // after a third of the timeout of silence, keeps a healthy link up.
    const probes = () => log.lines.filter((l) => l.msg === 'esl liveness probe').length;
    await log.until(() => probes() >= 3, 'three probes');
    expect(m.health()).toMatchObject({ state: 'up', reconnects: 0 });
    expect(await metric('esl_liveness_failures_total')).toBe(0);
    expect(await metric('esl_last_event_age_seconds')).toBeLessThan(LIVENESS_MS / 1000);

    // HEARTBEAT arrives as FreeSWITCH sends it.
    clock.advance(HEARTBEAT_MS);
    await rec.waitFor((e) => e.name === 'HEARTBEAT', 'heartbeat');

    const down = next(m, 'down');
    const up = next(m, 'up');
    const frozenAt = Date.now();
    expect(sim.freezeConnections()).toBe(1);
    // A command on the half-open link: without the probe it would wait out its own 5 s timeout.
    const stuck = m.api('status').catch((e: unknown) => e);

    expect(await down).toEqual({ error: expect.stringContaining('half-open') });
    const detectedAfter = Date.now() - frozenAt;
    expect(detectedAfter).toBeLessThanOrEqual(LIVENESS_MS + SLACK_MS);
    expect(await metric('esl_last_event_age_seconds')).toBeGreaterThanOrEqual(LIVENESS_MS / 1000);
    const lost = await stuck;
    expect(lost).toBeInstanceOf(EslUnavailableError);
    expect((lost as Error).message).toBe('connection to the switch lost');
    expect(log.lines.find((l) => l.level === 'warn' && l.msg === 'esl link silent, reconnecting')?.obj).toMatchObject({
      timeoutMs: LIVENESS_MS,
      silentMs: expect.any(Number),
    });

    expect(await up).toEqual({ reconnect: true });
    expect(m.health()).toMatchObject({ state: 'up', reconnects: 1, lastError: expect.stringContaining('no traffic from the switch') });
    expect(await metric('esl_liveness_failures_total')).toBe(1);
    expect(await metric('esl_reconnects_total')).toBe(1);
    expect(await metric('esl_connection_up')).toBe(1);
    // The switch still holds the frozen connection; ours is a new one beside it.
    expect(sim.connectionCount()).toBe(2);

    // Commands and events flow again on the new connection (the subscription was renewed).
    expect(await m.api('echo back')).toBe('back');
    const seen = rec.events.length;
    // bgapi resolves from its BACKGROUND_JOB event.
    expect(await m.bgapi('echo job after the reconnection')).toBe('job after the reconnection');
    clock.advance(HEARTBEAT_MS);
    await rec.waitFor((e) => e.name === 'HEARTBEAT' && rec.events.indexOf(e) >= seen, 'heartbeat after the reconnection');
    expect(await metric('esl_last_event_age_seconds')).toBeLessThan(LIVENESS_MS / 1000);
    expect(m.health().state).toBe('up');
  });
});

describe('typed switch commands', () => {
  test('a consumer call with AMD, an agent leg, bridge, hold, mute, recording, supervision and hangup', async () => {
    const m = manager();
    const rec = recorder(m);
    await m.waitUntilUp();
    const sw = createSwitchCommands(m, { gateway: 'default' });

    const { uuid, jobUuid } = await sw.originate({
      to: { type: 'pstn', number: '+15551230042' },
      callerIdNumber: '+15550001111',
      callerIdName: 'Acme Recovery',
      amd: true,
      timeoutSec: 30,
      variables: { dd_call_id: 'call-1', dd_attempt_id: 'attempt-1' },
    });
    const ringing = await rec.waitFor((e) => e.name === 'CHANNEL_PROGRESS' && e.uuid === uuid, 'ringing');
    expect(ringing.variables).toMatchObject({ dd_call_id: 'call-1', dd_attempt_id: 'attempt-1', sip_gateway_name: 'default' });
    expect(ringing.headers['Caller-Caller-ID-Name']).toBe('Acme Recovery');
    clock.advance(RING_MS);
    expect((await rec.waitFor((e) => e.jobUuid === jobUuid, 'job')).body).toBe(`+OK ${uuid}\n`);
    expect((await rec.waitFor((e) => e.subclass === 'amd' && e.uuid === uuid, 'amd')).headers['AMD-Result']).toBe('HUMAN');

    await sw.registerExtension({ extension: '1001', username: fakeUsername('1001'), password: fakePassword('1001') });
    await sw.registerExtension({ extension: '2001', username: fakeUsername('2001'), password: fakePassword('2001') });
    const agent = await sw.originateAndWait({ to: { type: 'agent', extension: '1001' }, variables: { dd_leg: 'agent' } });
    await sw.bridge(uuid, agent.uuid);
    expect((await rec.waitFor((e) => e.name === 'CHANNEL_BRIDGE', 'bridge')).headers['Other-Leg-Unique-ID']).toBe(agent.uuid);

    await sw.hold(agent.uuid);
    await rec.waitFor((e) => e.name === 'CHANNEL_HOLD' && e.uuid === agent.uuid, 'hold');
    await sw.unhold(agent.uuid);
    await rec.waitFor((e) => e.name === 'CHANNEL_UNHOLD' && e.uuid === agent.uuid, 'unhold');
    await sw.mute(agent.uuid);
    expect(sim.channel(agent.uuid)!.muted.read).toBe(true);
    await sw.unmute(agent.uuid);
    expect(sim.channel(agent.uuid)!.muted.read).toBe(false);

    const file = path.join(dir, `${uuid}.wav`);
    await sw.record(uuid, file);
    clock.advance(1000);
    await sw.stopRecording(uuid, file);
    await rec.waitFor((e) => e.name === 'RECORD_STOP', 'record stop');
    expect(readWavHeader(readFileSync(file)).sampleRate).toBe(8000);

    const sup = await sw.eavesdrop({ targetUuid: agent.uuid, supervisor: { extension: '2001' }, mode: 'whisper' });
    expect(sim.channel(sup.uuid)!.eavesdrop).toEqual({ target: agent.uuid, mode: 'whisper', whisperTo: 'aleg' });
    await sw.hangup(sup.uuid);
    const barge = await sw.eavesdrop({ targetUuid: agent.uuid, supervisor: { extension: '2001' }, mode: 'barge' });
    expect(sim.channel(barge.uuid)!.eavesdrop!.mode).toBe('barge');
    await sw.hangup(barge.uuid);

    await sw.playback(uuid, '/prompts/hold.wav');
    await rec.waitFor((e) => e.name === 'CHANNEL_EXECUTE' && e.headers.Application === 'playback', 'playback');

    expect(await sw.exists(uuid)).toBe(true);
    expect(await sw.getVariable(uuid, 'dd_attempt_id')).toBe('attempt-1');
    expect(await sw.getVariable(uuid, 'nope')).toBeNull();
    expect((await sw.channels()).map((r) => r.uuid).sort()).toEqual([uuid, agent.uuid].sort());
    await sw.simulateDtmf(uuid, '5');
    expect((await rec.waitFor((e) => e.name === 'DTMF', 'dtmf')).headers['DTMF-Digit']).toBe('5');

    const taken = await sw.takeover({ consumerUuid: uuid, supervisor: { extension: '2001' } });
    await rec.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === agent.uuid, 'agent released');
    expect(sim.channel(uuid)!.bridgedTo).toBe(taken.uuid);

    await sw.hangup(uuid, 'NORMAL_CLEARING');
    const done = await rec.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
    expect(done.variables).toMatchObject({ hangup_cause: 'NORMAL_CLEARING', amd_result: 'HUMAN', dd_call_id: 'call-1', billsec: '1' });
    expect(await sw.exists(uuid)).toBe(false);
  });

  test('failures: unregistered agent, busy consumer, unknown channel', async () => {
    const m = manager();
    const rec = recorder(m);
    await m.waitUntilUp();
    const sw = createSwitchCommands(m);

    const notRegistered = await sw.originateAndWait({ to: { type: 'agent', extension: '4040' } }).catch((e: unknown) => e);
    expect(notRegistered).toBeInstanceOf(EslCommandError);
    expect((notRegistered as EslCommandError).switchCause).toBe('USER_NOT_REGISTERED');
    await expect(sw.eavesdrop({ targetUuid: 'x-1', supervisor: { extension: '4040' }, mode: 'listen' })).rejects.toMatchObject({ switchCause: 'USER_NOT_REGISTERED' });

    const busy = sw.originateAndWait({ to: { type: 'pstn', number: '5551230077' }, uuid: 'busy-1' }).catch((e: unknown) => e);
    await rec.waitFor((e) => e.name === 'CHANNEL_PROGRESS' && e.uuid === 'busy-1', 'ringing');
    clock.advance(RING_MS);
    expect(await busy).toMatchObject({ switchCause: 'USER_BUSY' });
    const ended = await rec.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === 'busy-1', 'hangup');
    expect(ended.variables.sip_term_status).toBe('486');

    await expect(sw.hold('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ reply: '-ERR No such channel!' });
    await expect(sw.hangup('bad uuid')).rejects.toThrow(TypeError);
    await expect(sw.takeover({ consumerUuid: 'missing-1', supervisor: { extension: '4040' } })).rejects.toBeInstanceOf(EslCommandError);
  });
});
