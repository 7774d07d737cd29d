import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { rateLimitPruneWorkflowId } from '../../src/contracts/rate-limit-prune';
import { authMetrics } from '../../src/lib/auth-metrics';
import { RATE_BUDGETS } from '../../src/lib/rate-limit';
import { sha256Hex } from '../../src/lib/tokens';
import { rateLimitPruneNowSignal } from '../../workflows/rate-limit-prune.workflow';
import { randomLoopback } from '../helpers/client-address';
import { runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { recordWorkflowHistories } from '../helpers/workflow-histories';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  startTestApp,
  uniqueEmail,
  type HttpResult,
  type ProvisionedTenant,
  type TestApp,
} from '../helpers/harness';

const PER_ADDRESS = RATE_BUDGETS.passwordAttemptsPerAddress.points;

function statuses(answers: HttpResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

describe('budgets before work', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  const login = (email: string, password: string, localAddress: string, headers: Record<string, string> = {}) =>
    app.request('POST', '/v1/auth/login', { body: { email, password }, localAddress, headers });

  beforeAll(async () => {
    // Behind a proxy on 127.0.0.1: its X-Forwarded-For is believed, nobody else's.
    app = await startTestApp({ TRUSTED_PROXIES: '127.0.0.1, ::1' });
    tenant = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/auth/login', () => {
    it('refuses an address that rotates emails once its failures are spent, with no hash at all, and lets other addresses in', async () => {
      const attacker = randomLoopback();
      for (let i = 0; i < PER_ADDRESS; i += 1) expect((await login(uniqueEmail('rotate'), 'guess guess guess', attacker)).status).toBe(401);
      const before = await authMetrics.hashCount();
      const refused = await Promise.all(Array.from({ length: 20 }, () => login(uniqueEmail('rotate'), 'guess guess guess', attacker)));
      expect(statuses(refused)).toEqual({ 429: 20 });
      expect(refused[0]!.body.error.code).toBe('rate_limited');
      expect(refused[0]!.headers['retry-after']).toBeUndefined();
      expect(await authMetrics.hashCount()).toBe(before);

      // A real user elsewhere is not affected; a right password is not counted against its address.
      const users = [await createUserSession(app, tenant), await createUserSession(app, tenant), await createUserSession(app, tenant)];
      const mine = randomLoopback();
      for (let i = 0; i < PER_ADDRESS + 5; i += 1) {
        const user = users[i % users.length]!;
        expect((await login(user.email, user.password, mine)).status).toBe(200);
      }
    });

    it('lets parallel guesses from one address hash at most its budget', async () => {
      const attacker = randomLoopback();
      const before = await authMetrics.hashCount();
      const answers = await Promise.all(Array.from({ length: 30 }, () => login(uniqueEmail('burst'), 'guess guess guess', attacker)));
      expect(statuses(answers)).toEqual({ 401: PER_ADDRESS, 429: 30 - PER_ADDRESS });
      expect((await authMetrics.hashCount()) - before).toBe(PER_ADDRESS);
    });

    it('keys the address on the right-most untrusted X-Forwarded-For hop, and only behind a trusted proxy', async () => {
      const client = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
      // Through the trusted proxy (127.0.0.1), each with a different spoofed left part: one key.
      for (let i = 0; i < PER_ADDRESS; i += 1) {
        const res = await login(uniqueEmail('xff'), 'guess guess guess', '127.0.0.1', { 'x-forwarded-for': `10.0.0.${i}, ${client}` });
        expect(res.status).toBe(401);
      }
      const spoofed = await login(uniqueEmail('xff'), 'guess guess guess', '127.0.0.1', { 'x-forwarded-for': `203.0.113.9, ${client}` });
      expect(spoofed.status).toBe(429);
      // The proxy's other clients keep their own budgets.
      const session = await createUserSession(app, tenant);
      expect((await login(session.email, session.password, '127.0.0.1', { 'x-forwarded-for': '198.51.100.0' })).status).toBe(200);
      // An untrusted peer naming that client is counted under its own socket address instead.
      expect((await login(session.email, session.password, randomLoopback(), { 'x-forwarded-for': client })).status).toBe(200);
    });
  });

  describe('the deployment-wide hashing budget', () => {
    let tight: TestApp;
    beforeAll(async () => {
      tight = await startTestApp({ LOGIN_HASHES_PER_SECOND: '3' });
    });
    afterAll(async () => {
      await tight.close();
    });

    it('caps hashes per second across addresses: attempts over it are 429 before any hash', async () => {
      const before = await authMetrics.hashCount();
      // Twenty addresses, one guess each, all at once: no address budget is near its end.
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          tight.request('POST', '/v1/auth/login', { body: { email: uniqueEmail('wide'), password: 'guess guess guess' }, localAddress: randomLoopback() }),
        ),
      );
      const counts = statuses(answers);
      // Other test files share the window's counter, so at most (not exactly) 3 pass in a second.
      expect(Object.keys(counts).sort()).toEqual(expect.arrayContaining(['429']));
      expect(counts[401] ?? 0).toBeLessThanOrEqual(3 * 2);
      expect((counts[401] ?? 0) + counts[429]!).toBe(20);
      expect((await authMetrics.hashCount()) - before).toBe(counts[401] ?? 0);
    });
  });

  describe('POST /v1/me/password', () => {
    it('spends a budget per user before the current password is hashed', async () => {
      const session = await createUserSession(app, tenant);
      const change = (current: string) =>
        app.request('POST', '/v1/me/password', {
          token: session.token,
          body: { current_password: current, new_password: 'a brand new passphrase 42' },
          localAddress: randomLoopback(),
        });
      for (let i = 0; i < RATE_BUDGETS.passwordChange.points; i += 1) expect((await change(`wrong current ${i}`)).status).toBe(401);
      const before = await authMetrics.hashCount();
      const limited = await change(session.password);
      expect({ status: limited.status, code: limited.body.error.code, retry: limited.headers['retry-after'] }).toEqual({
        status: 429,
        code: 'rate_limited',
        retry: undefined,
      });
      expect(await authMetrics.hashCount()).toBe(before);
      // Nothing changed: the old password still logs in.
      expect((await login(session.email, session.password, randomLoopback())).status).toBe(200);
    });
  });

  describe('operator authentication', () => {
    const adminGet = (token: string, localAddress: string, headers: Record<string, string> = {}) =>
      app.request('GET', `/v1/admin/tenants/${tenant.tenantId}`, { token, localAddress, headers });

    it('counts every one of 30 parallel wrong tokens before comparing: none slips past the budget', async () => {
      const address = randomLoopback();
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => adminGet(`wrong-${i}`, address)));
      expect(statuses(answers)).toEqual({ 401: RATE_BUDGETS.adminAuthFailures.points, 429: 30 - RATE_BUDGETS.adminAuthFailures.points });
      expect((await adminGet(ADMIN_TOKEN, address)).status).toBe(429);
    });

    it('keys on the address behind the trusted proxy: a guesser there cannot lock the operator out', async () => {
      const guesser = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
      const operator = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
      for (let i = 0; i < RATE_BUDGETS.adminAuthFailures.points; i += 1) {
        expect((await adminGet(`wrong-${i}`, '127.0.0.1', { 'x-forwarded-for': `${operator}, ${guesser}` })).status).toBe(401);
      }
      expect((await adminGet(ADMIN_TOKEN, '127.0.0.1', { 'x-forwarded-for': guesser })).status).toBe(429);
      // The operator, through the same proxy, and even named on the left by the guesser's requests.
      expect((await adminGet(ADMIN_TOKEN, '127.0.0.1', { 'x-forwarded-for': operator })).status).toBe(200);
    });
  });
});

describe('rate_limits pruning', () => {
  let app: TestApp;
  let worker: RunningWorker;
  let pool: Pool;
  const taskQueue = `prune-${randomUUID()}`;

  afterAll(() => recordWorkflowHistories('auth-budgets', [taskQueue], { rateLimitPruneWorkflow: 1 }));

  beforeAll(async () => {
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, RATE_LIMIT_PRUNE_INTERVAL_MS: '3600000' });
    pool = new Pool({ connectionString: app.config.appDatabaseUrl, max: 2 });
    worker = await runWorker(app, taskQueue);
  });
  afterAll(async () => {
    await worker.stop();
    await pool.end();
    await app.close();
  });

  it('is a loop the worker starts, and its pass removes expired windows only', async () => {
    // Live windows through the real route: a failed login from a fresh address.
    const address = randomLoopback();
    const email = uniqueEmail('live');
    expect((await app.request('POST', '/v1/auth/login', { body: { email, password: 'guess guess guess' }, localAddress: address })).status).toBe(401);
    const live = [`passwordAttemptsPerAddress:${sha256Hex(address)}`, `login:${sha256Hex(email)}`];
    const expired = Array.from({ length: 3 }, () => `test-expired:${randomUUID()}`);
    for (const key of expired) await pool.query('INSERT INTO rate_limits (key, points, expire) VALUES ($1, 1, $2)', [key, Date.now() - 60_000]);
    const present = async (keys: string[]) => (await pool.query<{ key: string }>('SELECT key FROM rate_limits WHERE key = ANY($1)', [keys])).rows.map((r) => r.key).sort();
    expect(await present(live)).toEqual([...live].sort());

    await app.deps.temporal!.workflow.getHandle(rateLimitPruneWorkflowId(taskQueue)).signal(rateLimitPruneNowSignal);
    await waitFor(async () => ((await present(expired)).length === 0 ? true : undefined), 30_000, 'the expired windows to be pruned');
    expect(await present(live)).toEqual([...live].sort());
  });
});
