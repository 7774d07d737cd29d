import { Event as ModeslEvent } from 'modesl';
import { AppError } from '../../src/lib/errors';
import { buildOriginate, dialString, eavesdropVariables } from '../../src/switch/esl/commands';
import { EslCommandError, EslTimeoutError, EslUnavailableError, eslErrorToAppError, isErrorReply } from '../../src/switch/esl/errors';
import { fromModeslEvent } from '../../src/switch/esl/events';
import { LivenessProbe } from '../../src/switch/esl/liveness';
import { backoffDelay, ESL_EVENTS } from '../../src/switch/esl/manager';
import { loadConfig } from '../../src/config';
import { createFakeClock } from '../../src/switch/simulator/clock';
import { parseOriginate } from '../../src/switch/simulator/dialstring';

describe('ESL command layer: originate strings', () => {
  test('consumer leg with caller id, AMD, ids and park; the simulator grammar reads it back', () => {
    const { uuid, command } = buildOriginate(
      {
        to: { type: 'pstn', number: '+15551230042', gateway: 'carrier-a' },
        uuid: '6f1c2d3e-0000-4000-8000-000000000001',
        callerIdNumber: '+15550001111',
        callerIdName: 'Acme Recovery, Inc',
        timeoutSec: 30,
        amd: true,
        variables: { dd_call_id: 'c-1', dd_attempt_id: 'a-1', dd_human: true },
      },
      { gateway: 'unused' },
    );
    expect(uuid).toBe('6f1c2d3e-0000-4000-8000-000000000001');
    expect(command).toBe(
      "originate {origination_uuid=6f1c2d3e-0000-4000-8000-000000000001,origination_caller_id_number=+15550001111,origination_caller_id_name='Acme Recovery, Inc',originate_timeout=30,execute_on_answer=amd,dd_call_id=c-1,dd_attempt_id=a-1,dd_human=true}sofia/gateway/carrier-a/+15551230042 &park()",
    );
    const parsed = parseOriginate(command.slice('originate '.length));
    expect(parsed).toMatchObject({ endpoint: { kind: 'pstn', gateway: 'carrier-a', number: '+15551230042' }, target: { kind: 'app', app: 'park' } });
    expect(Object.fromEntries((parsed as { vars: Array<[string, string]> }).vars)).toMatchObject({
      origination_caller_id_name: 'Acme Recovery, Inc',
      dd_attempt_id: 'a-1',
    });
  });

  test('a generated uuid, agent legs, bridge and eavesdrop applications', () => {
    const a = buildOriginate({ to: { type: 'agent', extension: 'agent.7' } }, { agentDomain: 'acme.example' });
    expect(a.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.command).toBe(`originate {origination_uuid=${a.uuid}}user/agent.7@acme.example &park()`);
    const b = buildOriginate({ to: { type: 'pstn', number: '5551230042' }, uuid: 'u-1', then: { app: 'bridge', to: { type: 'agent', extension: '1001' }, variables: { dd_leg: 'agent' } } });
    expect(b.command).toBe('originate {origination_uuid=u-1}sofia/gateway/default/5551230042 &bridge({dd_leg=agent}user/1001)');
    const e = buildOriginate({ to: { type: 'agent', extension: '2001' }, uuid: 's-1', variables: Object.fromEntries(eavesdropVariables('whisper')), then: { app: 'eavesdrop', targetUuid: 'u-1' } });
    expect(e.command).toBe('originate {origination_uuid=s-1,eavesdrop_whisper_aleg=true,eavesdrop_whisper_bleg=false}user/2001 &eavesdrop(u-1)');
    expect(eavesdropVariables('barge')).toEqual([
      ['eavesdrop_whisper_aleg', 'true'],
      ['eavesdrop_whisper_bleg', 'true'],
    ]);
  });

  test.each([
    ['a newline in a variable value', { to: { type: 'pstn', number: '5551230042' }, variables: { x: 'a\nevent plain ALL' } }],
    ['a quote in a variable value', { to: { type: 'pstn', number: '5551230042' }, variables: { x: "O'Brien" } }],
    ['a brace in a variable value', { to: { type: 'pstn', number: '5551230042' }, variables: { x: 'a}user/1' } }],
    ['a bad variable name', { to: { type: 'pstn', number: '5551230042' }, variables: { 'x y': '1' } }],
    ['a non-numeric destination', { to: { type: 'pstn', number: '555 123' } }],
    ['an extension with a slash', { to: { type: 'agent', extension: '10/01' } }],
    ['a uuid with a space', { to: { type: 'agent', extension: '1001' }, uuid: 'a b' }],
    ['a zero timeout', { to: { type: 'agent', extension: '1001' }, timeoutSec: 0 }],
  ] as const)('refuses %s', (_label, params) => {
    expect(() => buildOriginate(params as never)).toThrow(TypeError);
  });

  test('dial strings', () => {
    expect(dialString({ type: 'pstn', number: '+15551230042' })).toBe('sofia/gateway/default/+15551230042');
    expect(dialString({ type: 'agent', extension: '1001', domain: 'x.example' })).toBe('user/1001@x.example');
    expect(() => dialString({ type: 'agent', extension: '1001', domain: 'bad domain' })).toThrow(TypeError);
  });
});

describe('ESL manager pieces', () => {
  test('back-off is capped, exponential and jittered between half and all of the step', () => {
    expect(backoffDelay(0, 100, 10_000, () => 0)).toBe(50);
    expect(backoffDelay(0, 100, 10_000, () => 1)).toBe(100);
    expect(backoffDelay(3, 100, 10_000, () => 1)).toBe(800);
    expect(backoffDelay(20, 100, 10_000, () => 0.5)).toBe(7500);
    expect(backoffDelay(1000, 100, 10_000, () => 1)).toBe(10_000);
  });

  test('subscription list keeps modesl required events before CUSTOM', () => {
    const custom = ESL_EVENTS.indexOf('CUSTOM');
    expect(ESL_EVENTS.indexOf('BACKGROUND_JOB')).toBeLessThan(custom);
    expect(ESL_EVENTS.indexOf('CHANNEL_EXECUTE_COMPLETE')).toBeLessThan(custom);
    expect(ESL_EVENTS.indexOf('CHANNEL_HANGUP_COMPLETE')).toBeLessThan(custom);
    expect(ESL_EVENTS.slice(custom + 1)).toEqual(expect.arrayContaining(['amd', 'sofia::register', 'sofia::unregister', 'dd::speech']));
    // After CUSTOM only subclasses (lowercase), never an event name.
    for (const word of ESL_EVENTS.slice(custom + 1)) expect(word).not.toMatch(/^[A-Z_]+$/);
    // The liveness probe listens for FreeSWITCH's periodic HEARTBEAT.
    expect(ESL_EVENTS.indexOf('HEARTBEAT')).toBeGreaterThanOrEqual(0);
    expect(ESL_EVENTS.indexOf('HEARTBEAT')).toBeLessThan(custom);
  });

  test('error replies, typed errors and their API mapping', () => {
    expect(isErrorReply('-ERR USER_BUSY\n')).toBe(true);
    expect(isErrorReply('-USAGE: <uuid>\n')).toBe(true);
    expect(isErrorReply('+OK u-1\n')).toBe(false);
    const busy = new EslCommandError('originate {x=1}sofia/gateway/gw/5551230071 &park()', '-ERR USER_BUSY');
    expect(busy.switchCause).toBe('USER_BUSY');
    expect(busy.message).not.toContain('5551230071');
    expect(new EslTimeoutError('status', 10)).toBeInstanceOf(EslUnavailableError);

    const unavailable = eslErrorToAppError(new EslUnavailableError('down')) as AppError;
    expect(unavailable).toBeInstanceOf(AppError);
    expect(unavailable.toBody().error).toMatchObject({ code: 'esl_unavailable' });
    expect(unavailable.status).toBe(503);
    const rejected = eslErrorToAppError(busy, 'supervision_failed') as AppError;
    expect([rejected.status, rejected.code]).toEqual([502, 'supervision_failed']);
    const other = new Error('x');
    expect(eslErrorToAppError(other)).toBe(other);
  });

  test('a modesl event becomes headers, variables and body', () => {
    const ev = new ModeslEvent({
      'Event-Name': 'CHANNEL_HANGUP_COMPLETE',
      'Unique-ID': 'u-1',
      'Hangup-Cause': 'USER_BUSY',
      variable_sip_term_status: '486',
      variable_dd_attempt_id: 'a-1',
      'Content-Length': 3,
      _body: 'abc',
    });
    expect(fromModeslEvent(ev)).toEqual({
      name: 'CHANNEL_HANGUP_COMPLETE',
      subclass: undefined,
      uuid: 'u-1',
      jobUuid: undefined,
      headers: {
        'Event-Name': 'CHANNEL_HANGUP_COMPLETE',
        'Unique-ID': 'u-1',
        'Hangup-Cause': 'USER_BUSY',
        variable_sip_term_status: '486',
        variable_dd_attempt_id: 'a-1',
        'Content-Length': '3',
      },
      variables: { sip_term_status: '486', dd_attempt_id: 'a-1' },
      body: 'abc',
    });
  });
});

describe('ESL liveness probe (fake clock)', () => {
  function probe(timeoutMs = 15_000) {
    const clock = createFakeClock(0);
    const calls: string[] = [];
    const p = new LivenessProbe({
      timeoutMs,
      clock,
      probe: () => calls.push(`probe@${clock.now()}`),
      dead: (silentMs) => calls.push(`dead@${clock.now()} after ${silentMs}`),
    });
    return { clock, calls, p };
  }

  test('traffic more often than a third of the timeout: no probe, never dead', () => {
    const { clock, calls, p } = probe();
    p.start();
    for (let i = 0; i < 100; i++) {
      clock.advance(4_000);
      p.heard();
    }
    expect(calls).toEqual([]);
    expect(p.silenceMs()).toBe(0);
    clock.advance(3_000);
    expect(p.silenceMs()).toBe(3_000);
  });

  test('an idle link is probed after a third of the timeout; the answer keeps it alive and the next silence is probed again', () => {
    const { clock, calls, p } = probe();
    p.start();
    expect(p.probeAfterMs).toBe(5_000);
    clock.advance(4_999);
    expect(calls).toEqual([]);
    clock.advance(1);
    expect(calls).toEqual(['probe@5000']);
    clock.advance(200);
    p.heard();
    // One probe per silence: the next one only 5 s after the answer.
    clock.advance(4_999);
    expect(calls).toEqual(['probe@5000']);
    clock.advance(1);
    expect(calls).toEqual(['probe@5000', 'probe@10200']);
  });

  test('a half-open link (the probe gets no answer) is dead exactly the timeout after the last byte, once', () => {
    const { clock, calls, p } = probe();
    p.start();
    clock.advance(2_000);
    p.heard();
    clock.advance(14_999);
    expect(calls).toEqual(['probe@7000']);
    clock.advance(1);
    expect(calls).toEqual(['probe@7000', 'dead@17000 after 15000']);
    // The probe stops itself: nothing more fires, no timer is left behind.
    expect(clock.pending()).toBe(0);
    clock.advance(60_000);
    expect(calls).toHaveLength(2);
  });

  test('a heartbeat interval longer than the timeout (FreeSWITCH 20 s against 15 s) still keeps a healthy link up through the probe', () => {
    const { clock, calls, p } = probe();
    p.start();
    // The switch answers every probe 50 ms later and sends HEARTBEAT every 20 s.
    for (let t = 0; t < 120_000; t += 50) {
      clock.advance(50);
      if (calls.at(-1)?.startsWith('probe') && !calls.at(-1)!.endsWith('answered')) {
        calls[calls.length - 1] += ' answered';
        p.heard();
      }
      if (clock.now() % 20_000 === 0) p.heard();
    }
    expect(calls.some((c) => c.startsWith('dead'))).toBe(false);
    expect(calls.length).toBeGreaterThan(10);
  });

  test('stop() cancels the timer; start() watches a new link from scratch', () => {
    const { clock, calls, p } = probe(600);
    p.start();
    clock.advance(100);
    p.stop();
    expect(clock.pending()).toBe(0);
    clock.advance(10_000);
    expect(calls).toEqual([]);
    p.start();
    clock.advance(200);
    expect(calls).toEqual(['probe@10300']);
    clock.advance(400);
    expect(calls).toEqual(['probe@10300', 'dead@10700 after 600']);
  });

  test('refuses a timeout that cannot be split into a probe and a deadline', () => {
    expect(() => new LivenessProbe({ timeoutMs: 0, probe: () => undefined, dead: () => undefined })).toThrow(RangeError);
    expect(() => new LivenessProbe({ timeoutMs: Number.NaN, probe: () => undefined, dead: () => undefined })).toThrow(RangeError);
  });

  test('ESL_LIVENESS_TIMEOUT_MS: 15 s by default, read and validated', () => {
    expect(loadConfig({}).ESL_LIVENESS_TIMEOUT_MS).toBe(15_000);
    expect(loadConfig({ ESL_LIVENESS_TIMEOUT_MS: ' ' }).ESL_LIVENESS_TIMEOUT_MS).toBe(15_000);
    expect(loadConfig({ ESL_LIVENESS_TIMEOUT_MS: '5000' }).ESL_LIVENESS_TIMEOUT_MS).toBe(5_000);
    expect(() => loadConfig({ ESL_LIVENESS_TIMEOUT_MS: '50' })).toThrow('ESL_LIVENESS_TIMEOUT_MS');
    expect(() => loadConfig({ ESL_LIVENESS_TIMEOUT_MS: 'soon' })).toThrow('ESL_LIVENESS_TIMEOUT_MS');
    expect(() => loadConfig({ ESL_LIVENESS_TIMEOUT_MS: '1.5' })).toThrow('ESL_LIVENESS_TIMEOUT_MS');
  });
});
