import { effectiveAiMaxCallSeconds, isE164, isEmail, RETIRED_TIERS, SIP_EXTENSION_RE, tierProblem, VOICE_AI_TIERS } from '../../src/modules/tenants/tenant.rules';
import { TIERS, type Tier } from '../../src/modules/tenants/tenant.schemas';

describe('tierProblem', () => {
  it('knows which tiers offer voice AI and which are retired (SPEC Tenant.tier / voice_ai_enabled)', () => {
    expect([...VOICE_AI_TIERS].sort()).toEqual(['audit_shield', 'compliance_pro', 'enterprise', 'growth', 'scale']);
    expect([...RETIRED_TIERS].sort()).toEqual(['audit_shield', 'compliance_pro']);
  });

  const cases: [Tier | null, Tier, boolean, RegExp | null][] = [
    // New assignment (provisioning): active tiers are fine, retired ones never.
    [null, 'starter', false, null],
    [null, 'growth', false, null],
    [null, 'scale', false, null],
    [null, 'enterprise', false, null],
    [null, 'dialer_core', false, null],
    [null, 'compliance_pro', false, /retired/],
    [null, 'audit_shield', false, /retired/],
    // voice_ai_enabled only on tiers with an allowance.
    [null, 'starter', true, /voice_ai_enabled is not available on tier starter/],
    [null, 'dialer_core', true, /voice_ai_enabled is not available on tier dialer_core/],
    [null, 'growth', true, null],
    [null, 'scale', true, null],
    [null, 'enterprise', true, null],
    // Moving between tiers.
    ['starter', 'growth', true, null],
    ['growth', 'starter', true, /not available on tier starter/],
    ['growth', 'starter', false, null],
    ['starter', 'compliance_pro', false, /retired/],
    ['audit_shield', 'compliance_pro', false, /retired/],
    // A tenant already on a retired tier keeps it, with its voice-AI allowance.
    ['compliance_pro', 'compliance_pro', false, null],
    ['compliance_pro', 'compliance_pro', true, null],
    ['audit_shield', 'audit_shield', true, null],
    ['compliance_pro', 'scale', true, null],
  ];

  it.each(cases)('current=%s next=%s voice_ai=%s', (currentTier, nextTier, voiceAiEnabled, expected) => {
    const problem = tierProblem({ currentTier, nextTier, voiceAiEnabled });
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });

  it('covers every tier', () => {
    for (const tier of TIERS) {
      const problem = tierProblem({ currentTier: tier, nextTier: tier, voiceAiEnabled: true });
      expect(problem === null).toBe(VOICE_AI_TIERS.has(tier));
    }
  });
});

describe('effectiveAiMaxCallSeconds', () => {
  it('uses the own value when set, else the platform default', () => {
    expect(effectiveAiMaxCallSeconds(null, 900)).toBe(900);
    expect(effectiveAiMaxCallSeconds(120, 900)).toBe(120);
    expect(effectiveAiMaxCallSeconds(1, 900)).toBe(1);
  });
});

describe('validators', () => {
  it.each([
    ['a@b.co', true],
    ['first.last+tag@example.com', true],
    ['no-at.example.com', false],
    ['two@@example.com', false],
    ['space @example.com', false],
    ['a@localhost', false],
    ['a@b.c', false],
    [`${'a'.repeat(65)}@example.com`, false],
    [`a@${'b'.repeat(250)}.com`, false],
  ])('isEmail(%s) = %s', (value, ok) => {
    expect(isEmail(value)).toBe(ok);
  });

  it.each([
    ['+14155552671', true],
    ['+525512345678', true],
    ['14155552671', false],
    ['+1 415 555 2671', false],
    ['+0123456789', false],
    ['+1415555267', false],
    ['+1234567890123456', false],
  ])('isE164(%s) = %s', (value, ok) => {
    expect(isE164(value)).toBe(ok);
  });

  it.each([
    ['1001', true],
    ['agent.one_2-b', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['', false],
    ['10 01', false],
    ['1001@pbx', false],
    ['ext/1', false],
  ])('SIP extension %s allowed=%s', (value, ok) => {
    expect(SIP_EXTENSION_RE.test(value)).toBe(ok);
  });
});
