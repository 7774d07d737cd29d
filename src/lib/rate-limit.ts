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
  /** Operator authentications per client address, counted before the compare; a correct token is refunded. */
  adminAuthFailures: { points: 10, durationSeconds: 60 },
  /** Login attempts per email. */
  login: { points: 10, durationSeconds: 900 },
  /**
   * Failed password attempts per client address (dashboard login, agent login, password change),
   * spent before the hash and given back when the password proves right. Small enough that one
   * address never holds more than half a second of the global hashing budget.
   */
  passwordAttemptsPerAddress: { points: 10, durationSeconds: 60 },
  /**
   * PBKDF2 verifications per second across every process and client; the deployment's
   * LOGIN_HASHES_PER_SECOND sets the points (consume's `points`).
   */
  passwordHashesGlobal: { points: 20, durationSeconds: 1 },
  /** Current-password checks per user (POST /v1/me/password). */
  passwordChange: { points: 10, durationSeconds: 900 },
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
 * hashed: no email or address is stored. Once PostgreSQL has refused a key, this process refuses
 * it from memory until its window ends (inMemoryBlockOnConsumed), so a flood from a spent key
 * costs no database round trip: refusals stay cheap at hundreds of requests a second.
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
          inMemoryBlockOnConsumed: budget.points + 1,
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
        inMemoryBlockOnConsumed: points + 1,
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

  /**
   * Gives one point back (an attempt spent up front that turned out to be legitimate, such as a
   * right password). Never below zero: a window that has meanwhile expired is left alone.
   */
  async refund(name: BudgetName, key: string): Promise<void> {
    await this.pool.query('UPDATE rate_limits SET points = points - 1 WHERE key = $1 AND points > 0 AND expire > $2', [
      this.limiter(name).getKey(sha256Hex(key)),
      Date.now(),
    ]);
  }
}

/** Rows per prune statement; a full batch is followed by another. */
export const PRUNE_BATCH = 5000;

/**
 * Deletes up to `limit` windows that expired before `now` (ms since the epoch, as the limiter
 * stores it). The expiry is checked again on the row the delete locks: a window a concurrent
 * attempt has just restarted is no longer expired and stays.
 */
export async function pruneExpiredRateLimits(pool: Pool, now: number, limit = PRUNE_BATCH): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM rate_limits
      WHERE key IN (SELECT key FROM rate_limits WHERE expire < $1 ORDER BY expire LIMIT $2 FOR UPDATE SKIP LOCKED)
        AND expire < $1`,
    [now, limit],
  );
  return rowCount ?? 0;
}
