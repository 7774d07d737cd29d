import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { RATE_BUDGETS, RateLimits } from '../../src/lib/rate-limit';
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

  it('judges exhaustion against the budgets it was given, not the defaults', async () => {
    const limits = new RateLimits(pool, { ...RATE_BUDGETS, adminAuthFailures: { points: 2, durationSeconds: 60 } });
    const origin = `origin-${randomUUID()}`;
    await limits.penalize('adminAuthFailures', origin);
    await expect(limits.exhausted('adminAuthFailures', origin)).resolves.toBe(false);
    await limits.penalize('adminAuthFailures', origin);
    await expect(limits.exhausted('adminAuthFailures', origin)).resolves.toBe(true);
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
});
