import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection, type Event as ModeslEvent } from 'modesl';
import { createFakeClock, readWavHeader, startSwitchSimulator, type FakeClock, type SwitchEvent, type SwitchSimulator } from '../../src/switch/simulator';

/**
 * The simulator records only what FreeSWITCH records: a channel whose media is up. `uuid_record`
 * (the product's command) and the `record_session` application (sendmsg over the wire, through
 * modesl) on an answered leg; a ringing leg, an unknown one and one that hung up are refused.
 * Time is a fake clock: nothing here sleeps.
 */

const RING_MS = 500;
const TALK_MS = 3000;

let sim: SwitchSimulator;
let clock: FakeClock;
let dir: string;
let events: SwitchEvent[];
const connections: Connection[] = [];

beforeEach(async () => {
  clock = createFakeClock(Date.UTC(2026, 0, 5, 15, 0, 0));
  dir = mkdtempSync(path.join(os.tmpdir(), 'switch-sim-rec-'));
  sim = await startSwitchSimulator({ clock, ringMs: RING_MS, talkMs: TALK_MS, amdMs: 0, promptMs: 1000, recordingsDir: dir });
  events = [];
  sim.onEvent((ev) => events.push(ev));
});

afterEach(async () => {
  for (const c of connections.splice(0)) c.disconnect();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
});

const header = (ev: SwitchEvent, name: string) => ev.headers.find(([k]) => k === name)?.[1];
const ofLeg = (uuid: string, name: string) => events.filter((ev) => ev.name === name && header(ev, 'Unique-ID') === uuid);

/** A consumer leg placed and still ringing; `answer()` lets the ring time pass and waits for the answer. */
function placeCall(lastTwo = '42'): { uuid: string; answer: () => Promise<void> } {
  const uuid = randomUUID();
  const answered = sim.api(`originate {origination_uuid=${uuid}}sofia/gateway/default/55512300${lastTwo} &park()`);
  return {
    uuid,
    answer: async () => {
      clock.advance(RING_MS);
      expect(await answered).toBe(`+OK ${uuid}\n`);
    },
  };
}

async function eslConnection(): Promise<Connection> {
  const conn = await new Promise<Connection>((resolve, reject) => {
    const c: Connection = new Connection('127.0.0.1', sim.port, sim.password, () => resolve(c));
    c.on('error', reject);
  });
  connections.push(conn);
  return conn;
}

/** sendmsg execute over the wire; resolves the application's CHANNEL_EXECUTE_COMPLETE response. */
async function execute(app: string, arg: string, uuid: string): Promise<string> {
  const conn = await eslConnection();
  const done = await new Promise<ModeslEvent>((resolve) => conn.execute(app, arg, uuid, resolve));
  return String(done.getHeader('Application-Response'));
}

describe('switch simulator recording: only an answered channel is recorded', () => {
  it('uuid_record: refused on an unknown leg and on a ringing one; records once answered; refused after the hangup', async () => {
    expect(await sim.api(`uuid_record ${randomUUID()} start ${path.join(dir, 'x.wav')}`)).toBe('-ERR No such channel!\n');

    const call = placeCall();
    expect(sim.channel(call.uuid)?.state).toBe('ringing');
    const file = path.join(dir, 't', `${call.uuid}.wav`);
    expect(await sim.api(`uuid_record ${call.uuid} start ${file}`)).toBe('-ERR Cannot record session!\n');
    expect(ofLeg(call.uuid, 'RECORD_START')).toEqual([]);
    expect(sim.channel(call.uuid)!.recordings).toEqual([]);

    await call.answer();
    expect(await sim.api(`uuid_record ${call.uuid} start ${file}`)).toBe('+OK Success\n');
    expect(ofLeg(call.uuid, 'RECORD_START').map((ev) => header(ev, 'Record-File-Path'))).toEqual([file]);
    clock.advance(TALK_MS);
    expect(sim.channel(call.uuid)).toBeUndefined();
    expect(ofLeg(call.uuid, 'RECORD_STOP')).toHaveLength(1);
    expect(readWavHeader(readFileSync(file)).durationMs).toBe(TALK_MS);
    expect(await sim.api(`uuid_record ${call.uuid} start ${file}`)).toBe('-ERR No such channel!\n');
  });

  it('a leg that is never answered (busy) cannot be recorded and leaves no file', async () => {
    const call = placeCall('71');
    const file = path.join(dir, `${call.uuid}.wav`);
    expect(await sim.api(`uuid_record ${call.uuid} start ${file}`)).toBe('-ERR Cannot record session!\n');
    clock.advance(RING_MS);
    expect(await sim.api(`uuid_record ${call.uuid} start ${file}`)).toBe('-ERR No such channel!\n');
    expect(existsSync(file)).toBe(false);
  });

  it('record_session / stop_record_session (sendmsg): refused while ringing, record an answered leg', async () => {
    const call = placeCall();
    const file = path.join(dir, `${call.uuid}.wav`);
    expect(await execute('record_session', file, call.uuid)).toBe('-ERR Cannot record session!');
    expect(ofLeg(call.uuid, 'RECORD_START')).toEqual([]);

    await call.answer();
    expect(await execute('record_session', file, call.uuid)).toBe('+OK Success');
    expect(sim.channel(call.uuid)!.recordings).toEqual([file]);
    clock.advance(1500);
    expect(await execute('stop_record_session', file, call.uuid)).toBe('+OK Success');
    expect(ofLeg(call.uuid, 'RECORD_STOP').map((ev) => header(ev, 'Record-Completion-Cause'))).toEqual(['success']);
    expect(readWavHeader(readFileSync(file)).durationMs).toBe(1500);
    expect(await execute('stop_record_session', file, call.uuid)).toBe('-ERR Cannot stop record session!');
  });

  it("a consumer leg's recording goes on across a bridge to another leg and ends at the hangup, as one file", async () => {
    const consumer = placeCall();
    await consumer.answer();
    const file = path.join(dir, `${consumer.uuid}.wav`);
    expect(await sim.api(`uuid_record ${consumer.uuid} start ${file}`)).toBe('+OK Success\n');
    clock.advance(1000);
    // A second answered leg (the person the call is handed to) is bridged in.
    const person = placeCall('43');
    await person.answer();
    expect(await sim.api(`uuid_bridge ${consumer.uuid} ${person.uuid}`)).toBe(`+OK ${person.uuid}\n`);
    expect(sim.channel(consumer.uuid)!.recordings).toEqual([file]);
    sim.remoteHangup(consumer.uuid);
    expect(ofLeg(consumer.uuid, 'RECORD_START')).toHaveLength(1);
    expect(ofLeg(consumer.uuid, 'RECORD_STOP')).toHaveLength(1);
    expect(readWavHeader(readFileSync(file)).durationMs).toBe(1000 + RING_MS);
  });
});
