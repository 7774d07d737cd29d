import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection, Parser, type Event as ModeslEvent } from 'modesl';
import { fromModeslEvent, type EslEvent } from '../../src/switch/esl/events';
import { createFakeClock, readWavHeader, startSwitchSimulator, wavBuffer, type FakeClock, type SwitchSimulator } from '../../src/switch/simulator';
import { fakeRegister, fakeRegisterArgs, startFakeDirectory, type FakeDirectory } from '../helpers/fake-directory';

/**
 * The switch simulator over real TCP on 127.0.0.1, driven by modesl (the client the product uses)
 * and by raw sockets for the protocol edges. Time is a fake clock: nothing here sleeps; every wait
 * is for an event or a reply, with a guard timeout that only fires when the test is failing.
 */

const RING_MS = 500;
const TALK_MS = 3000;
const GUARD_MS = 5000;

interface Client {
  conn: Connection;
  events: EslEvent[];
  api(command: string): Promise<string>;
  /** bgapi with our Job-UUID; resolves the command/reply text. */
  bgapi(command: string, jobUuid?: string): Promise<{ jobUuid: string; reply: string }>;
  /** All events received so far have been delivered once this resolves (a reply comes after them). */
  barrier(): Promise<void>;
  waitFor(pred: (e: EslEvent) => boolean, label: string): Promise<EslEvent>;
  close(): void;
}

const clients: Client[] = [];

async function connect(port: number, opts: { format?: 'json' | 'plain'; events?: string[]; password?: string } = {}): Promise<Client> {
  const events: EslEvent[] = [];
  const waiters: Array<{ pred: (e: EslEvent) => boolean; resolve: (e: EslEvent) => void }> = [];
  const conn = await new Promise<Connection>((resolve, reject) => {
    const c: Connection = new Connection('127.0.0.1', port, opts.password ?? 'ClueCon', () => resolve(c));
    c.socket?.setNoDelay(true);
    c.on('error', reject);
  });
  conn.on('esl::event::**', (ev: unknown, headers: unknown) => {
    const type = (headers as Record<string, unknown> | undefined)?.['Content-Type'];
    if (type !== 'text/event-json' && type !== 'text/event-plain') return;
    const e = fromModeslEvent(ev as ModeslEvent);
    events.push(e);
    for (const w of [...waiters]) {
      if (w.pred(e)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  });
  await new Promise<void>((resolve) => conn.events(opts.format ?? 'json', opts.events ?? ['ALL'], () => resolve()));
  const client: Client = {
    conn,
    events,
    api: (command) => new Promise((resolve) => conn.api(command, (res) => resolve(res.getBody()))),
    bgapi: (command, jobUuid = randomUUID()) =>
      new Promise((resolve) => conn.sendRecv(`bgapi ${command}`, { 'Job-UUID': jobUuid }, (res) => resolve({ jobUuid, reply: String(res.getHeader('Reply-Text')) }))),
    barrier: async () => {
      await client.api('status');
    },
    waitFor(pred, label) {
      const found = events.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`no event ${label}; got ${events.map((e) => e.subclass ?? e.name).join(', ')}`));
        }, GUARD_MS);
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
  clients.push(client);
  return client;
}

/** Event names (CUSTOM shown by subclass) of one leg, BACKGROUND_JOB included when its body names the leg. */
function flow(c: Client, uuid: string): string[] {
  return c.events
    .filter((e) => e.uuid === uuid || (e.name === 'BACKGROUND_JOB' && e.body.includes(uuid)))
    .map((e) => (e.name === 'CUSTOM' ? `CUSTOM ${e.subclass}` : e.name));
}

const byName = (c: Client, uuid: string, name: string) => c.events.find((e) => e.uuid === uuid && e.name === name);
const originate = (vars: string, dial: string, app = '&park()') => `originate {${vars}}${dial} ${app}`;

/** Raw TCP client: frames parsed with modesl's parser. */
async function rawClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const frames: Array<{ headers: Record<string, unknown>; body?: string }> = [];
  const parser = new Parser(socket);
  let notify: (() => void) | undefined;
  parser.on('esl::event', (_ev: unknown, headers: unknown, body: unknown) => {
    frames.push({ headers: headers as Record<string, unknown>, body: body as string | undefined });
    notify?.();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const frame = (i: number) =>
    new Promise<{ headers: Record<string, unknown>; body?: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`frame ${i} never came`)), GUARD_MS);
      const check = () => {
        if (frames[i]) {
          clearTimeout(timer);
          notify = undefined;
          resolve(frames[i]);
        }
      };
      notify = check;
      check();
    });
  return { socket, frames, frame, closed };
}

let sim: SwitchSimulator;
let clock: FakeClock;
let recordingsDir: string;
let directory: FakeDirectory;

beforeAll(async () => {
  directory = await startFakeDirectory();
});
afterAll(() => directory.close());

beforeEach(async () => {
  clock = createFakeClock(Date.UTC(2026, 0, 5, 15, 0, 0));
  recordingsDir = mkdtempSync(path.join(os.tmpdir(), 'switch-sim-test-'));
  sim = await startSwitchSimulator({ clock, ringMs: RING_MS, talkMs: TALK_MS, amdMs: 0, promptMs: 1000, speechMsPerChar: 50, recordingsDir });
  sim.useDirectory(directory.url, directory.credentials);
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await sim.stop();
  rmSync(recordingsDir, { recursive: true, force: true });
});

describe('event-socket protocol', () => {
  test('modesl authenticates, subscribes and runs api commands; unknown commands answer -ERR', async () => {
    const c = await connect(sim.port);
    expect(c.conn.authed).toBe(true);
    expect(await c.api('status')).toMatch(/^UP 0 years, 0 days.*\nFreeSWITCH .* is ready\n0 session\(s\) since startup/s);
    expect(await c.api('no_such_thing arg')).toBe('-ERR no_such_thing Command not found!\n');
    const reply = await new Promise<string>((resolve) => c.conn.sendRecv('frobnicate', null, (res) => resolve(String(res.getHeader('Reply-Text')))));
    expect(reply).toBe('-ERR command not found');
    expect(await c.api('uuid_kill')).toBe('-USAGE: <uuid> [cause]\n');
    expect(await c.api('uuid_kill 00000000-0000-0000-0000-000000000000')).toBe('-ERR No such channel!\n');
    expect(await c.api('originate user/1001')).toMatch(/^-USAGE: <call url>/);
  });

  test('a wrong password is answered -ERR invalid and the connection is closed', async () => {
    const raw = await rawClient(sim.port);
    expect((await raw.frame(0)).headers['Content-Type']).toBe('auth/request');
    raw.socket.write('auth not-the-password\n\n');
    const reply = await raw.frame(1);
    expect(reply.headers).toMatchObject({ 'Content-Type': 'command/reply', 'Reply-Text': '-ERR invalid' });
    expect((await raw.frame(2)).headers['Content-Type']).toBe('text/disconnect-notice');
    await raw.closed;

    // And through modesl: auth::fail, then the switch hangs up.
    const failed = await new Promise<string>((resolve) => {
      const conn = new Connection('127.0.0.1', sim.port, 'wrong');
      conn.on('error', () => undefined);
      conn.on('esl::event::auth::fail', (ev: unknown) => resolve(String((ev as ModeslEvent).getHeader('Reply-Text'))));
    });
    expect(failed).toBe('-ERR invalid');
  });

  test('commands arriving one byte at a time and pipelined in one write are all answered in order', async () => {
    const raw = await rawClient(sim.port);
    await raw.frame(0);
    for (const b of Buffer.from('auth ClueCon\n\napi echo one\n\n')) raw.socket.write(Buffer.from([b]));
    raw.socket.write('api echo two\r\n\r\napi create_uuid\n\nbgapi echo three\nJob-UUID: job-3\n\nevent json BACKGROUND_JOB\n\n');
    expect((await raw.frame(1)).headers['Reply-Text']).toBe('+OK accepted');
    expect((await raw.frame(2)).body).toBe('one');
    expect((await raw.frame(3)).body).toBe('two');
    expect((await raw.frame(4)).body).toMatch(/^[0-9a-f-]{36}$/);
    expect((await raw.frame(5)).headers).toMatchObject({ 'Reply-Text': '+OK Job-UUID: job-3', 'Job-UUID': 'job-3' });
    expect((await raw.frame(6)).headers['Reply-Text']).toBe('+OK event listener enabled json');
    raw.socket.write('bgapi echo four\nJob-UUID: job-4\n\n');
    await raw.frame(7);
    const job = await raw.frame(8);
    expect(job.headers['Content-Type']).toBe('text/event-json');
    expect(JSON.parse(job.body!)).toMatchObject({ 'Event-Name': 'BACKGROUND_JOB', 'Job-UUID': 'job-4', 'Job-Command': 'echo', _body: 'four' });
    raw.socket.write('exit\n\n');
    expect((await raw.frame(9)).headers['Reply-Text']).toBe('+OK bye');
    await raw.closed;
  });

  test('plain events carry URL-encoded headers that modesl decodes', async () => {
    const c = await connect(sim.port, { format: 'plain', events: ['CHANNEL_CREATE'] });
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid},origination_caller_id_name='Acme Recovery, Inc',dd_note=50% off`, 'sofia/gateway/default/+15551230042'));
    const created = await c.waitFor((e) => e.uuid === uuid, 'CHANNEL_CREATE');
    expect(created.headers['Caller-Caller-ID-Name']).toBe('Acme Recovery, Inc');
    expect(created.variables.dd_note).toBe('50% off');
  });
});

describe('liveness: HEARTBEAT and a half-open connection', () => {
  const HEARTBEAT_MS = 20_000;

  test('HEARTBEAT every 20 s to the connections subscribed to it, with FreeSWITCH\'s headers; its timer lives only while someone listens', async () => {
    expect(clock.pending()).toBe(0);
    const listening = await connect(sim.port, { events: ['HEARTBEAT'] });
    const deaf = await connect(sim.port, { events: ['CHANNEL_CREATE'] });
    const all = await connect(sim.port);
    expect(clock.pending()).toBe(1);
    clock.advance(HEARTBEAT_MS - 1);
    await listening.barrier();
    expect(listening.events).toEqual([]);
    clock.advance(1);
    const beat = await listening.waitFor((e) => e.name === 'HEARTBEAT', 'first heartbeat');
    expect(beat.headers).toMatchObject({
      'Event-Info': 'System Ready',
      'Up-Time': '0 years, 0 days, 0 hours, 0 minutes, 20 seconds, 0 milliseconds, 0 microseconds',
      'Uptime-msec': '20000',
      'Session-Count': '0',
      'Heartbeat-Interval': '20',
      'FreeSWITCH-Hostname': 'switch-simulator',
    });
    await all.waitFor((e) => e.name === 'HEARTBEAT', 'heartbeat on ALL');
    clock.advance(HEARTBEAT_MS);
    await listening.waitFor((e) => e.name === 'HEARTBEAT' && e.headers['Uptime-msec'] === '40000', 'second heartbeat');
    await deaf.barrier();
    expect(deaf.events).toEqual([]);

    await new Promise<void>((resolve) => listening.conn.sendRecv('nixevent HEARTBEAT', null, () => resolve()));
    await new Promise<void>((resolve) => all.conn.sendRecv('noevents', null, () => resolve()));
    expect(clock.pending()).toBe(0);
  });

  test('sim.heartbeatMs sets the interval (FreeSWITCH event-heartbeat-interval)', async () => {
    const fast = await startSwitchSimulator({ clock, heartbeatMs: 250, recordingsDir });
    try {
      const c = await connect(fast.port, { events: ['HEARTBEAT'] });
      clock.advance(750);
      await c.barrier();
      expect(c.events.map((e) => e.headers['Uptime-msec'])).toEqual(['250', '500', '750']);
    } finally {
      await fast.stop();
    }
  });

  test('freezeConnections(): the socket stays open but nothing is read or written; a new connection works', async () => {
    const frozen = await rawClient(sim.port);
    await frozen.frame(0);
    frozen.socket.write('auth ClueCon\n\nevent json HEARTBEAT BACKGROUND_JOB\n\n');
    await frozen.frame(2);
    expect(sim.freezeConnections()).toBe(1);
    frozen.socket.write('api echo anyone there\n\n');
    clock.advance(HEARTBEAT_MS);

    // A fresh connection answers and gets the events: the switch itself is fine.
    const fresh = await connect(sim.port);
    expect(await fresh.api('echo still here')).toBe('still here');
    const { jobUuid } = await fresh.bgapi('echo job for everyone');
    await fresh.waitFor((e) => e.jobUuid === jobUuid, 'job on the fresh connection');
    clock.advance(HEARTBEAT_MS);
    await fresh.waitFor((e) => e.name === 'HEARTBEAT', 'heartbeat on the fresh connection');
    expect(sim.connectionCount()).toBe(2);
    // Whatever the frozen connection was owed (the api reply, the events) never came, and it is still open.
    expect(frozen.frames).toHaveLength(3);
    expect(frozen.socket.destroyed).toBe(false);
    expect(frozen.socket.readyState).toBe('open');
  });
});

describe('outcome plan (CONTRACT section 2)', () => {
  test('00-59: a person answers after the ring, AMD human, talks, hangs up NORMAL_CLEARING', async () => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    const vars = `origination_uuid=${uuid},origination_caller_id_number=+15550001111,dd_call_id=${uuid},dd_attempt_id=att-1,execute_on_answer=amd`;
    const { jobUuid, reply } = await c.bgapi(originate(vars, 'sofia/gateway/default/+15551230042'));
    expect(reply).toBe(`+OK Job-UUID: ${jobUuid}`);
    await c.barrier();
    expect(flow(c, uuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_PROGRESS']);
    const create = byName(c, uuid, 'CHANNEL_CREATE')!;
    expect(create.headers).toMatchObject({
      'Unique-ID': uuid,
      'Call-Direction': 'outbound',
      'Caller-Destination-Number': '+15551230042',
      'Caller-Caller-ID-Number': '+15550001111',
      'Channel-Name': 'sofia/external/+15551230042',
    });
    expect(create.variables).toMatchObject({ dd_call_id: uuid, dd_attempt_id: 'att-1', origination_uuid: uuid, sip_gateway_name: 'default' });
    expect(byName(c, uuid, 'CHANNEL_PROGRESS')!.headers['Channel-Call-State']).toBe('RINGING');

    clock.advance(RING_MS - 1);
    await c.barrier();
    expect(flow(c, uuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_PROGRESS']);

    clock.advance(1);
    await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === uuid, 'CHANNEL_PARK');
    expect(flow(c, uuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_ANSWER', 'BACKGROUND_JOB', 'CUSTOM amd', 'CHANNEL_PARK']);
    const job = c.events.find((e) => e.name === 'BACKGROUND_JOB' && e.jobUuid === jobUuid)!;
    expect(job.body).toBe(`+OK ${uuid}\n`);
    expect(job.headers['Job-Command']).toBe('originate');
    const amd = c.events.find((e) => e.subclass === 'amd')!;
    expect(amd.headers).toMatchObject({ 'Event-Name': 'CUSTOM', 'AMD-Result': 'HUMAN', 'Unique-ID': uuid });
    expect(amd.variables.amd_result).toBe('HUMAN');
    expect(sim.channel(uuid)).toMatchObject({ state: 'answered', application: 'park', amdResult: 'HUMAN' });

    clock.advance(TALK_MS - 1);
    await c.barrier();
    expect(byName(c, uuid, 'CHANNEL_HANGUP')).toBeUndefined();

    clock.advance(1);
    await c.waitFor((e) => e.name === 'CHANNEL_DESTROY' && e.uuid === uuid, 'CHANNEL_DESTROY');
    expect(flow(c, uuid).slice(6)).toEqual(['CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY']);
    const done = byName(c, uuid, 'CHANNEL_HANGUP_COMPLETE')!;
    expect(done.headers['Hangup-Cause']).toBe('NORMAL_CLEARING');
    expect(done.variables).toMatchObject({
      hangup_cause: 'NORMAL_CLEARING',
      sip_term_status: '200',
      sip_hangup_disposition: 'recv_bye',
      billsec: String(TALK_MS / 1000),
      billmsec: String(TALK_MS),
      duration: String((RING_MS + TALK_MS) / 1000 | 0),
      amd_result: 'HUMAN',
      dd_attempt_id: 'att-1',
    });
    expect(sim.channel(uuid)).toBeUndefined();
  });

  test.each([
    ['00', 'human', 'HUMAN'],
    ['59', 'human', 'HUMAN'],
    ['60', 'machine', 'MACHINE'],
    ['69', 'machine', 'MACHINE'],
  ])('..%s answers (%s) with AMD %s', async (suffix, _kind, verdict) => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid},execute_on_answer=amd`, `sofia/gateway/default/+155512300${suffix}`));
    clock.advance(RING_MS);
    const amd = await c.waitFor((e) => e.subclass === 'amd' && e.uuid === uuid, 'AMD');
    expect(amd.headers['AMD-Result']).toBe(verdict);
    clock.advance(TALK_MS);
    const done = await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
    expect(done.variables).toMatchObject({ hangup_cause: 'NORMAL_CLEARING', sip_term_status: '200', amd_result: verdict });
    expect(flow(c, uuid)).toEqual([
      'CHANNEL_CREATE',
      'CHANNEL_PROGRESS',
      'CHANNEL_ANSWER',
      'BACKGROUND_JOB',
      'CUSTOM amd',
      'CHANNEL_PARK',
      'CHANNEL_HANGUP',
      'CHANNEL_HANGUP_COMPLETE',
      'CHANNEL_DESTROY',
    ]);
  });

  test.each([
    ['70', 'USER_BUSY', '486', '17'],
    ['79', 'USER_BUSY', '486', '17'],
    ['80', 'NO_ANSWER', '480', '19'],
    ['89', 'NO_ANSWER', '480', '19'],
    ['90', 'CALL_REJECTED', '403', '21'],
    ['99', 'CALL_REJECTED', '403', '21'],
  ])('..%s fails %s (SIP %s) when the ring ends', async (suffix, cause, sip, q850) => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    const { jobUuid } = await c.bgapi(originate(`origination_uuid=${uuid},dd_attempt_id=a-${suffix},execute_on_answer=amd`, `sofia/gateway/default/+155512300${suffix}`));
    clock.advance(RING_MS - 1);
    await c.barrier();
    expect(flow(c, uuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_PROGRESS']);
    clock.advance(1);
    const job = await c.waitFor((e) => e.name === 'BACKGROUND_JOB' && e.jobUuid === jobUuid, 'BACKGROUND_JOB');
    expect(job.body).toBe(`-ERR ${cause}\n`);
    expect(flow(c, uuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY']);
    const done = byName(c, uuid, 'CHANNEL_HANGUP_COMPLETE')!;
    expect(done.headers['Hangup-Cause']).toBe(cause);
    expect(done.variables).toMatchObject({
      hangup_cause: cause,
      hangup_cause_q850: q850,
      sip_term_status: sip,
      sip_hangup_disposition: 'recv_refuse',
      billsec: '0',
      answer_epoch: '0',
      dd_attempt_id: `a-${suffix}`,
    });
    expect(done.variables.amd_result).toBeUndefined();
  });

  test('without execute_on_answer=amd no AMD event is fired; uuid_amd_detect runs it on demand', async () => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230061'));
    clock.advance(RING_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === uuid, 'park');
    await c.barrier();
    expect(c.events.some((e) => e.subclass === 'amd')).toBe(false);
    expect(await c.api(`uuid_amd_detect ${uuid}`)).toBe('+OK\n');
    expect((await c.waitFor((e) => e.subclass === 'amd', 'amd')).headers['AMD-Result']).toBe('MACHINE');
  });

  test('originate_timeout shorter than the ring ends NO_ANSWER with a CANCEL (487)', async () => {
    const slowClock = createFakeClock();
    const slow = await startSwitchSimulator({ clock: slowClock, ringMs: 5000, talkMs: TALK_MS });
    try {
      const c = await connect(slow.port);
      const uuid = randomUUID();
      const { jobUuid } = await c.bgapi(originate(`origination_uuid=${uuid},originate_timeout=2`, 'sofia/gateway/default/5551230042'));
      slowClock.advance(1999);
      await c.barrier();
      expect(byName(c, uuid, 'CHANNEL_HANGUP')).toBeUndefined();
      slowClock.advance(1);
      expect((await c.waitFor((e) => e.jobUuid === jobUuid, 'job')).body).toBe('-ERR NO_ANSWER\n');
      expect(byName(c, uuid, 'CHANNEL_HANGUP_COMPLETE')!.variables).toMatchObject({ sip_term_status: '487', sip_hangup_disposition: 'send_cancel' });
      // Without a timeout the ring decides: this number answers.
      const answered = c.api(`originate {origination_uuid=${uuid}-b,originate_timeout=0}sofia/gateway/default/5551230042 &park()`);
      await c.waitFor((e) => e.name === 'CHANNEL_PROGRESS' && e.uuid === `${uuid}-b`, 'ringing');
      slowClock.advance(5000);
      expect(await answered).toBe(`+OK ${uuid}-b\n`);
    } finally {
      await slow.stop();
    }
  });

  test('api originate blocks that connection until the answer; commands behind it wait their turn', async () => {
    const c = await connect(sim.port);
    const other = await connect(sim.port);
    const uuid = randomUUID();
    const order: string[] = [];
    const first = c.api(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042')).then((r) => (order.push('originate'), r));
    const second = c.api('echo behind').then((r) => (order.push('echo'), r));
    await other.waitFor((e) => e.name === 'CHANNEL_PROGRESS' && e.uuid === uuid, 'progress');
    expect(await other.api('echo other connection')).toBe('other connection');
    expect(order).toEqual([]);
    clock.advance(RING_MS);
    expect(await first).toBe(`+OK ${uuid}\n`);
    expect(await second).toBe('behind');
    expect(order).toEqual(['originate', 'echo']);

    const busy = c.api(originate('', 'sofia/gateway/default/5551230075'));
    await other.waitFor((e) => e.name === 'CHANNEL_PROGRESS' && e.headers['Caller-Destination-Number'] === '5551230075', 'busy ringing');
    clock.advance(RING_MS);
    expect(await busy).toBe('-ERR USER_BUSY\n');
  });

  test('a consumer leg killed while ringing ends ORIGINATOR_CANCEL and the job fails', async () => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    const { jobUuid } = await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042'));
    await c.waitFor((e) => e.name === 'CHANNEL_PROGRESS' && e.uuid === uuid, 'progress');
    expect(await c.api(`uuid_kill ${uuid}`)).toBe('+OK\n');
    const job = await c.waitFor((e) => e.jobUuid === jobUuid, 'job');
    expect(job.body).toBe('-ERR ORIGINATOR_CANCEL\n');
    expect(byName(c, uuid, 'CHANNEL_HANGUP_COMPLETE')!.variables).toMatchObject({
      hangup_cause: 'ORIGINATOR_CANCEL',
      sip_term_status: '487',
      sip_hangup_disposition: 'send_cancel',
    });
    clock.advance(RING_MS * 10);
    await c.barrier();
    expect(flow(c, uuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY']);
    expect(c.events.filter((e) => e.name === 'BACKGROUND_JOB')).toHaveLength(1);
  });

  test('immediate failures: too few digits, error/ endpoints, unsupported technology, unknown application', async () => {
    const c = await connect(sim.port);
    expect(await c.api('originate sofia/gateway/default/7 &park()')).toBe('-ERR INVALID_NUMBER_FORMAT\n');
    expect(await c.api('originate error/user_busy &park()')).toBe('-ERR USER_BUSY\n');
    expect(await c.api('originate iax2/foo/5551230042 &park()')).toBe('-ERR CHAN_NOT_IMPLEMENTED\n');
    expect(await c.api('originate sofia/gateway/default/5551230042 &conference(x)')).toBe('-ERR Invalid Application conference\n');
    await c.barrier();
    expect(c.events).toEqual([]);
  });
});

describe('agent legs', () => {
  test('a registered extension answers at once; an unregistered one fails USER_NOT_REGISTERED', async () => {
    const c = await connect(sim.port);
    expect(await c.api(`sim_register ${fakeRegisterArgs('1001@acme.example')}`)).toBe('+OK registered 1001@acme.example\n');
    const reg = await c.waitFor((e) => e.subclass === 'sofia::register', 'register');
    expect(reg.headers).toMatchObject({ 'from-user': '1001', 'from-host': 'acme.example' });

    const timersBefore = clock.pending();
    const uuid = randomUUID();
    const { jobUuid } = await c.bgapi(originate(`origination_uuid=${uuid},dd_leg=agent`, 'user/1001@acme.example'));
    const job = await c.waitFor((e) => e.jobUuid === jobUuid, 'job');
    expect(job.body).toBe(`+OK ${uuid}\n`);
    expect(flow(c, uuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_ANSWER', 'BACKGROUND_JOB', 'CHANNEL_PARK']);
    expect(byName(c, uuid, 'CHANNEL_ANSWER')!.headers).toMatchObject({ 'Caller-Destination-Number': '1001', 'Channel-Name': 'sofia/internal/1001@acme.example' });
    expect(byName(c, uuid, 'CHANNEL_ANSWER')!.variables).toMatchObject({ dd_leg: 'agent', dialed_user: '1001' });
    // The agent leg set no timer (the HEARTBEAT one, for the client subscribed ALL, was there before).
    expect(clock.pending()).toBe(timersBefore);

    expect(await c.api(originate('', 'user/1001@other.example'))).toBe('-ERR USER_NOT_REGISTERED\n');
    expect(await c.api(originate('', 'user/1002'))).toBe('-ERR USER_NOT_REGISTERED\n');
    expect(await c.api('sim_unregister 1001@acme.example')).toBe('+OK unregistered 1001@acme.example\n');
    const failed = await c.bgapi(originate('', 'user/1001@acme.example'));
    expect((await c.waitFor((e) => e.jobUuid === failed.jobUuid, 'job')).body).toBe('-ERR USER_NOT_REGISTERED\n');
    expect(await c.api('sim_registrations')).toBe('\n');
  });

  test('REGISTER goes through the directory with digest authentication: a wrong password or an unknown user is 403', async () => {
    const c = await connect(sim.port);
    const before = directory.requests.length;
    expect(await c.api('sim_register 1001@acme.example u1001 wrong-password')).toBe('-ERR 403 Forbidden\n');
    expect(await c.api('sim_register 1001@acme.example stranger pw-ustranger')).toBe('-ERR 403 Forbidden\n');
    expect(await c.api('sim_registrations')).toBe('\n');
    expect(await c.api(originate('', 'user/1001@acme.example'))).toBe('-ERR USER_NOT_REGISTERED\n');
    // What the switch asked: mod_xml_curl's sip_auth lookup, with the digest of the REGISTER.
    const asked = directory.requests.slice(before);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatchObject({ section: 'directory', action: 'sip_auth', user: 'u1001', domain: 'acme.example', sip_auth_method: 'REGISTER', sip_to_user: '1001' });
    expect(asked[0]!.sip_auth_response).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(asked)).not.toContain('wrong-password');

    // A switch that cannot reach its directory registers nobody.
    sim.useDirectory(null);
    expect(await c.api(`sim_register ${fakeRegisterArgs('1001@acme.example')}`)).toMatch(/^-ERR 503 /);
    sim.useDirectory(`${directory.url}-gone`, 'freeswitch:wrong');
    expect(await c.api(`sim_register ${fakeRegisterArgs('1001@acme.example')}`)).toBe('-ERR 503 directory unavailable\n');
    expect(await c.api('sim_registrations')).toBe('\n');
  });

  test('a registration not refreshed expires with sofia::expire; a refresh keeps it and its Call-ID', async () => {
    const c = await connect(sim.port);
    expect(await c.api(`sim_register ${fakeRegisterArgs('1001@acme.example')} 60`)).toBe('+OK registered 1001@acme.example\n');
    const first = await c.waitFor((e) => e.subclass === 'sofia::register', 'register');
    expect(first.headers).toMatchObject({ username: 'u1001', 'to-user': '1001', expires: '60' });
    clock.advance(59_000);
    expect(await c.api(`sim_register ${fakeRegisterArgs('1001@acme.example')} 60`)).toBe('+OK registered 1001@acme.example\n');
    clock.advance(59_000);
    expect(await c.api('sim_registrations')).toBe('1001@acme.example\n');
    await c.barrier();
    const registers = c.events.filter((e) => e.subclass === 'sofia::register');
    expect(registers.map((e) => e.headers['call-id'])).toEqual([first.headers['call-id'], first.headers['call-id']]);
    clock.advance(1_000);
    const expired = await c.waitFor((e) => e.subclass === 'sofia::expire', 'expire');
    expect(expired.headers).toMatchObject({ 'call-id': first.headers['call-id'], user: '1001', host: 'acme.example', 'profile-name': 'internal' });
    expect(await c.api('sim_registrations')).toBe('\n');
    expect(await c.api(originate('', 'user/1001@acme.example'))).toBe('-ERR USER_NOT_REGISTERED\n');
  });

  test('sim_answer_delay: the agent leg rings that long (CHANNEL_PROGRESS) before it answers', async () => {
    const c = await connect(sim.port);
    await fakeRegister(sim, '1001');
    expect(await c.api('sim_answer_delay 1001 2500')).toBe('+OK\n');
    const uuid = randomUUID();
    const { jobUuid } = await c.bgapi(originate(`origination_uuid=${uuid}`, 'user/1001'));
    await c.waitFor((e) => e.name === 'CHANNEL_PROGRESS' && e.uuid === uuid, 'ringing');
    clock.advance(2499);
    expect(sim.channel(uuid)!.state).toBe('ringing');
    clock.advance(1);
    expect((await c.waitFor((e) => e.jobUuid === jobUuid, 'job')).body).toBe(`+OK ${uuid}\n`);
    expect(await c.api('sim_answer_delay 1001 0')).toBe('+OK\n');
  });

  test('sofia profile internal flush_inbound_reg drops registrations by user@host, bare user or all, as FreeSWITCH', async () => {
    const c = await connect(sim.port);
    for (const target of ['3001@acme.example', '3001@other.example', '3002', '3003@acme.example', '3004']) {
      expect(await c.api(`sim_register ${fakeRegisterArgs(target)}`)).toBe(`+OK registered ${target.includes('@') ? target : `${target}@switch-simulator`}\n`);
    }
    const flushed = '+OK flushing all registrations matching specified call_id\n';

    expect(await c.api('sofia profile internal flush_inbound_reg 3001@acme.example')).toBe(flushed);
    const gone = await c.waitFor((e) => e.subclass === 'sofia::unregister', 'unregister');
    expect(gone.headers).toMatchObject({ 'profile-name': 'internal', 'from-user': '3001', 'from-host': 'acme.example', expires: '0' });
    expect(await c.api('sim_registrations')).toBe('3001@other.example\n3002@switch-simulator\n3003@acme.example\n3004@switch-simulator\n');
    expect(await c.api(originate('', 'user/3001@acme.example'))).toBe('-ERR USER_NOT_REGISTERED\n');

    // A REGISTER without a domain took the switch's own (its hostname).
    expect(await c.api('sofia profile internal flush_inbound_reg 3002@switch-simulator')).toBe(flushed);
    // A bare user: every host.
    expect(await c.api('sofia profile internal flush_inbound_reg 3001')).toBe(flushed);
    expect(await c.api('sim_registrations')).toBe('3003@acme.example\n3004@switch-simulator\n');
    // Nothing matching is still +OK, and nothing changes.
    expect(await c.api('sofia profile internal flush_inbound_reg 9999@acme.example')).toBe(flushed);
    expect(await c.api('sim_registrations')).toBe('3003@acme.example\n3004@switch-simulator\n');

    // Another profile: FreeSWITCH's answer, without -ERR. Other sofia words are refused.
    expect(await c.api('sofia profile external flush_inbound_reg 3003@acme.example')).toBe('Invalid Profile [external]');
    expect(await c.api('sofia status')).toMatch(/^-ERR /);
    expect(await c.api('sim_registrations')).toBe('3003@acme.example\n3004@switch-simulator\n');

    // No target: all of them.
    expect(await c.api('sofia profile internal flush_inbound_reg')).toBe(flushed);
    expect(await c.api('sim_registrations')).toBe('\n');
    await c.barrier();
    const dropped = c.events.filter((e) => e.subclass === 'sofia::unregister').map((e) => `${e.headers['from-user']}@${e.headers['from-host']}`);
    expect(dropped.sort()).toEqual(['3001@acme.example', '3001@other.example', '3002@switch-simulator', '3003@acme.example', '3004@switch-simulator']);
  });

  test('&bridge(user/ext): the agent leg is dialled on answer and bridged; the consumer hanging up ends both', async () => {
    const c = await connect(sim.port);
    await fakeRegister(sim, '1001');
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042', '&bridge({dd_leg=agent}user/1001)'));
    clock.advance(RING_MS);
    const bridged = await c.waitFor((e) => e.name === 'CHANNEL_BRIDGE', 'bridge');
    const agentUuid = bridged.headers['Other-Leg-Unique-ID']!;
    expect(bridged.headers).toMatchObject({ 'Unique-ID': uuid, 'Bridge-A-Unique-ID': uuid, 'Bridge-B-Unique-ID': agentUuid, 'Other-Leg-Destination-Number': '1001' });
    expect(flow(c, agentUuid)).toEqual(['CHANNEL_CREATE', 'CHANNEL_ANSWER']);
    expect(byName(c, agentUuid, 'CHANNEL_CREATE')!.variables.dd_leg).toBe('agent');
    expect(sim.channel(uuid)).toMatchObject({ bridgedTo: agentUuid, application: 'bridge' });
    expect(JSON.parse(await c.api('show calls as json'))).toMatchObject({ row_count: 1, rows: [{ uuid, b_uuid: agentUuid }] });

    clock.advance(TALK_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === agentUuid, 'agent hangup');
    expect(flow(c, uuid).slice(-4)).toEqual(['CHANNEL_HANGUP', 'CHANNEL_UNBRIDGE', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY']);
    expect(byName(c, agentUuid, 'CHANNEL_HANGUP_COMPLETE')!.variables).toMatchObject({ hangup_cause: 'NORMAL_CLEARING', sip_hangup_disposition: 'send_bye' });
    expect(JSON.parse(await c.api('show channels as json'))).toEqual({ row_count: 0 });
  });

  test('&bridge to an unregistered agent hangs the consumer up with originate_disposition', async () => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042', '&bridge(user/4040)'));
    clock.advance(RING_MS);
    const done = await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
    expect(done.variables).toMatchObject({ originate_disposition: 'USER_NOT_REGISTERED', hangup_cause: 'NORMAL_CLEARING' });
  });

  test('uuid_bridge joins two parked legs; park_after_bridge keeps the agent when the consumer leaves', async () => {
    const c = await connect(sim.port);
    await fakeRegister(sim, '1001');
    const consumer = randomUUID();
    const agent = randomUUID();
    await c.bgapi(originate(`origination_uuid=${consumer},execute_on_answer=amd`, 'sofia/gateway/default/5551230010'));
    clock.advance(RING_MS);
    await c.waitFor((e) => e.subclass === 'amd' && e.uuid === consumer, 'amd');
    expect(await c.api(originate(`origination_uuid=${agent},park_after_bridge=true`, 'user/1001'))).toBe(`+OK ${agent}\n`);
    expect(await c.api(`uuid_bridge ${consumer} ${agent}`)).toBe(`+OK ${agent}\n`);
    expect(await c.api(`uuid_bridge ${consumer} ${randomUUID()}`)).toBe('-ERR Invalid uuid\n');
    const bridged = await c.waitFor((e) => e.name === 'CHANNEL_BRIDGE' && e.uuid === consumer, 'bridge');
    expect(bridged.headers['Other-Leg-Unique-ID']).toBe(agent);
    sim.remoteHangup(consumer);
    await c.waitFor((e) => e.name === 'CHANNEL_UNBRIDGE', 'unbridge');
    const parked = await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === agent && Number(e.headers['Event-Sequence']) > Number(bridged.headers['Event-Sequence']), 'agent parked again');
    expect(parked.headers['Answer-State']).toBe('answered');
    expect(sim.channel(agent)).toMatchObject({ state: 'answered', application: 'park', bridgedTo: null });
  });

  test('uuid_transfer sends a leg to a registered extension', async () => {
    const c = await connect(sim.port);
    await fakeRegister(sim, '1001');
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042'));
    clock.advance(RING_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === uuid, 'park');
    expect(await c.api(`uuid_transfer ${uuid} 1001`)).toBe('+OK\n');
    const bridged = await c.waitFor((e) => e.name === 'CHANNEL_BRIDGE' && e.uuid === uuid, 'bridge');
    expect(bridged.headers['Other-Leg-Destination-Number']).toBe('1001');
    expect(await c.api(`uuid_transfer ${uuid} 9999`)).toBe('+OK\n');
    const done = await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
    expect(done.headers['Hangup-Cause']).toBe('NO_ROUTE_DESTINATION');
  });
});

describe('call control', () => {
  async function answeredCall(c: Client): Promise<string> {
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042'));
    clock.advance(RING_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === uuid, 'park');
    return uuid;
  }

  test('hold and unhold fire CHANNEL_HOLD / CHANNEL_UNHOLD; hold needs an answered leg', async () => {
    const c = await connect(sim.port);
    const ringing = randomUUID();
    await c.bgapi(originate(`origination_uuid=${ringing}`, 'sofia/gateway/default/5551230042'));
    expect(await c.api(`uuid_hold ${ringing}`)).toBe('-ERR Operation failed\n');
    clock.advance(RING_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === ringing, 'park');
    expect(await c.api(`uuid_hold ${ringing}`)).toBe('+OK Success\n');
    const held = await c.waitFor((e) => e.name === 'CHANNEL_HOLD', 'hold');
    expect(held.headers).toMatchObject({ 'Unique-ID': ringing, 'Channel-Call-State': 'HELD' });
    expect(sim.channel(ringing)!.held).toBe(true);
    expect(await c.api(`uuid_hold ${ringing}`)).toBe('+OK Success\n');
    expect(await c.api(`uuid_hold off ${ringing}`)).toBe('+OK Success\n');
    const unheld = await c.waitFor((e) => e.name === 'CHANNEL_UNHOLD', 'unhold');
    expect(unheld.headers['Channel-Call-State']).toBe('ACTIVE');
    await c.barrier();
    expect(c.events.filter((e) => e.name === 'CHANNEL_HOLD')).toHaveLength(1);
    expect(await c.api(`uuid_hold toggle ${ringing}`)).toBe('+OK Success\n');
    expect(sim.channel(ringing)!.held).toBe(true);
  });

  test('mute and unmute change what the leg sends (uuid_audio)', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    expect(await c.api(`uuid_audio ${uuid} start read mute 1`)).toBe('+OK Success\n');
    expect(sim.channel(uuid)!.muted).toEqual({ read: true, write: false });
    expect(await c.api(`uuid_audio ${uuid} start read mute 0`)).toBe('+OK Success\n');
    expect(sim.channel(uuid)!.muted.read).toBe(false);
    expect(await c.api(`uuid_audio ${uuid} start write mute`)).toBe('+OK Success\n');
    expect(await c.api(`uuid_audio ${uuid} stop`)).toBe('+OK Success\n');
    expect(sim.channel(uuid)!.muted).toEqual({ read: false, write: false });
    expect(await c.api(`uuid_audio ${uuid} start sideways mute`)).toMatch(/^-USAGE/);
  });

  test('uuid_kill with a cause hangs up at once (send_bye)', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    clock.advance(1500);
    expect(await c.api(`uuid_kill ${uuid} CALL_REJECTED`)).toBe('+OK\n');
    const done = await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
    expect(done.variables).toMatchObject({ hangup_cause: 'CALL_REJECTED', sip_hangup_disposition: 'send_bye', billsec: '1', billmsec: '1500' });
    expect(await c.api(`uuid_kill ${uuid}`)).toBe('-ERR No such channel!\n');
  });

  test('DTMF: one event per key with DTMF-Digit, in order', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    expect(await c.api(`sim_dtmf ${uuid} 1#9*`)).toBe('+OK\n');
    sim.dtmf(uuid, '0');
    await c.barrier();
    const dtmf = c.events.filter((e) => e.name === 'DTMF');
    expect(dtmf.map((e) => e.headers['DTMF-Digit'])).toEqual(['1', '#', '9', '*', '0']);
    expect(dtmf[0]!.headers).toMatchObject({ 'Unique-ID': uuid, 'DTMF-Duration': '2000', 'DTMF-Source': 'RTP' });
    expect(await c.api(`sim_dtmf ${uuid} 1x`)).toBe('-ERR invalid DTMF digits\n');
  });

  test('uuid_broadcast plays a prompt: CHANNEL_EXECUTE, then CHANNEL_EXECUTE_COMPLETE after it played', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    const prompt = path.join(recordingsDir, 'prompts', 'mini-miranda.wav');
    mkdirSync(path.dirname(prompt), { recursive: true });
    writeFileSync(prompt, wavBuffer({ durationMs: 1000, sampleRate: 8000 }));
    expect(await c.api(`uuid_broadcast ${uuid} ${prompt} aleg`)).toBe('+OK Message queued\n');
    const started = await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE' && e.uuid === uuid, 'execute');
    expect(started.headers).toMatchObject({ Application: 'playback', 'Application-Data': prompt });
    clock.advance(999);
    await c.barrier();
    expect(byName(c, uuid, 'CHANNEL_EXECUTE_COMPLETE')).toBeUndefined();
    clock.advance(1);
    const done = await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE_COMPLETE' && e.uuid === uuid, 'complete');
    expect(done.headers).toMatchObject({ 'Application-Response': 'FILE PLAYED', 'Application-UUID': started.headers['Application-UUID'] });
    expect(sim.channel(uuid)!.state).toBe('answered');
    expect(await c.api(`uuid_broadcast ${uuid} hangup::NORMAL_CLEARING`)).toBe('+OK Message queued\n');
    await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
  });

  test('a playback of a file that does not exist fails at once, FILE NOT FOUND, as mod_dptools answers it', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    expect(await c.api(`uuid_broadcast ${uuid} dialer-prompts/nothing-rendered-this.wav aleg`)).toBe('+OK Message queued\n');
    const done = await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE_COMPLETE' && e.uuid === uuid, 'complete');
    expect(done.headers).toMatchObject({ Application: 'playback', 'Application-Response': 'FILE NOT FOUND' });
    expect(done.variables.current_application_response).toBe('FILE NOT FOUND');
    // Nothing was heard: the executes of a sendmsg and an originate's app fail the same way.
    const completed = new Promise<ModeslEvent>((resolve) => c.conn.execute('playback', '/no/such/prompt.wav', uuid, resolve));
    expect((await completed).getHeader('Application-Response')).toBe('FILE NOT FOUND');
    expect(sim.spoken(uuid)).toEqual([]);
  });

  test('speak with flite says the text, for as long as the text is, and the simulator keeps what each channel heard', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    expect(await c.api('module_exists mod_flite')).toBe('true');
    const text = 'This call is recorded, it can\\\'t be helped.';
    expect(await c.api(`uuid_broadcast ${uuid} 'speak::flite|kal|${text}' aleg`)).toBe('+OK Message queued\n');
    const started = await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE' && e.uuid === uuid, 'execute');
    const said = "This call is recorded, it can't be helped.";
    expect(started.headers).toMatchObject({ Application: 'speak', 'Application-Data': `flite|kal|${said}` });
    expect(sim.channel(uuid)!.spoken).toEqual([{ engine: 'flite', voice: 'kal', text: said, at: expect.any(String) }]);
    clock.advance(said.length * 50 - 1);
    await c.barrier();
    expect(byName(c, uuid, 'CHANNEL_EXECUTE_COMPLETE')).toBeUndefined();
    clock.advance(1);
    await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE_COMPLETE' && e.uuid === uuid, 'complete');
    await c.api(`uuid_kill ${uuid}`);
    expect(sim.channel(uuid)).toBeUndefined();
    expect(sim.spoken(uuid).map((t) => t.text)).toEqual([said]);
  });

  test('speak with an engine the switch has not loaded says nothing and ends at once, like a missing TTS module', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    expect(await c.api('module_exists mod_cepstral')).toBe('false');
    await c.api(`uuid_broadcast ${uuid} 'speak::cepstral|david|Hello there' aleg`);
    const done = await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE_COMPLETE' && e.uuid === uuid, 'complete');
    expect(done.headers).toMatchObject({ Application: 'speak', 'Application-Data': 'cepstral|david|Hello there' });
    expect(sim.channel(uuid)!.spoken).toEqual([]);
    expect(sim.spoken(uuid)).toEqual([]);
  });

  test('modesl execute() (sendmsg) runs an application and sees its CHANNEL_EXECUTE_COMPLETE', async () => {
    const c = await connect(sim.port);
    const uuid = await answeredCall(c);
    const completed = new Promise<ModeslEvent>((resolve) => c.conn.execute('playback', 'silence_stream://250', uuid, resolve));
    await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE' && e.uuid === uuid, 'execute');
    clock.advance(250);
    expect((await completed).getHeader('Application-Response')).toBe('FILE PLAYED');
  });
});

describe('supervision (eavesdrop)', () => {
  async function bridgedCall(c: Client): Promise<{ consumer: string; agent: string }> {
    await fakeRegister(sim, '1001');
    await fakeRegister(sim, '2001');
    const consumer = randomUUID();
    const agent = randomUUID();
    await c.bgapi(originate(`origination_uuid=${consumer}`, 'sofia/gateway/default/5551230042', `&bridge({origination_uuid=${agent}}user/1001)`));
    clock.advance(RING_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_BRIDGE' && e.uuid === consumer, 'bridge');
    return { consumer, agent };
  }

  test.each([
    ['listen', 'eavesdrop_whisper_aleg=false,eavesdrop_whisper_bleg=false', 'eavesdrop', 'listen', null],
    ['whisper', 'eavesdrop_whisper_aleg=true', 'eavesdrop', 'whisper', 'aleg'],
    ['barge', 'eavesdrop_whisper_aleg=true,eavesdrop_whisper_bleg=true', 'eavesdrop', 'barge', 'both'],
    ['three_way', '', 'three_way', 'barge', 'both'],
  ] as const)('%s: a supervisor leg eavesdrops on the agent leg', async (_label, vars, app, mode, whisperTo) => {
    const c = await connect(sim.port);
    const { agent } = await bridgedCall(c);
    const sup = randomUUID();
    expect(await c.api(`originate {origination_uuid=${sup}${vars ? `,${vars}` : ''}}user/2001 &${app}(${agent})`)).toBe(`+OK ${sup}\n`);
    const exec = await c.waitFor((e) => e.name === 'CHANNEL_EXECUTE' && e.uuid === sup, 'execute');
    expect(exec.headers).toMatchObject({ Application: app, 'Application-Data': agent });
    expect(sim.channel(sup)!.eavesdrop).toEqual({ target: agent, mode, whisperTo });
  });

  test('keys 0-3 switch modes; the eavesdropped leg hanging up ends the supervisor leg', async () => {
    const c = await connect(sim.port);
    const { consumer, agent } = await bridgedCall(c);
    const sup = randomUUID();
    await c.api(`originate {origination_uuid=${sup}}user/2001 &eavesdrop(${agent})`);
    expect(sim.channel(sup)!.eavesdrop!.mode).toBe('listen');
    sim.dtmf(sup, '3');
    expect(sim.channel(sup)!.eavesdrop!.mode).toBe('barge');
    sim.dtmf(sup, '2');
    expect(sim.channel(sup)!.eavesdrop).toMatchObject({ mode: 'whisper', whisperTo: 'aleg' });
    sim.dtmf(sup, '0');
    expect(sim.channel(sup)!.eavesdrop!.mode).toBe('listen');
    sim.remoteHangup(consumer);
    const done = await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === sup, 'supervisor hangup');
    expect(done.headers['Hangup-Cause']).toBe('NORMAL_CLEARING');
    expect(flow(c, sup).slice(-4)).toEqual(['CHANNEL_EXECUTE_COMPLETE', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY']);
    expect(sim.channel(agent)).toBeUndefined();
  });

  test('eavesdrop on a leg that does not exist hangs the supervisor leg up', async () => {
    const c = await connect(sim.port);
    await fakeRegister(sim, '2001');
    const sup = randomUUID();
    await c.api(`originate {origination_uuid=${sup}}user/2001 &eavesdrop(${randomUUID()})`);
    await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === sup, 'hangup');
  });

  test('takeover: uuid_bridge moves the consumer to the supervisor and releases the agent leg', async () => {
    const c = await connect(sim.port);
    const { consumer, agent } = await bridgedCall(c);
    const sup = randomUUID();
    await c.api(`originate {origination_uuid=${sup}}user/2001 &park()`);
    expect(await c.api(`uuid_bridge ${consumer} ${sup}`)).toBe(`+OK ${sup}\n`);
    const moved = await c.waitFor((e) => e.name === 'CHANNEL_BRIDGE' && e.headers['Other-Leg-Unique-ID'] === sup, 'bridge to supervisor');
    expect(moved.uuid).toBe(consumer);
    const released = await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === agent, 'agent released');
    expect(released.headers['Hangup-Cause']).toBe('NORMAL_CLEARING');
    expect(sim.channel(consumer)!.bridgedTo).toBe(sup);
  });
});

describe('recording', () => {
  test('uuid_record writes a valid 8 kHz mono PCM WAV on stop', async () => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042'));
    clock.advance(RING_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === uuid, 'park');
    const file = path.join(recordingsDir, 'tenant-a', `${uuid}.wav`);
    expect(await c.api(`uuid_record ${uuid} start ${file}`)).toBe('+OK Success\n');
    expect((await c.waitFor((e) => e.name === 'RECORD_START', 'start')).headers['Record-File-Path']).toBe(file);
    expect(sim.channel(uuid)!.recordings).toEqual([file]);
    clock.advance(2000);
    expect(await c.api(`uuid_record ${uuid} stop ${file}`)).toBe('+OK Success\n');
    const stop = await c.waitFor((e) => e.name === 'RECORD_STOP', 'stop');
    expect(stop.headers).toMatchObject({ 'Record-File-Path': file, 'Record-Completion-Cause': 'success' });
    expect(stop.variables).toMatchObject({ record_ms: '2000', record_seconds: '2', record_samples: '16000' });
    const wav = readFileSync(file);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(readWavHeader(wav)).toMatchObject({ format: 1, channels: 1, sampleRate: 8000, bitsPerSample: 16, durationMs: 2000 });
    expect(await c.api(`uuid_record ${uuid} stop ${file}`)).toBe('-ERR Cannot stop record session!\n');
  });

  test('a recording still running at hangup is finished before CHANNEL_HANGUP_COMPLETE; relative paths land in the recordings directory', async () => {
    const c = await connect(sim.port);
    const uuid = randomUUID();
    await c.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042'));
    clock.advance(RING_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_PARK' && e.uuid === uuid, 'park');
    expect(await c.api(`uuid_record ${uuid} start rel/${uuid}.wav`)).toBe('+OK Success\n');
    clock.advance(TALK_MS);
    await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
    expect(flow(c, uuid).slice(-4)).toEqual(['RECORD_STOP', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY']);
    expect(readWavHeader(readFileSync(path.join(recordingsDir, 'rel', `${uuid}.wav`))).durationMs).toBe(TALK_MS);
  });
});

describe('several clients and many calls', () => {
  test('every connection gets the events it subscribed to, in its own format and filters', async () => {
    const all = await connect(sim.port);
    const plain = await connect(sim.port, { format: 'plain', events: ['CHANNEL_ANSWER', 'CHANNEL_HANGUP_COMPLETE'] });
    const filtered = await connect(sim.port);
    const uuid = randomUUID();
    await new Promise<void>((resolve) => filtered.conn.filter('Unique-ID', uuid, () => resolve()));
    const other = randomUUID();
    await all.bgapi(originate(`origination_uuid=${uuid}`, 'sofia/gateway/default/5551230042'));
    await all.bgapi(originate(`origination_uuid=${other}`, 'sofia/gateway/default/5551230043'));
    clock.advance(RING_MS + TALK_MS);
    for (const c of [all, plain, filtered]) await c.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === uuid, 'hangup');
    await plain.waitFor((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && e.uuid === other, 'other hangup');
    // modesl adds BACKGROUND_JOB and CHANNEL_EXECUTE_COMPLETE to every subscription it sends.
    expect(new Set(plain.events.map((e) => e.name))).toEqual(new Set(['CHANNEL_ANSWER', 'CHANNEL_HANGUP_COMPLETE', 'BACKGROUND_JOB']));
    // The filter keeps only this leg's events.
    expect(filtered.events.length).toBeGreaterThan(0);
    expect(filtered.events.every((e) => e.uuid === uuid)).toBe(true);
    // BACKGROUND_JOB has no Unique-ID header, so the filter drops it.
    expect(flow(all, uuid).filter((n) => n !== 'BACKGROUND_JOB')).toEqual(flow(filtered, uuid));
    expect(all.events.some((e) => e.uuid === other)).toBe(true);
    expect(sim.connectionCount()).toBe(3);
  });

  test('one hundred concurrent calls, one per last-two-digit value, end as the plan says', async () => {
    const c = await connect(sim.port);
    const watcher = await connect(sim.port, { events: ['CHANNEL_HANGUP_COMPLETE'] });
    const calls = Array.from({ length: 100 }, (_, i) => ({ uuid: randomUUID(), suffix: String(i).padStart(2, '0') }));
    const jobs = await Promise.all(calls.map((k) => c.bgapi(originate(`origination_uuid=${k.uuid}`, `sofia/gateway/default/+1555123${k.suffix.padStart(4, '0')}`))));
    expect(new Set(jobs.map((j) => j.jobUuid)).size).toBe(100);
    await c.barrier();
    expect(JSON.parse(await c.api('show channels as json')).row_count).toBe(100);
    expect(await c.api('show calls count')).toBe('\n100 total.\n');
    clock.advance(RING_MS);
    await c.barrier();
    const results = c.events.filter((e) => e.name === 'BACKGROUND_JOB');
    expect(results).toHaveLength(100);
    const failures = results.filter((e) => e.body.startsWith('-ERR')).map((e) => e.body.trim());
    expect(failures.filter((b) => b === '-ERR USER_BUSY')).toHaveLength(10);
    expect(failures.filter((b) => b === '-ERR NO_ANSWER')).toHaveLength(10);
    expect(failures.filter((b) => b === '-ERR CALL_REJECTED')).toHaveLength(10);
    expect(results.filter((e) => e.body.startsWith('+OK'))).toHaveLength(70);
    expect(JSON.parse(await c.api('show channels as json')).row_count).toBe(70);
    clock.advance(TALK_MS);
    await watcher.barrier();
    const ended = watcher.events.filter((e) => e.name === 'CHANNEL_HANGUP_COMPLETE');
    expect(ended).toHaveLength(100);
    for (const k of calls) {
      const e = ended.find((x) => x.uuid === k.uuid)!;
      const n = Number(k.suffix);
      const expected = n < 70 ? 'NORMAL_CLEARING' : n < 80 ? 'USER_BUSY' : n < 90 ? 'NO_ANSWER' : 'CALL_REJECTED';
      expect([k.suffix, e.headers['Hangup-Cause']]).toEqual([k.suffix, expected]);
    }
    expect(await c.api('show channels')).toMatch(/^uuid,direction,created,.*\n\n0 total\.\n$/s);
    expect(await c.api('status')).toMatch(/100 session\(s\) since startup\n0 session\(s\) - peak 100/);
  });
});
