import { EventEmitter } from 'node:events';
import { Parser, type Event as ModeslEvent } from 'modesl';
import { createFakeClock } from '../../src/switch/simulator/clock';
import { parseDialString, parseOriginate, parseVarList, splitArgs } from '../../src/switch/simulator/dialstring';
import { outcomeFor } from '../../src/switch/simulator/plan';
import { apiResponse, CommandReader, commandReply, serializeEvent, type SwitchEvent } from '../../src/switch/simulator/protocol';
import { Subscription } from '../../src/switch/simulator/subscription';
import { readWavHeader, wavBuffer } from '../../src/switch/simulator/wav';

/** Feeds bytes to modesl's own parser (the client the product uses) and collects what it emits. */
function parseWithModesl(chunks: Buffer[]): Array<{ event: ModeslEvent; headers: Record<string, unknown>; body?: string }> {
  const socket = new EventEmitter();
  const parser = new Parser(socket);
  const out: Array<{ event: ModeslEvent; headers: Record<string, unknown>; body?: string }> = [];
  parser.on('esl::event', (event: unknown, headers: unknown, body: unknown) => {
    out.push({ event: event as ModeslEvent, headers: headers as Record<string, unknown>, body: body as string | undefined });
  });
  for (const c of chunks) socket.emit('data', c);
  return out;
}

function bytewise(s: string): Buffer[] {
  return [...Buffer.from(s)].map((b) => Buffer.from([b]));
}

describe('switch simulator: outcome plan (CONTRACT section 2)', () => {
  test.each([
    ['+15551230000', 'human', true],
    ['+15551230059', 'human', true],
    ['+15551230060', 'machine', true],
    ['+15551230069', 'machine', true],
    ['+15551230070', 'busy', false],
    ['+15551230079', 'busy', false],
    ['+15551230080', 'no_answer', false],
    ['+15551230089', 'no_answer', false],
    ['+15551230090', 'rejected', false],
    ['+15551230099', 'rejected', false],
  ])('%s is %s', (number, kind, answered) => {
    const o = outcomeFor(number)!;
    expect(o.kind).toBe(kind);
    expect(o.answered).toBe(answered);
  });

  test('failure causes and SIP statuses', () => {
    expect(outcomeFor('5551230071')).toMatchObject({ hangupCause: 'USER_BUSY', sipStatus: 486 });
    expect(outcomeFor('5551230081')).toMatchObject({ hangupCause: 'NO_ANSWER', sipStatus: 480 });
    expect(outcomeFor('5551230091')).toMatchObject({ hangupCause: 'CALL_REJECTED', sipStatus: 403 });
    expect(outcomeFor('5551230001')).toMatchObject({ amd: 'HUMAN' });
    expect(outcomeFor('5551230061')).toMatchObject({ amd: 'MACHINE' });
  });

  test('fewer than two digits has no outcome', () => {
    expect(outcomeFor('+7')).toBeNull();
    expect(outcomeFor('abc')).toBeNull();
  });
});

describe('switch simulator: originate grammar', () => {
  test('splits on spaces outside quotes, braces and parentheses', () => {
    expect(splitArgs("{a='x y',b=2}sofia/gateway/gw/+15550001 &playback(/tmp/a b.wav) XML default")).toEqual([
      "{a='x y',b=2}sofia/gateway/gw/+15550001",
      '&playback(/tmp/a b.wav)',
      'XML',
      'default',
    ]);
  });

  test('variable lists: quotes, escaped commas, custom separator', () => {
    expect(parseVarList("a=1,b='x, y',c=p\\,q")).toEqual([
      ['a', '1'],
      ['b', 'x, y'],
      ['c', 'p,q'],
    ]);
    expect(parseVarList('^^:a=1,2:b=3')).toEqual([
      ['a', '1,2'],
      ['b', '3'],
    ]);
  });

  test('endpoints', () => {
    expect(parseDialString('{x=1}[y=2]sofia/gateway/carrier/+15551230042')).toEqual({
      vars: [
        ['x', '1'],
        ['y', '2'],
      ],
      endpoint: { kind: 'pstn', tech: 'sofia', profile: 'external', gateway: 'carrier', number: '+15551230042', channelName: 'sofia/external/+15551230042' },
    });
    expect(parseDialString('user/1001@acme.example').endpoint).toMatchObject({ kind: 'user', extension: '1001', domain: 'acme.example' });
    expect(parseDialString('sofia/internal/5551230042@10.0.0.1').endpoint).toMatchObject({ kind: 'pstn', number: '5551230042', host: '10.0.0.1' });
    expect(parseDialString('error/user_busy').endpoint).toEqual({ kind: 'error', cause: 'USER_BUSY' });
    expect(parseDialString('iax/foo').endpoint).toEqual({ kind: 'unsupported', tech: 'iax' });
  });

  test('application, extension and positional arguments', () => {
    const app = parseOriginate('{origination_uuid=abc}user/1001 &eavesdrop(1234-5678)');
    expect(app).toMatchObject({ target: { kind: 'app', app: 'eavesdrop', arg: '1234-5678' } });
    const exten = parseOriginate("sofia/gateway/gw/5551230042 1001 XML default 'Acme Recovery' 5550001111 20");
    expect(exten).toMatchObject({
      target: { kind: 'exten', exten: '1001', dialplan: 'XML', context: 'default' },
      cidName: 'Acme Recovery',
      cidNumber: '5550001111',
      timeoutSec: 20,
    });
    expect(parseOriginate('user/1001')).toHaveProperty('error');
    expect(parseOriginate('user/1001 &')).toHaveProperty('error');
  });
});

describe('switch simulator: wire format', () => {
  test('command reader reassembles commands split at every byte and several per chunk', () => {
    const reader = new CommandReader();
    const cmds = bytewise('auth ClueCon\n\nbgapi status\nJob-UUID: j-1\n\r\napi show channels as json\r\n\r\n').flatMap((b) => reader.push(b));
    expect(cmds).toEqual([
      { line: 'auth ClueCon', headers: {} },
      { line: 'bgapi status', headers: { 'Job-UUID': 'j-1' } },
      { line: 'api show channels as json', headers: {} },
    ]);
    const body = 'Event-Name: CUSTOM\n';
    const whole = new CommandReader().push(Buffer.from(`sendevent CUSTOM\nContent-Length: ${body.length}\n\n${body}api status\n\n`));
    expect(whole).toEqual([
      { line: 'sendevent CUSTOM', headers: { 'Content-Length': String(body.length) }, body },
      { line: 'api status', headers: {} },
    ]);
  });

  test('command reader refuses an endless header block', () => {
    const reader = new CommandReader();
    expect(() => reader.push(Buffer.alloc(70 * 1024, 0x41))).toThrow('too large');
  });

  const ev: SwitchEvent = {
    name: 'CHANNEL_HANGUP_COMPLETE',
    headers: [
      ['Event-Name', 'CHANNEL_HANGUP_COMPLETE'],
      ['Unique-ID', 'u-1'],
      ['Hangup-Cause', 'NORMAL_CLEARING'],
      ['variable_origination_caller_id_name', 'Acme Recovery, Inc: 100% (test)'],
    ],
  };
  const job: SwitchEvent = { name: 'BACKGROUND_JOB', headers: [['Event-Name', 'BACKGROUND_JOB'], ['Job-UUID', 'j-9']], body: '+OK u-1\n' };

  test.each(['plain', 'json'] as const)('%s events survive modesl parsing byte by byte', (format) => {
    const stream = serializeEvent(ev, format) + serializeEvent(job, format) + commandReply('+OK accepted') + apiResponse('-ERR foo Command not found!\n');
    const parsed = parseWithModesl(bytewise(stream));
    expect(parsed).toHaveLength(4);
    expect(parsed[0]!.headers['Content-Type']).toBe(format === 'json' ? 'text/event-json' : 'text/event-plain');
    expect(parsed[0]!.event.getHeader('Hangup-Cause')).toBe('NORMAL_CLEARING');
    expect(parsed[0]!.event.getHeader('variable_origination_caller_id_name')).toBe('Acme Recovery, Inc: 100% (test)');
    expect(parsed[1]!.event.getHeader('Job-UUID')).toBe('j-9');
    expect(parsed[1]!.event.getBody()).toBe('+OK u-1\n');
    expect(parsed[2]!.event.getHeader('Modesl-Reply-OK')).toBe('accepted');
    expect(parsed[3]!.headers['Content-Type']).toBe('api/response');
    expect(parsed[3]!.body).toBe('-ERR foo Command not found!\n');
  });
});

describe('switch simulator: subscriptions', () => {
  const custom = (subclass: string): SwitchEvent => ({ name: 'CUSTOM', subclass, headers: [['Event-Name', 'CUSTOM'], ['Event-Subclass', subclass]] });
  const chan = (name: string, uuid: string): SwitchEvent => ({ name, headers: [['Event-Name', name], ['Unique-ID', uuid]] });

  test('names, CUSTOM subclasses, ALL, nixevent, noevents', () => {
    const s = new Subscription();
    expect(s.wants(chan('CHANNEL_ANSWER', 'a'))).toBe(false);
    expect(s.enable('json', ['nonsense'])).toBe(false);
    expect(s.enable('json', ['CHANNEL_ANSWER', 'CUSTOM', 'amd', 'BACKGROUND_JOB'])).toBe(true);
    expect(s.wants(chan('CHANNEL_ANSWER', 'a'))).toBe(true);
    expect(s.wants(custom('amd'))).toBe(true);
    // After CUSTOM every word is a subclass, as in mod_event_socket.
    expect(s.wants(chan('BACKGROUND_JOB', 'a'))).toBe(false);
    expect(s.wants(custom('sofia::register'))).toBe(false);
    s.nix(['CHANNEL_ANSWER']);
    expect(s.wants(chan('CHANNEL_ANSWER', 'a'))).toBe(false);
    s.enable('plain', ['all']);
    expect(s.format).toBe('plain');
    expect(s.wants(custom('sofia::register'))).toBe(true);
    s.clear();
    expect(s.wants(custom('amd'))).toBe(false);
  });

  test('filters keep only matching events', () => {
    const s = new Subscription();
    s.enable('json', ['ALL']);
    s.addFilter('Unique-ID', 'a');
    s.addFilter('Unique-ID', '/^z-/');
    expect(s.wants(chan('CHANNEL_ANSWER', 'a'))).toBe(true);
    expect(s.wants(chan('CHANNEL_ANSWER', 'z-1'))).toBe(true);
    expect(s.wants(chan('CHANNEL_ANSWER', 'b'))).toBe(false);
    s.deleteFilter('all');
    expect(s.wants(chan('CHANNEL_ANSWER', 'b'))).toBe(true);
  });
});

describe('switch simulator: fake clock', () => {
  test('fires timers in time order, including timers scheduled while advancing', () => {
    const clock = createFakeClock(1_000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('b@20'), 20);
    clock.setTimeout(() => {
      fired.push('a@10');
      clock.setTimeout(() => fired.push('c@15'), 5);
      clock.setTimeout(() => fired.push('late@40'), 30);
    }, 10);
    const cancelled = clock.setTimeout(() => fired.push('never'), 5);
    clock.clearTimeout(cancelled);
    clock.advance(20);
    expect(fired).toEqual(['a@10', 'c@15', 'b@20']);
    expect(clock.now()).toBe(1_020);
    expect(clock.pending()).toBe(1);
    clock.advance(20);
    expect(fired).toEqual(['a@10', 'c@15', 'b@20', 'late@40']);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});

describe('switch simulator: WAV writer', () => {
  test('PCM 8 kHz mono 16-bit with consistent sizes', () => {
    const buf = wavBuffer({ durationMs: 1000 });
    const info = readWavHeader(buf);
    expect(info).toMatchObject({ format: 1, channels: 1, sampleRate: 8000, byteRate: 16000, bitsPerSample: 16, dataBytes: 16000, durationMs: 1000 });
    expect(buf.readInt16LE(44 + 2 * 2)).not.toBe(0);
    expect(() => readWavHeader(Buffer.from('RIFX'))).toThrow();
    const truncated = buf.subarray(0, 100);
    expect(() => readWavHeader(truncated)).toThrow('does not match');
  });
});
