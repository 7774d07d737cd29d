import { randomBytes, randomUUID } from 'node:crypto';
import { passwordResetWorkflowId } from '../../src/contracts/password-reset';
import { verifyAuditChain } from '../../src/lib/audit';
import { passwordResetHandOffsSettled } from '../../src/modules/auth/auth.service';
import { withTenant } from '../../src/lib/tenancy';
import { sha256Hex } from '../../src/lib/tokens';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  startTestApp,
  STRONG_PASSWORD,
  uniqueEmail,
  type HttpResult,
  type ProvisionedTenant,
  type TestApp,
} from '../helpers/harness';
import { randomLoopback } from '../helpers/client-address';
import { runWorker, type RunningWorker } from '../helpers/dial-loop';

// ---------------------------------------------------------------------------------------------
// Helpers

const DAY_MS = 24 * 60 * 60 * 1000;
const NEW_PASSWORD = 'a brand new passphrase 42';
const USER_KEYS = ['created_at', 'email', 'id', 'last_login_at', 'name', 'password_updated_at', 'role', 'status', 'updated_at'];
const SESSION_KEYS = ['created_at', 'expires_at', 'id', 'revoked_at', 'user_id'];

let app: TestApp;

/** A well-formed bearer of the given prefix that names nothing. */
function unknownToken(prefix: 'ddu_' | 'ddr_'): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

function expectError(res: HttpResult, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

/** A dashboard user (no session) created with the tenant's dd_ key. */
async function createUser(tenant: ProvisionedTenant, password = STRONG_PASSWORD) {
  const email = uniqueEmail('auth');
  const res = await app.request('POST', '/v1/users', { token: tenant.apiKey, body: { email, name: 'Auth Test', password } });
  expect(res.status).toBe(201);
  return { email, password, userId: res.body.user.id as string };
}

// Each attempt from its own address: failures here never spend the per-address budget of another test.
function login(email: string, password: string, localAddress = randomLoopback()) {
  return app.request('POST', '/v1/auth/login', { body: { email, password }, localAddress });
}

async function loginToken(email: string, password: string): Promise<string> {
  const res = await login(email, password);
  expect(res.status).toBe(200);
  return res.body.token as string;
}

function me(token: string) {
  return app.request('GET', '/v1/me', { token });
}

function requestReset(email: unknown) {
  return app.request('POST', '/v1/auth/password-reset', { body: { email } });
}

function confirmReset(token: string, password: string) {
  return app.request('POST', '/v1/auth/password-reset/confirm', { body: { token, password } });
}

function outbox(tenantId: string, email: string) {
  return withTenant(app.deps.db, tenantId, (tx) =>
    tx.mailOutbox.findMany({ where: { toAddress: email }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
  );
}

/** Waits until the address's password-reset workflow has nothing left to do (the 202 comes before its work). */
async function resetSettled(email: string): Promise<void> {
  await passwordResetHandOffsSettled();
  const handle = app.deps.temporal!.workflow.getHandle(passwordResetWorkflowId(sha256Hex(email.trim().toLowerCase())));
  await handle.result();
}

/** Requests a reset link and returns the ddr_ token from the one mail that request queued. */
async function resetTokenFor(tenantId: string, email: string): Promise<string> {
  const before = new Set((await outbox(tenantId, email)).map((m) => m.id));
  const res = await requestReset(email);
  expect(res.status).toBe(202);
  await resetSettled(email);
  const fresh = (await outbox(tenantId, email)).filter((m) => !before.has(m.id));
  expect(fresh).toHaveLength(1);
  const text = app.deps.box.decrypt(fresh[0]!.bodyCiphertext);
  const match = /\/reset-password\?token=(ddr_[A-Za-z0-9_-]{43})\b/.exec(text);
  expect(match).not.toBeNull();
  return decodeURIComponent(match![1]!);
}

function resetRow(tenantId: string, token: string) {
  return withTenant(app.deps.db, tenantId, (tx) => tx.passwordResetToken.findUniqueOrThrow({ where: { tokenHash: sha256Hex(token) } }));
}

function sessionsOf(tenantId: string, userId: string) {
  return withTenant(app.deps.db, tenantId, (tx) => tx.userSession.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } }));
}

function auditRows(tenantId: string, action: string) {
  return withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: { action }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));
}

const taskQueue = `auth-${randomUUID()}`;
let worker: RunningWorker;

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
  worker = await runWorker(app, taskQueue);
});

afterAll(async () => {
  await worker.stop();
  await app.close();
});

// ---------------------------------------------------------------------------------------------
describe('POST /v1/auth/login', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('returns a ddu_ token, a 24 h fixed session, the user without any hash, and the tenant', async () => {
    const { email, password, userId } = await createUser(tenant);
    const before = Date.now();
    const res = await login(email, password);
    const after = Date.now();

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['session', 'tenant', 'token', 'user']);
    expect(res.body.token).toMatch(/^ddu_[A-Za-z0-9_-]{43}$/);

    const session = res.body.session;
    expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
    expect(session.user_id).toBe(userId);
    expect(session.revoked_at).toBeNull();
    const expiresAt = Date.parse(session.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(after + DAY_MS);
    expect(Math.abs(expiresAt - Date.parse(session.created_at) - DAY_MS)).toBeLessThan(5_000);

    expect(Object.keys(res.body.user).sort()).toEqual(USER_KEYS);
    expect(res.body.user).toMatchObject({ id: userId, email, status: 'active' });
    expect(Date.parse(res.body.user.last_login_at)).toBeGreaterThanOrEqual(before - 1_000);
    expect(res.body.tenant).toMatchObject({ id: tenant.tenantId, status: 'active' });
    expect(res.text).not.toMatch(/pbkdf2|password_hash|passwordHash|token_hash/i);

    // The token works, and /v1/me carries the user for a session.
    const who = await me(res.body.token);
    expect(who.status).toBe(200);
    expect(who.body.tenant.id).toBe(tenant.tenantId);
    expect(who.body.user).toMatchObject({ id: userId, email });
    expect(who.text).not.toMatch(/pbkdf2|password_hash/i);

    // Fixed expiry: using the session does not slide it.
    const [row] = await sessionsOf(tenant.tenantId, userId);
    expect(row!.expiresAt.toISOString()).toBe(session.expires_at);

    const audit = await auditRows(tenant.tenantId, 'session.created');
    expect(audit.filter((a) => a.subjectId === session.id)).toEqual([
      expect.objectContaining({ actorType: 'user', actorId: userId, subjectType: 'user_session' }),
    ]);
  });

  it('treats the email case-insensitively (and ignores surrounding blanks)', async () => {
    const { email, password, userId } = await createUser(tenant);
    const res = await login(`  ${email.toUpperCase()} `, password);
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(userId);
    expect(res.body.user.email).toBe(email);
  });

  it('is 400 for a missing field, a wrong type, an unknown key or malformed JSON', async () => {
    const { email, password } = await createUser(tenant);
    for (const body of [{ email }, { password }, {}, { email, password: 12345678901234 }, { email: [email], password }, { email, password, remember: true }]) {
      expectError(await app.request('POST', '/v1/auth/login', { body }), 400, 'bad_request');
    }
    const malformed = await app.request('POST', '/v1/auth/login', {
      rawBody: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'bad_request');
  });

  it('is 415 for a body that is not JSON', async () => {
    const { email, password } = await createUser(tenant);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await app.request('POST', '/v1/auth/login', {
        rawBody: type === 'text/plain' ? JSON.stringify({ email, password }) : `email=${encodeURIComponent(email)}&password=x`,
        headers: { 'content-type': type },
      });
      expectError(res, 415, 'unsupported_media_type');
    }
  });

  it('answers unknown email, wrong password and disabled user with one byte-identical 401', async () => {
    const wrong = await createUser(tenant);
    const disabled = await createUser(tenant);
    const off = await app.request('DELETE', `/v1/users/${disabled.userId}`, { token: tenant.apiKey });
    expect(off.status).toBe(200);
    expect(off.body.user.status).toBe('disabled');

    const unknownEmail = await login(uniqueEmail('nobody'), STRONG_PASSWORD);
    const wrongPassword = await login(wrong.email, 'not the right password');
    const disabledUser = await login(disabled.email, disabled.password);

    expectError(unknownEmail, 401, 'unauthorized');
    for (const res of [wrongPassword, disabledUser]) {
      expect(res.status).toBe(401);
      expect(res.text).toBe(unknownEmail.text);
      expect(res.headers['content-type']).toBe(unknownEmail.headers['content-type']);
    }
  });

  it('is 403 for correct credentials of a suspended tenant (wrong ones stay 401)', async () => {
    const suspended = await provisionTenant(app);
    const { email, password, userId } = await createUser(suspended);
    const res = await app.request('POST', `/v1/admin/tenants/${suspended.tenantId}/suspend`, { token: ADMIN_TOKEN });
    expect(res.status).toBe(200);

    expectError(await login(email, password), 403, 'forbidden');
    expectError(await login(email, 'not the right password'), 401, 'unauthorized');
    expect(await sessionsOf(suspended.tenantId, userId)).toHaveLength(0);
  });

  it('never leaves a live session for an old password when the login races a password change', async () => {
    // Several logins per round: their PBKDF2 work queues on the thread pool, which spreads them
    // over the whole duration of the change.
    for (let round = 0; round < 5; round++) {
      const session = await createUserSession(app, tenant);
      const [changed, ...racing] = await Promise.all([
        app.request('POST', '/v1/me/password', {
          localAddress: randomLoopback(),
          token: session.token,
          body: { current_password: session.password, new_password: NEW_PASSWORD },
        }),
        ...[1, 2, 3, 4, 5, 6].map(() => login(session.email, session.password)),
      ]);
      expect(changed.status).toBe(200);
      for (const res of racing) {
        // Either the login lost (401) or its session was opened before the change and revoked by it.
        if (res.status === 200) expectError(await me(res.body.token), 401, 'unauthorized');
        else expectError(res, 401, 'unauthorized');
      }
    }
  });

  it('is 429 rate_limited on the 11th attempt for one email, whatever its case, from any address; other emails are unaffected', async () => {
    const target = await createUser(tenant);
    const other = await createUser(tenant);
    for (let i = 0; i < 10; i++) {
      const spelled = i % 2 === 0 ? target.email : target.email.toUpperCase();
      expectError(await login(spelled, `wrong password ${i}`), 401, 'unauthorized');
    }
    const limited = await login(target.email, target.password);
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers['retry-after']).toBeUndefined();
    expect(await sessionsOf(tenant.tenantId, target.userId)).toHaveLength(0);

    expect((await login(other.email, other.password)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
describe('POST /v1/auth/logout', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  const logout = (headers: Record<string, string> = {}) => app.request('POST', '/v1/auth/logout', { headers });
  const logoutWith = (token: string) => logout({ authorization: `Bearer ${token}` });

  it('revokes a live session (204), then is 204 again for the same revoked token', async () => {
    const session = await createUserSession(app, tenant);
    expect((await me(session.token)).status).toBe(200);

    const first = await logoutWith(session.token);
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    expectError(await me(session.token), 401, 'unauthorized');

    const [row] = await sessionsOf(tenant.tenantId, session.userId);
    expect(row!.revokedAt).toBeInstanceOf(Date);

    const again = await logoutWith(session.token);
    expect(again.status).toBe(204);
    // Revoked, never deleted; one audit row for the one revocation.
    expect(await sessionsOf(tenant.tenantId, session.userId)).toHaveLength(1);
    const audit = (await auditRows(tenant.tenantId, 'session.revoked')).filter((a) => a.subjectId === row!.id);
    expect(audit).toEqual([expect.objectContaining({ actorType: 'user', actorId: session.userId, subjectType: 'user_session' })]);
  });

  it('only revokes the presented session', async () => {
    const session = await createUserSession(app, tenant);
    const second = await loginToken(session.email, session.password);
    expect((await logoutWith(session.token)).status).toBe(204);
    expect((await me(second)).status).toBe(200);
  });

  it('is 204 for a well-formed unknown token and for a dd_ key, which keeps working', async () => {
    expect((await logoutWith(unknownToken('ddu_'))).status).toBe(204);
    expect((await logoutWith('not-one-of-ours')).status).toBe(204);

    expect((await logoutWith(tenant.apiKey)).status).toBe(204);
    const who = await me(tenant.apiKey);
    expect(who.status).toBe(200);
    expect(who.body.tenant.id).toBe(tenant.tenantId);
    expect(who.body.user).toBeUndefined();
  });

  it('is 401 for a missing or malformed Authorization header', async () => {
    const session = await createUserSession(app, tenant);
    expectError(await logout(), 401, 'unauthorized');
    for (const authorization of ['Basic x', 'Bearer', 'Bearer ', `Bearer ${session.token} extra`, session.token]) {
      expectError(await logout({ authorization }), 401, 'unauthorized');
    }
    // None of those touched the live session.
    expect((await me(session.token)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
describe('POST /v1/auth/password-reset', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('answers 202 with byte-identical bodies for an active user, an unknown address, a disabled user and a rate-limited request', async () => {
    const active = await createUser(tenant);
    const disabled = await createUser(tenant);
    expect((await app.request('DELETE', `/v1/users/${disabled.userId}`, { token: tenant.apiKey })).status).toBe(200);
    const limited = await createUser(tenant);

    const forActive = await requestReset(active.email);
    expect(forActive.status).toBe(202);
    expect(forActive.body).toEqual({ status: 'accepted', message: expect.any(String) });

    const nobody = uniqueEmail('nobody');
    const forUnknown = await requestReset(nobody);
    const forDisabled = await requestReset(disabled.email);
    for (let i = 0; i < 3; i++) {
      expect((await requestReset(limited.email)).status).toBe(202);
      await resetSettled(limited.email);
    }
    expect(await outbox(tenant.tenantId, limited.email)).toHaveLength(3);
    const limitedRun = await app.deps.temporal!.workflow.getHandle(passwordResetWorkflowId(sha256Hex(limited.email))).describe();
    const forLimited = await requestReset(limited.email);
    await Promise.all([resetSettled(nobody), resetSettled(disabled.email)]);
    await passwordResetHandOffsSettled();

    for (const res of [forUnknown, forDisabled, forLimited]) {
      expect(res.status).toBe(202);
      expect(res.text).toBe(forActive.text);
    }
    // The disabled user got nothing, and the rate-limited 4th request started no work at all.
    expect(await outbox(tenant.tenantId, disabled.email)).toHaveLength(0);
    const after = await app.deps.temporal!.workflow.getHandle(passwordResetWorkflowId(sha256Hex(limited.email))).describe();
    expect({ runId: after.runId, status: after.status.name }).toEqual({ runId: limitedRun.runId, status: 'COMPLETED' });
    expect(await outbox(tenant.tenantId, limited.email)).toHaveLength(3);
  });

  it('is 400 when the email is missing or not a string', async () => {
    for (const body of [{}, { email: 42 }, { email: null }, { email: ['a@example.com'] }]) {
      expectError(await app.request('POST', '/v1/auth/password-reset', { body }), 400, 'bad_request');
    }
  });

  it('queues exactly one encrypted mail whose body carries a one-hour reset link, and audits the request', async () => {
    const { email, userId } = await createUser(tenant);
    const before = Date.now();
    const res = await requestReset(email.toUpperCase());
    expect(res.status).toBe(202);
    await resetSettled(email);

    const mails = await outbox(tenant.tenantId, email);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ kind: 'password_reset', tenantId: tenant.tenantId });
    const text = app.deps.box.decrypt(mails[0]!.bodyCiphertext);
    expect(mails[0]!.bodyCiphertext).not.toContain('ddr_');
    const match = /(\S+)\/reset-password\?token=(ddr_[A-Za-z0-9_-]{43})/.exec(text);
    expect(match).not.toBeNull();
    expect(match![1]).toBe(app.config.publicBaseUrl);

    const row = await resetRow(tenant.tenantId, match![2]!);
    expect(row).toMatchObject({ userId, usedAt: null, supersededAt: null });
    expect(row.expiresAt.getTime() - before).toBeGreaterThanOrEqual(60 * 60 * 1000 - 5_000);
    expect(row.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60 * 60 * 1000);

    const audit = (await auditRows(tenant.tenantId, 'password_reset.requested')).filter((a) => a.subjectId === row.id);
    expect(audit).toEqual([expect.objectContaining({ actorId: userId, subjectType: 'password_reset' })]);
  });

  it('leaves exactly one live link when requests arrive concurrently', async () => {
    const { email, userId } = await createUser(tenant);
    const answers = await Promise.all([1, 2, 3].map(() => requestReset(email)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
    await resetSettled(email);
    // Requests that arrive while a link is being issued fold into one more link after it.
    const mails = await outbox(tenant.tenantId, email);
    expect(mails.length).toBeGreaterThanOrEqual(1);
    const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.passwordResetToken.findMany({ where: { userId } }));
    expect(rows).toHaveLength(mails.length);
    expect(rows.filter((r) => r.supersededAt === null && r.usedAt === null)).toHaveLength(1);
  });

  it('supersedes the previous link with a new request', async () => {
    const { email } = await createUser(tenant);
    const first = await resetTokenFor(tenant.tenantId, email);
    const second = await resetTokenFor(tenant.tenantId, email);
    expect(second).not.toBe(first);
    expect((await resetRow(tenant.tenantId, first)).supersededAt).toBeInstanceOf(Date);

    expectError(await confirmReset(first, NEW_PASSWORD), 401, 'unauthorized');
    expect((await confirmReset(second, NEW_PASSWORD)).status).toBe(204);
    expect((await login(email, NEW_PASSWORD)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
describe('POST /v1/auth/password-reset/confirm', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('refuses a link once its user is disabled (disabling supersedes live links)', async () => {
    const session = await createUserSession(app, tenant);
    const token = await resetTokenFor(tenant.tenantId, session.email);
    const disabled = await app.request('DELETE', `/v1/users/${session.userId}`, { token: tenant.apiKey });
    expect(disabled.status).toBe(200);
    expect((await resetRow(tenant.tenantId, token)).supersededAt).not.toBeNull();
    expectError(await confirmReset(token, NEW_PASSWORD), 401, 'unauthorized');
  });

  it('refuses a live link whose user was disabled behind its back', async () => {
    const session = await createUserSession(app, tenant);
    const token = await resetTokenFor(tenant.tenantId, session.email);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.user.update({ where: { id: session.userId }, data: { status: 'disabled' } }));
    expectError(await confirmReset(token, NEW_PASSWORD), 401, 'unauthorized');
    expect((await resetRow(tenant.tenantId, token)).usedAt).toBeNull();
  });

  it('sets the new password and revokes every live session of the user in the same step', async () => {
    const session = await createUserSession(app, tenant);
    const secondSession = await loginToken(session.email, session.password);
    const bystander = await createUserSession(app, tenant);
    const token = await resetTokenFor(tenant.tenantId, session.email);

    const res = await confirmReset(token, NEW_PASSWORD);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    expectError(await me(session.token), 401, 'unauthorized');
    expectError(await me(secondSession), 401, 'unauthorized');
    expect((await me(bystander.token)).status).toBe(200);

    expectError(await login(session.email, session.password), 401, 'unauthorized');
    const fresh = await login(session.email, NEW_PASSWORD);
    expect(fresh.status).toBe(200);
    expect((await me(fresh.body.token)).status).toBe(200);

    // Token burn, password write and revocations carry one timestamp: one transaction.
    const burned = await resetRow(tenant.tenantId, token);
    expect(burned.usedAt).toBeInstanceOf(Date);
    const revoked = (await sessionsOf(tenant.tenantId, session.userId)).filter((s) => s.id !== fresh.body.session.id);
    expect(revoked).toHaveLength(2);
    for (const s of revoked) expect(s.revokedAt?.toISOString()).toBe(burned.usedAt!.toISOString());
    const user = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.user.findUniqueOrThrow({ where: { id: session.userId } }));
    expect(user.passwordUpdatedAt.toISOString()).toBe(burned.usedAt!.toISOString());

    const audit = (await auditRows(tenant.tenantId, 'password_reset.completed')).filter((a) => a.subjectId === session.userId);
    expect(audit).toEqual([expect.objectContaining({ actorId: session.userId, payload: { sessions_revoked: 2 } })]);
  });

  it('is 422 for a password of 11 or 129 characters, and the link stays redeemable (128 is accepted)', async () => {
    const session = await createUserSession(app, tenant);
    const token = await resetTokenFor(tenant.tenantId, session.email);

    expectError(await confirmReset(token, 'x'.repeat(11)), 422, 'unprocessable');
    expectError(await confirmReset(token, 'x'.repeat(129)), 422, 'unprocessable');
    const row = await resetRow(tenant.tenantId, token);
    expect(row.usedAt).toBeNull();
    expect((await me(session.token)).status).toBe(200);

    const longest = 'y'.repeat(128);
    expect((await confirmReset(token, longest)).status).toBe(204);
    expect((await login(session.email, longest)).status).toBe(200);
  });

  it('answers unknown, tampered, superseded, already-redeemed and expired tokens with one identical 401', async () => {
    const a = await createUser(tenant);
    const superseded = await resetTokenFor(tenant.tenantId, a.email);
    const redeemed = await resetTokenFor(tenant.tenantId, a.email);
    expect((await confirmReset(redeemed, NEW_PASSWORD)).status).toBe(204);

    const b = await createUser(tenant);
    const live = await resetTokenFor(tenant.tenantId, b.email);
    const lastChar = live.at(-1) === 'A' ? 'B' : 'A';
    const tampered = `${live.slice(0, -1)}${lastChar}`;

    const c = await createUser(tenant);
    const expired = await resetTokenFor(tenant.tenantId, c.email);
    await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.passwordResetToken.update({ where: { tokenHash: sha256Hex(expired) }, data: { expiresAt: new Date(Date.now() - 1_000) } }),
    );

    const answers = {
      unknown: await confirmReset(unknownToken('ddr_'), NEW_PASSWORD),
      notAToken: await confirmReset('garbage', NEW_PASSWORD),
      tampered: await confirmReset(tampered, NEW_PASSWORD),
      superseded: await confirmReset(superseded, NEW_PASSWORD),
      redeemed: await confirmReset(redeemed, 'yet another passphrase'),
      expired: await confirmReset(expired, NEW_PASSWORD),
    };
    expectError(answers.unknown, 401, 'unauthorized');
    for (const [kind, res] of Object.entries(answers)) {
      expect({ kind, status: res.status, text: res.text }).toEqual({ kind, status: 401, text: answers.unknown.text });
    }

    // None of the refusals changed a password; the untampered link still works.
    expect((await login(a.email, NEW_PASSWORD)).status).toBe(200);
    expect((await login(c.email, c.password)).status).toBe(200);
    expect((await confirmReset(live, NEW_PASSWORD)).status).toBe(204);
  });

  it('is 400 for missing fields, wrong types and unknown keys', async () => {
    const { email } = await createUser(tenant);
    const token = await resetTokenFor(tenant.tenantId, email);
    for (const body of [{}, { token }, { password: NEW_PASSWORD }, { token, password: 123456789012 }, { token, password: NEW_PASSWORD, email }]) {
      expectError(await app.request('POST', '/v1/auth/password-reset/confirm', { body }), 400, 'bad_request');
    }
    expect((await resetRow(tenant.tenantId, token)).usedAt).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
describe('POST /v1/me/password', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  const changePassword = (token: string, body: unknown, localAddress = randomLoopback()) =>
    app.request('POST', '/v1/me/password', { token, body, localAddress });

  it('rotates the password, revokes the other sessions and keeps the calling one', async () => {
    const session = await createUserSession(app, tenant);
    const other = await loginToken(session.email, session.password);
    const bystander = await createUserSession(app, tenant);
    const before = Date.now();

    const res = await changePassword(session.token, { current_password: session.password, new_password: NEW_PASSWORD });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['user']);
    expect(Object.keys(res.body.user).sort()).toEqual(USER_KEYS);
    expect(res.body.user).toMatchObject({ id: session.userId, email: session.email, status: 'active' });
    expect(Date.parse(res.body.user.password_updated_at)).toBeGreaterThanOrEqual(before - 1_000);
    expect(res.text).not.toMatch(/pbkdf2|password_hash/i);

    expect((await me(session.token)).status).toBe(200);
    expectError(await me(other), 401, 'unauthorized');
    expect((await me(bystander.token)).status).toBe(200);

    expectError(await login(session.email, session.password), 401, 'unauthorized');
    expect((await login(session.email, NEW_PASSWORD)).status).toBe(200);

    const audit = (await auditRows(tenant.tenantId, 'password.changed')).filter((a) => a.subjectId === session.userId);
    expect(audit).toEqual([expect.objectContaining({ actorId: session.userId, payload: { other_sessions_revoked: 1 } })]);
  });

  it('lets exactly one of two concurrent changes from the same current password win', async () => {
    const session = await createUserSession(app, tenant);
    const other = await loginToken(session.email, session.password);
    const [first, second] = await Promise.all([
      changePassword(session.token, { current_password: session.password, new_password: NEW_PASSWORD }),
      changePassword(other, { current_password: session.password, new_password: 'the other new passphrase' }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 401]);
    const [winnerToken, winnerPassword, loserToken] =
      first.status === 200 ? [session.token, NEW_PASSWORD, other] : [other, 'the other new passphrase', session.token];
    expect((await me(winnerToken)).status).toBe(200);
    expectError(await me(loserToken), 401, 'unauthorized');
    expect((await login(session.email, winnerPassword)).status).toBe(200);
  });

  it('is 401 for a wrong current password and changes nothing', async () => {
    const session = await createUserSession(app, tenant);
    const other = await loginToken(session.email, session.password);
    const res = await changePassword(session.token, { current_password: 'not the right password', new_password: NEW_PASSWORD });
    expectError(res, 401, 'unauthorized');
    expect((await me(other)).status).toBe(200);
    expect((await login(session.email, session.password)).status).toBe(200);
  });

  it('is 422 when the new password breaks the policy', async () => {
    const session = await createUserSession(app, tenant);
    for (const new_password of ['x'.repeat(11), 'x'.repeat(129)]) {
      expectError(await changePassword(session.token, { current_password: session.password, new_password }), 422, 'unprocessable');
    }
    expect((await login(session.email, session.password)).status).toBe(200);
  });

  it('is 403 for a dd_ API key and 401 without a live credential', async () => {
    const body = { current_password: STRONG_PASSWORD, new_password: NEW_PASSWORD };
    expectError(await changePassword(tenant.apiKey, body), 403, 'forbidden');
    expectError(await app.request('POST', '/v1/me/password', { body }), 401, 'unauthorized');
    expectError(await changePassword(unknownToken('ddu_'), body), 401, 'unauthorized');
  });

  it('is 400 for an unknown key, a missing field or a wrong type', async () => {
    const session = await createUserSession(app, tenant);
    for (const body of [
      { current_password: session.password, new_password: NEW_PASSWORD, password: NEW_PASSWORD },
      { current_password: session.password },
      { new_password: NEW_PASSWORD },
      { current_password: session.password, new_password: 123456789012 },
    ]) {
      expectError(await changePassword(session.token, body), 400, 'bad_request');
    }
    expect((await login(session.email, session.password)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
describe('audit trail', () => {
  it('records every auth state change of a tenant on an intact hash chain', async () => {
    const tenant = await provisionTenant(app);
    const session = await createUserSession(app, tenant);
    const other = await loginToken(session.email, session.password);
    expect((await app.request('POST', '/v1/auth/logout', { token: other })).status).toBe(204);
    const changed = await app.request('POST', '/v1/me/password', {
      token: session.token,
      body: { current_password: session.password, new_password: NEW_PASSWORD },
    });
    expect(changed.status).toBe(200);
    const token = await resetTokenFor(tenant.tenantId, session.email);
    expect((await confirmReset(token, STRONG_PASSWORD)).status).toBe(204);

    const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));
    const actions = rows.map((r) => r.action).filter((a) => !a.startsWith('tenant.') && !a.startsWith('user.'));
    expect(actions).toEqual([
      'session.created',
      'session.created',
      'session.revoked',
      'password.changed',
      'password_reset.requested',
      'password_reset.completed',
    ]);
    const chain = await withTenant(app.deps.db, tenant.tenantId, (tx) => verifyAuditChain(tx, tenant.tenantId));
    expect(chain).toEqual({ rows: rows.length, brokenAt: null });
  });
});
