import type { AgentPolicy, Offer } from './engine.types';

/**
 * Offers strictly inside the agent's policy. Every offer the engine makes comes from here and is
 * re-checked with insidePolicy() before it is spoken.
 *
 * - A lump sum below the balance is a settlement: at least the floor, balance × (100 − pct) / 100
 *   rounded UP to the cent, where pct is max_settlement_pct (the largest discount allowed).
 * - A plan always totals the full balance (no discount on plans): 2..max_plan_months installments,
 *   months − 1 of floor(balance / months) and a last one carrying the remainder cents.
 * - The minimum payment is min(min_payment_cents, balance): paying off a balance smaller than the
 *   minimum is allowed. Every installment, partial payment and settlement is at least that.
 * - A partial payment (less than the floor, at least the minimum) does not settle anything: the
 *   rest of the balance stays due.
 */

export interface Bounds {
  balance: number;
  /** The smallest lump sum that settles the balance. */
  floor: number;
  /** The smallest single payment or installment. */
  minPayment: number;
  maxMonths: number;
}

export type Proposal = { kind: 'amount'; cents: number } | { kind: 'monthly'; cents: number } | { kind: 'months'; months: number };

export type Evaluation = { offer: Offer } | { declined: 'below_minimum' | 'too_many_months'; counter: Offer | null };

const int = (n: number, min: number, max: number): number => (Number.isFinite(n) ? Math.min(max, Math.max(min, Math.floor(n))) : min);

/** ceil(balance × (100 − pct) / 100) in integer arithmetic. */
export function settlementFloor(balance: number, pct: number): number {
  return Math.floor((balance * (100 - pct) + 99) / 100);
}

/** Policy values clamped into range, so a malformed policy narrows offers instead of breaking them. */
export function boundsOf(policy: AgentPolicy, balanceCents: number): Bounds {
  const balance = int(balanceCents, 0, Number.MAX_SAFE_INTEGER / 100);
  const pct = int(policy.max_settlement_pct, 0, 100);
  const minPayment = Math.min(int(policy.min_payment_cents, 0, Number.MAX_SAFE_INTEGER), balance);
  return {
    balance,
    floor: Math.max(settlementFloor(balance, pct), minPayment, Math.min(1, balance)),
    minPayment,
    maxMonths: int(policy.max_plan_months, 0, 1200),
  };
}

const pctOf = (amount: number, balance: number): number => (balance > 0 ? Math.round((amount * 10000) / balance) / 100 : 0);

export function lumpSum(bounds: Bounds, cents: number): Offer {
  return { kind: 'lump_sum', amount_cents: cents, pct_of_balance: pctOf(cents, bounds.balance) };
}

export function partialPayment(bounds: Bounds, cents: number): Offer {
  return { kind: 'payment', amount_cents: cents, pct_of_balance: pctOf(cents, bounds.balance) };
}

/** A plan of `months` installments, or null when it is outside the policy. */
export function plan(bounds: Bounds, months: number): Offer | null {
  if (!Number.isSafeInteger(months) || months < 2 || months > bounds.maxMonths || months > bounds.balance) return null;
  const installment = Math.floor(bounds.balance / months);
  if (installment < Math.max(1, bounds.minPayment)) return null;
  return {
    kind: 'installments',
    amount_cents: bounds.balance,
    months,
    installment_cents: installment,
    final_installment_cents: bounds.balance - installment * (months - 1),
    pct_of_balance: 100,
  };
}

/** The plan with the lowest installment: as many months as the policy and the minimum allow. */
export function bestPlan(bounds: Bounds): Offer | null {
  const perMinimum = Math.floor(bounds.balance / Math.max(1, bounds.minPayment));
  return plan(bounds, Math.min(bounds.maxMonths, perMinimum));
}

/** The settlement at the floor, when the policy allows any discount. */
export function bestSettlement(bounds: Bounds): Offer | null {
  return bounds.floor < bounds.balance ? lumpSum(bounds, bounds.floor) : null;
}

/** The fixed escalation: full balance, then the best plan, then the best settlement. */
export function escalation(bounds: Bounds): Offer[] {
  if (bounds.balance <= 0) return [];
  return [lumpSum(bounds, bounds.balance), bestPlan(bounds), bestSettlement(bounds)].filter((o): o is Offer => o !== null);
}

/** A one-off amount: the full balance at most, a settlement from the floor, a partial payment from the minimum. */
function forAmount(bounds: Bounds, cents: number): Evaluation {
  if (cents >= bounds.balance) return { offer: lumpSum(bounds, bounds.balance) };
  if (cents >= bounds.floor) return { offer: lumpSum(bounds, cents) };
  if (cents >= Math.max(1, bounds.minPayment)) return { offer: partialPayment(bounds, cents) };
  const minimum = Math.max(1, bounds.minPayment);
  const counter = forAmount(bounds, minimum);
  return { declined: 'below_minimum', counter: 'offer' in counter ? counter.offer : null };
}

/** A monthly amount: the plan it implies when that plan is inside the policy, else the best plan. */
function forMonthly(bounds: Bounds, cents: number): Evaluation {
  if (cents >= bounds.balance) return { offer: lumpSum(bounds, bounds.balance) };
  const months = Math.ceil(bounds.balance / cents);
  const offer = plan(bounds, months);
  if (offer) return { offer };
  return { declined: months > bounds.maxMonths ? 'too_many_months' : 'below_minimum', counter: bestPlan(bounds) };
}

function forMonths(bounds: Bounds, months: number): Evaluation {
  if (months <= 1) return { offer: lumpSum(bounds, bounds.balance) };
  const offer = plan(bounds, months);
  if (offer) return { offer };
  return { declined: months > bounds.maxMonths ? 'too_many_months' : 'below_minimum', counter: bestPlan(bounds) };
}

/** What the agent answers to a consumer's proposal: that offer restated, or a decline with a counter-offer. */
export function evaluateProposal(bounds: Bounds, proposal: Proposal): Evaluation {
  switch (proposal.kind) {
    case 'amount':
      return forAmount(bounds, proposal.cents);
    case 'monthly':
      return forMonthly(bounds, proposal.cents);
    case 'months':
      return forMonths(bounds, proposal.months);
  }
}

/** The invariant every spoken offer and recorded promise must satisfy. */
export function insidePolicy(offer: Offer, bounds: Bounds): boolean {
  const { balance, floor, minPayment, maxMonths } = bounds;
  const atLeastMinimum = (cents: number) => cents >= Math.max(1, minPayment);
  switch (offer.kind) {
    case 'lump_sum':
      return offer.amount_cents <= balance && offer.amount_cents >= floor && atLeastMinimum(offer.amount_cents);
    case 'payment':
      return offer.amount_cents < balance && atLeastMinimum(offer.amount_cents);
    case 'installments': {
      const { months, installment_cents: each, final_installment_cents: last } = offer;
      if (months === undefined || each === undefined || last === undefined) return false;
      return (
        months >= 2 &&
        months <= maxMonths &&
        offer.amount_cents === balance &&
        each * (months - 1) + last === balance &&
        atLeastMinimum(each) &&
        atLeastMinimum(last)
      );
    }
  }
}
