import { AppError } from '../../src/lib/errors';
import { applyRouteWrite, e164Of, newRoute } from '../../src/modules/inbound-routes/inbound-route.rules';

const code = (work: () => unknown): string | null => {
  try {
    work();
    return null;
  } catch (err) {
    return err instanceof AppError ? err.code : 'other';
  }
};

describe('inbound route rules', () => {
  it('a new route: defaults, blank dest_ref and notes stored null', () => {
    const { next, changed } = applyRouteWrite(newRoute('queue'), { dest_ref: '  ', notes: ' ' });
    expect(next).toEqual({ dest_type: 'queue', dest_ref: null, recording: false, ai_enabled: false, status: 'active', notes: null });
    expect(changed).toEqual([]);
  });

  it('a patch reports exactly what changed; dest_ref is trimmed', () => {
    const current = { ...newRoute('agent'), dest_ref: '1001' };
    expect(applyRouteWrite(current, { dest_ref: ' 1001 ' }).changed).toEqual([]);
    const { next, changed } = applyRouteWrite(current, { dest_type: 'ivr', dest_ref: null, recording: true, status: 'disabled' });
    expect(changed).toEqual(['dest_type', 'dest_ref', 'recording', 'status']);
    expect(next).toMatchObject({ dest_type: 'ivr', dest_ref: null, recording: true, status: 'disabled' });
  });

  it('length rules are 400 invalid', () => {
    expect(code(() => applyRouteWrite(newRoute('queue'), { dest_ref: 'q'.repeat(201) }))).toBe('invalid');
    expect(code(() => applyRouteWrite(newRoute('queue'), { dest_ref: 'q'.repeat(200) }))).toBeNull();
    expect(code(() => applyRouteWrite(newRoute('queue'), { notes: 'n'.repeat(2001) }))).toBe('invalid');
  });

  it('e164 must be E.164', () => {
    expect(e164Of('+14155550100')).toBe('+14155550100');
    for (const raw of ['14155550100', '+0123456789', '+1 415 555 0100', '']) expect(code(() => e164Of(raw))).toBe('invalid');
  });
});
