import { SIP_EXTENSION_RE as SWITCH_SAFE_RE } from '../../src/modules/tenants/tenant.rules';
import {
  checkSipExtension,
  isSipExtension,
  normalizeNewAgent,
  PRESENCES,
  presenceMove,
  type Presence,
  type PresenceAction,
} from '../../src/modules/agents/agent.rules';
import { errorOf } from '../helpers/errors';


describe('presenceMove (SPEC "Agent presence")', () => {
  const allowed: Record<PresenceAction, Partial<Record<Presence, [Presence, boolean]>>> = {
    checkin: { offline: ['available', true], available: ['available', false] },
    checkout: {
      offline: ['offline', false],
      available: ['offline', true],
      ringing: ['offline', true],
      on_call: ['offline', true],
      wrap_up: ['offline', true],
      paused: ['offline', true],
    },
    pause: { available: ['paused', true] },
    resume: { paused: ['available', true] },
    wrap_up: { wrap_up: ['available', true] },
  };

  for (const action of Object.keys(allowed) as PresenceAction[]) {
    for (const from of PRESENCES) {
      const expected = allowed[action][from];
      if (expected) {
        it(`${action} from ${from} → ${expected[0]}${expected[1] ? '' : ' (idempotent repeat)'}`, () => {
          expect(presenceMove(from, action)).toEqual({ to: expected[0], changed: expected[1] });
        });
      } else {
        it(`${action} from ${from} is 409 conflict`, () => {
          const err = errorOf(() => presenceMove(from, action));
          expect({ status: err.status, code: err.code }).toEqual({ status: 409, code: 'conflict' });
          expect(err.message).toContain(from);
        });
      }
    }
  }
});

describe('sip_extension rule', () => {
  const valid = ['1', '1001', 'ops-1.a_B', 'A'.repeat(64), 'agent.smith', '_-.'];
  const invalid = ['', 'ext 10', '10@host', 'a/b', 'x'.repeat(65), 'ñ1', '1001;', "1'2", 'a\nb', '${x}'];

  it.each(valid)('accepts %j (and so does the switch)', (ext) => {
    expect(isSipExtension(ext)).toBe(true);
    expect(SWITCH_SAFE_RE.test(ext)).toBe(true);
    expect(checkSipExtension(ext)).toBe(ext);
  });

  it.each(invalid)('rejects %j with 422 unprocessable', (ext) => {
    expect(isSipExtension(ext)).toBe(false);
    const err = errorOf(() => checkSipExtension(ext));
    expect({ status: err.status, code: err.code }).toEqual({ status: 422, code: 'unprocessable' });
    expect(err.message).toMatch(/sip_extension/);
  });
});

describe('normalizeNewAgent', () => {
  it('trims the name, lowercases the email and defaults role agent and no extension', () => {
    expect(normalizeNewAgent({ name: '  Ana  ', email: ' Ana@Acme.Example ' })).toEqual({
      name: 'Ana',
      email: 'ana@acme.example',
      role: 'agent',
      sip_extension: null,
    });
    expect(normalizeNewAgent({ name: 'B', email: 'b@x.io', role: 'supervisor', sip_extension: '1002' })).toMatchObject({
      role: 'supervisor',
      sip_extension: '1002',
    });
    expect(normalizeNewAgent({ name: 'B', email: 'b@x.io', sip_extension: null }).sip_extension).toBeNull();
  });

  it.each([
    [{ name: '  ', email: 'a@b.io' }, /name/],
    [{ name: 'x'.repeat(201), email: 'a@b.io' }, /name/],
    [{ name: 'A', email: 'not-an-email' }, /email/],
    [{ name: 'A', email: 'a b@c.io' }, /email/],
    [{ name: 'A', email: 'a@b.io', sip_extension: 'ext 1' }, /sip_extension/],
  ])('rejects %j with 422', (input, message) => {
    const err = errorOf(() => normalizeNewAgent(input));
    expect({ status: err.status, code: err.code }).toEqual({ status: 422, code: 'unprocessable' });
    expect(err.message).toMatch(message);
  });
});
