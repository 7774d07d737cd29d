import type { Pool } from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { sha256Hex } from './tokens';

export interface FixedWindow {
  points: number;
  durationSeconds: number;
}

/**
 * Named fixed-window budgets. Numbers the spec leaves open are fixed here and documented in the
 * OpenAPI description of each route that uses them.
 */
export const RATE_BUDGETS = {
  /** Failed operator authentications per calling origin. */
  adminAuthFailures: { points: 10, durationSeconds: 60 },
  /** Login attempts per email. */
  login: { points: 10, durationSeconds: 900 },
  /** Password-reset requests per email (over budget: same 202, no mail). */
  passwordReset: { points: 3, durationSeconds: 3600 },
  /** Dispositions per tenant (POST /v1/call_attempts/{id}/disposition). */
  dispositions: { points: 600, durationSeconds: 60 },
  /**
   * Live-call control toggles (hold, unhold, mute, unmute) per tenant and principal; hangup is exempt.
   * The deployment's CALL_CONTROL_PER_MINUTE overrides the points (consume's `points`).
   */
  callControl: { points: 120, durationSeconds: 60 },
  /** Widget token mints per tenant (POST /v1/widget_tokens). */
  widgetTokenMint: { points: 60, durationSeconds: 60 },
  /** Renewals per widget token (POST /v1/widget_tokens/renew). */
  widgetTokenRenew: { points: 10, durationSeconds: 60 },
  /** Agent (widget) logins per {tenant, email}. */
  agentLogin: { points: 10, durationSeconds: 900 },
} satisfies Record<string, FixedWindow>;

export type BudgetName = keyof typeof RATE_BUDGETS;

/**
 * Counters live in PostgreSQL (table rate_limits) so every API process shares them. Keys are
 * hashed: no email or address is stored.
 */
export class RateLimits {
  private readonly limiters = new Map<BudgetName, RateLimiterPostgres>();
  /** Limiters of a budget with a configured number of points (same key prefix, so the same counters). */
  private readonly overrides = new Map<string, RateLimiterPostgres>();

  constructor(
    private readonly pool: Pool,
    private readonly budgets: Record<BudgetName, FixedWindow> = RATE_BUDGETS,
  ) {
    for (const [name, budget] of Object.entries(budgets) as [BudgetName, FixedWindow][]) {
      this.limiters.set(
        name,
        new RateLimiterPostgres({
          storeClient: pool,
          storeType: 'pool',
          tableName: 'rate_limits',
          tableCreated: true,
          clearExpiredByTimeout: false,
          keyPrefix: name,
          points: budget.points,
          duration: budget.durationSeconds,
        }),
      );
    }
  }

  private limiter(name: BudgetName): RateLimiterPostgres {
    const limiter = this.limiters.get(name);
    if (!limiter) throw new Error(`unknown rate budget ${name}`);
    return limiter;
  }

  private limiterWithPoints(name: BudgetName, points: number): RateLimiterPostgres {
    if (points === this.budgets[name].points) return this.limiter(name);
    const id = `${name}:${points}`;
    let limiter = this.overrides.get(id);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: this.pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        clearExpiredByTimeout: false,
        keyPrefix: name,
        points,
        duration: this.budgets[name].durationSeconds,
      });
      this.overrides.set(id, limiter);
    }
    return limiter;
  }

  /**
   * Spends one point; false when the window's budget is already used up. `points` replaces the
   * budget's points (a deployment setting such as CALL_CONTROL_PER_MINUTE); the window stays.
   */
  async consume(name: BudgetName, key: string, points?: number): Promise<boolean> {
    try {
      await (points === undefined ? this.limiter(name) : this.limiterWithPoints(name, points)).consume(sha256Hex(key), 1);
      return true;
    } catch (err) {
      if (err instanceof RateLimiterRes) return false;
      throw err;
    }
  }

  /** True when the budget is used up, without spending (checked before the expensive step). */
  async exhausted(name: BudgetName, key: string): Promise<boolean> {
    const res = await this.limiter(name).get(sha256Hex(key));
    return res !== null && res.consumedPoints >= this.budgets[name].points;
  }

  /** Records one failure without refusing (the refusal is decided by exhausted()). */
  async penalize(name: BudgetName, key: string): Promise<void> {
    await this.limiter(name).penalty(sha256Hex(key), 1);
  }
}
