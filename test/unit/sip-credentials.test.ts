import { clearsWrapUp } from '../../src/modules/agents/agent.rules';
import { newSipPassword, newSipUsername } from '../../src/modules/sip-credentials/sip-credential.rules';
import { buildFlushRegistration, createSwitchCommands } from '../../src/switch/esl/commands';
import { EslCommandError } from '../../src/switch/esl/errors';
import type { EslManager } from '../../src/switch/esl/manager';

/** An ESL manager that answers every api command with `reply` and remembers what it was sent. */
function fakeEsl(reply: string) {
  const sent: string[] = [];
  const esl = { api: (command: string) => (sent.push(command), Promise.resolve(reply)) } as unknown as EslManager;
  return { esl, sent };
}

describe('SIP registration flush command', () => {
  test('is FreeSWITCH sofia syntax: user@domain, or the bare user', () => {
    expect(buildFlushRegistration('internal', '1001', 'sip.acme.example')).toBe('sofia profile internal flush_inbound_reg 1001@sip.acme.example');
    expect(buildFlushRegistration('internal', 'ops-1.a_B')).toBe('sofia profile internal flush_inbound_reg ops-1.a_B');
  });

  test.each([
    ['an extension with a space', 'internal', '10 01', undefined],
    ['an extension with an at sign', 'internal', '1001@x', undefined],
    ['a domain with a space', 'internal', '1001', 'acme .example'],
    ['a profile with a space', 'inter nal', '1001', undefined],
    ['a multi-line extension', 'internal', '1001\napi shutdown', undefined],
  ])('refuses %s before it reaches the wire', (_label, profile, extension, domain) => {
    expect(() => buildFlushRegistration(profile, extension, domain)).toThrow(TypeError);
  });

  test('resolves on +OK, with the configured profile (default internal)', async () => {
    const { esl, sent } = fakeEsl('+OK flushing all registrations matching specified call_id\n');
    await createSwitchCommands(esl).flushRegistration('1001', 'acme.example');
    await createSwitchCommands(esl, { sipProfile: 'agents' }).flushRegistration('1002');
    expect(sent).toEqual(['sofia profile internal flush_inbound_reg 1001@acme.example', 'sofia profile agents flush_inbound_reg 1002']);
  });

  test.each([
    ['an unknown profile (FreeSWITCH answers it without -ERR)', 'Invalid Profile [internal]', 'Invalid'],
    ['-ERR', '-ERR no reply\n', 'no'],
  ])('rejects EslCommandError on %s', async (_label, reply, cause) => {
    const { esl } = fakeEsl(reply);
    const err = await createSwitchCommands(esl)
      .flushRegistration('1001')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EslCommandError);
    expect((err as EslCommandError).switchCause).toBe(cause);
  });
});

describe('ephemeral SIP credential values', () => {
  test('usernames are SIP-safe, 96 random bits, and do not repeat', () => {
    const names = Array.from({ length: 1000 }, newSipUsername);
    for (const n of names) expect(n).toMatch(/^dd[0-9a-f]{24}$/);
    expect(new Set(names).size).toBe(names.length);
  });

  test('passwords are 192 random bits of base64url and do not repeat', () => {
    const passwords = Array.from({ length: 1000 }, newSipPassword);
    for (const p of passwords) expect(p).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(new Set(passwords).size).toBe(passwords.length);
  });
});

describe('wrap-up deadline clearing', () => {
  test.each([
    ['wrap_up', 'wrap_up', true],
    ['wrap_up', 'checkout', true],
    ['on_call', 'checkout', true],
    ['available', 'checkout', true],
    ['available', 'pause', false],
    ['paused', 'resume', false],
    ['offline', 'checkin', false],
    ['available', 'checkin', false],
  ] as const)('from %s by %s: %s', (from, action, clears) => {
    expect(clearsWrapUp(from, action)).toBe(clears);
  });
});
