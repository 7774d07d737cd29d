import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { pruneExpiredRateLimits, RATE_BUDGETS, RateLimits } from '../../src/lib/rate-limit';
import { testEnv } from '../helpers/harness';
import { loadConfig } from '../../src/config';

describe('RateLimits (PostgreSQL fixed windows)', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = new Pool({ connectionString: loadConfig(testEnv()).appDatabaseUrl, max: 4 });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('consumes up to the budget, then refuses', async () => {
    const limits = new RateLimits(pool);
    const key = `login-${randomUUID()}`;
    for (let i = 0; i < RATE_BUDGETS.login.points; i += 1) await expect(limits.consume('login', key)).resolves.toBe(true);
    await expect(limits.consume('login', key)).resolves.toBe(false);
    await expect(limits.consume('login', `other-${randomUUID()}`)).resolves.toBe(true);
  });

  it('judges a budget against the points it was given, not the defaults', async () => {
    const limits = new RateLimits(pool, { ...RATE_BUDGETS, adminAuthFailures: { points: 2, durationSeconds: 60 } });
    const origin = `origin-${randomUUID()}`;
    await expect(limits.consume('adminAuthFailures', origin)).resolves.toBe(true);
    await expect(limits.consume('adminAuthFailures', origin)).resolves.toBe(true);
    await expect(limits.consume('adminAuthFailures', origin)).resolves.toBe(false);
  });

  it('gives a refunded point back, never below zero', async () => {
    const limits = new RateLimits(pool, { ...RATE_BUDGETS, adminAuthFailures: { points: 2, durationSeconds: 60 } });
    const origin = `origin-${randomUUID()}`;
    await limits.refund('adminAuthFailures', origin);
    await limits.consume('adminAuthFailures', origin);
    await limits.refund('adminAuthFailures', origin);
    await limits.refund('adminAuthFailures', origin);
    // Two refunds of one point leave zero, not minus one: exactly two more fit.
    await expect(limits.consume('adminAuthFailures', origin)).resolves.toBe(true);
    await expect(limits.consume('adminAuthFailures', origin)).resolves.toBe(true);
    await expect(limits.consume('adminAuthFailures', origin)).resolves.toBe(false);
  });

  it('counts every one of 30 parallel attempts: exactly the budget passes', async () => {
    const limits = new RateLimits(pool);
    const key = `parallel-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 30 }, () => limits.consume('adminAuthFailures', key)));
    expect(results.filter(Boolean)).toHaveLength(RATE_BUDGETS.adminAuthFailures.points);
  });

  it('shares counters between instances (as between API processes)', async () => {
    const a = new RateLimits(pool);
    const b = new RateLimits(pool);
    const email = `shared-${randomUUID()}`;
    for (let i = 0; i < RATE_BUDGETS.passwordReset.points; i += 1) await (i % 2 ? a : b).consume('passwordReset', email);
    await expect(a.consume('passwordReset', email)).resolves.toBe(false);
    await expect(b.consume('passwordReset', email)).resolves.toBe(false);
  });

  it('stores only hashed keys', async () => {
    const limits = new RateLimits(pool);
    const email = `visible-${randomUUID()}@example.com`;
    await limits.consume('login', email);
    const { rows } = await pool.query<{ key: string }>('SELECT key FROM rate_limits WHERE key LIKE $1', [`%${email}%`]);
    expect(rows).toHaveLength(0);
  });

  it('prunes expired windows only, oldest first, in batches', async () => {
    const limits = new RateLimits(pool);
    const live = `live-${randomUUID()}`;
    await limits.consume('login', live);
    const now = Date.now();
    const expired = Array.from({ length: 5 }, (_, i) => [`test-expired:${randomUUID()}`, now - 1000 - i] as const);
    for (const [key, expire] of expired) await pool.query('INSERT INTO rate_limits (key, points, expire) VALUES ($1, 3, $2)', [key, expire]);
    const keys = expired.map(([key]) => key);

    // Other files' windows may expire meanwhile too: count only this test's rows.
    const left = async () => (await pool.query<{ key: string }>('SELECT key FROM rate_limits WHERE key = ANY($1)', [keys])).rows.length;
    while ((await pruneExpiredRateLimits(pool, now, 2)) === 2 && (await left()) > 0);
    expect(await left()).toBe(0);
    // The live window kept its count: 9 more attempts fit, the 10th of the window does not.
    for (let i = 1; i < RATE_BUDGETS.login.points; i += 1) await expect(limits.consume('login', live)).resolves.toBe(true);
    await expect(limits.consume('login', live)).resolves.toBe(false);
  });
});
