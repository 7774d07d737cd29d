import type { AgentPolicy } from '../../src/modules/ai-engine/engine.types';
import { bestPlan, boundsOf, escalation, evaluateProposal, insidePolicy, plan, settlementFloor } from '../../src/modules/ai-engine/negotiation';

const policy = (p: Partial<AgentPolicy> = {}): AgentPolicy => ({
  max_settlement_pct: 30, min_payment_cents: 5000, max_plan_months: 6, take_payments: 'none', prohibited: [], ...p,
});

describe('settlement floor', () => {
  it('is balance × (100 − pct) / 100 rounded UP to the cent', () => {
    expect(settlementFloor(123456, 30)).toBe(86420);
    expect(settlementFloor(1001, 50)).toBe(501);
    expect(settlementFloor(999, 33)).toBe(670);
    expect(settlementFloor(100000, 0)).toBe(100000);
  });

  it('is never below the minimum payment nor one cent', () => {
    expect(boundsOf(policy({ max_settlement_pct: 95 }), 60000).floor).toBe(5000);
    expect(boundsOf(policy({ max_settlement_pct: 100, min_payment_cents: 0 }), 60000).floor).toBe(1);
  });

  it('clamps a malformed policy into range', () => {
    expect(boundsOf(policy({ max_settlement_pct: 250, min_payment_cents: -5, max_plan_months: Number.NaN }), 1000)).toEqual({ balance: 1000, floor: 1, minPayment: 0, maxMonths: 0 });
    expect(boundsOf(policy({ max_settlement_pct: -10 }), 1000).floor).toBe(1000);
  });
});

describe('plans', () => {
  const bounds = boundsOf(policy(), 123456);

  it('total the balance, the remainder cents on the last installment', () => {
    expect(plan(bounds, 5)).toEqual({ kind: 'installments', amount_cents: 123456, months: 5, installment_cents: 24691, final_installment_cents: 24692, pct_of_balance: 100 });
  });

  it('are refused beyond max_plan_months, under two months, or under the minimum installment', () => {
    expect(plan(bounds, 7)).toBeNull();
    expect(plan(bounds, 1)).toBeNull();
    expect(plan(boundsOf(policy({ min_payment_cents: 30000, max_plan_months: 12 }), 123456), 5)).toBeNull();
  });

  it('the best plan has as many months as policy and minimum allow', () => {
    expect(bestPlan(bounds)?.months).toBe(6);
    expect(bestPlan(boundsOf(policy({ min_payment_cents: 30000, max_plan_months: 12 }), 123456))?.months).toBe(4);
    expect(bestPlan(boundsOf(policy({ max_plan_months: 1 }), 123456))).toBeNull();
    expect(bestPlan(boundsOf(policy({ min_payment_cents: 100000 }), 123456))).toBeNull();
  });
});

describe('escalation', () => {
  it('is full balance, best plan, best settlement: each only when the policy has it', () => {
    const kinds = (p: Partial<AgentPolicy>) => escalation(boundsOf(policy(p), 123456)).map((o) => `${o.kind}:${o.amount_cents}`);
    expect(kinds({})).toEqual(['lump_sum:123456', 'installments:123456', 'lump_sum:86420']);
    expect(kinds({ max_settlement_pct: 0 })).toEqual(['lump_sum:123456', 'installments:123456']);
    expect(kinds({ max_plan_months: 0 })).toEqual(['lump_sum:123456', 'lump_sum:86420']);
    expect(escalation(boundsOf(policy(), 0))).toEqual([]);
  });
});

describe('consumer proposals', () => {
  const bounds = boundsOf(policy(), 123456);

  it.each([
    [{ kind: 'amount', cents: 200000 }, { offer: { kind: 'lump_sum', amount_cents: 123456, pct_of_balance: 100 } }],
    [{ kind: 'amount', cents: 90000 }, { offer: { kind: 'lump_sum', amount_cents: 90000, pct_of_balance: 72.9 } }],
    [{ kind: 'amount', cents: 86420 }, { offer: { kind: 'lump_sum', amount_cents: 86420, pct_of_balance: 70 } }],
    [{ kind: 'amount', cents: 86419 }, { offer: { kind: 'payment', amount_cents: 86419, pct_of_balance: 70 } }],
    [{ kind: 'amount', cents: 4999 }, { declined: 'below_minimum', counter: { kind: 'payment', amount_cents: 5000, pct_of_balance: 4.05 } }],
    [{ kind: 'months', months: 9 }, { declined: 'too_many_months', counter: expect.objectContaining({ months: 6 }) }],
    [{ kind: 'months', months: 1 }, { offer: expect.objectContaining({ kind: 'lump_sum', amount_cents: 123456 }) }],
    [{ kind: 'monthly', cents: 30000 }, { offer: expect.objectContaining({ months: 5 }) }],
    [{ kind: 'monthly', cents: 10000 }, { declined: 'too_many_months', counter: expect.objectContaining({ months: 6 }) }],
  ] as const)('%j', (proposal, expected) => {
    expect(evaluateProposal(bounds, proposal)).toEqual(expected);
  });

  it('a monthly amount whose plan would dip under the minimum installment gets the best plan', () => {
    const tight = boundsOf(policy({ min_payment_cents: 30000, max_plan_months: 12 }), 100000);
    expect(evaluateProposal(tight, { kind: 'monthly', cents: 30000 })).toEqual({ declined: 'below_minimum', counter: expect.objectContaining({ months: 3 }) });
  });
});

describe('insidePolicy', () => {
  const bounds = boundsOf(policy(), 123456);
  it('rejects anything past the floor, the months, the minimum or the balance', () => {
    expect(insidePolicy({ kind: 'lump_sum', amount_cents: 86419, pct_of_balance: 70 }, bounds)).toBe(false);
    expect(insidePolicy({ kind: 'lump_sum', amount_cents: 123457, pct_of_balance: 100 }, bounds)).toBe(false);
    expect(insidePolicy({ kind: 'payment', amount_cents: 4999, pct_of_balance: 4 }, bounds)).toBe(false);
    expect(insidePolicy({ kind: 'installments', amount_cents: 123456, months: 7, installment_cents: 17636, final_installment_cents: 17640, pct_of_balance: 100 }, bounds)).toBe(false);
    expect(insidePolicy({ kind: 'installments', amount_cents: 123456, months: 2, installment_cents: 60000, final_installment_cents: 60000, pct_of_balance: 100 }, bounds)).toBe(false);
    expect(insidePolicy(plan(bounds, 6)!, bounds)).toBe(true);
  });
});
