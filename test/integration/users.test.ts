import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  STRONG_PASSWORD,
  startTestApp,
  uniqueEmail,
  type HttpResult,
  type ProvisionedTenant,
  type TestApp,
} from '../helpers/harness';

const USER_FIELDS = ['id', 'email', 'name', 'status', 'role', 'password_updated_at', 'last_login_at', 'created_at', 'updated_at'].sort();
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

describe('users (/v1/users)', () => {
  let app: TestApp;
  const createUser = (token: string, body: Record<string, unknown>) => app.request('POST', '/v1/users', { token, body });
  const newUser = (token: string, extra: Record<string, unknown> = {}) =>
    createUser(token, { email: uniqueEmail('u'), name: 'Some User', password: STRONG_PASSWORD, ...extra });
  const login = (email: string, password = STRONG_PASSWORD) => app.request('POST', '/v1/auth/login', { body: { email, password } });
  const auditRows = (tenantId: string, action: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: { action }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));
  const sessionsOf = (tenantId: string, userId: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.userSession.findMany({ where: { userId } }));

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/users', () => {
    it('creates the first user as account_admin with the dd_ key, later ones as member', async () => {
      const tenant = await provisionTenant(app);
      const email = uniqueEmail('First.Admin');
      const mixedCase = `  ${email.toUpperCase()} `;
      const first = await createUser(tenant.apiKey, { email: mixedCase, name: '  Fiona First ', password: STRONG_PASSWORD });
      expect(first.status).toBe(201);
      expect(Object.keys(first.body)).toEqual(['user']);
      expect(Object.keys(first.body.user).sort()).toEqual(USER_FIELDS);
      expect(first.body.user).toEqual({
        id: expect.stringMatching(UUID_RE),
        email: email.toLowerCase(),
        name: 'Fiona First',
        status: 'active',
        role: 'account_admin',
        password_updated_at: expect.stringMatching(ISO_RE),
        last_login_at: null,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      expect(first.text).not.toContain(STRONG_PASSWORD);
      expect(first.text).not.toMatch(/pbkdf2|hash/i);

      // The stored email is lowercase: login works with any case.
      const session = await login(email.toUpperCase());
      expect(session.status).toBe(200);

      const second = await newUser(tenant.apiKey);
      expect(second.status).toBe(201);
      expect(second.body.user.role).toBe('member');

      // Any ddu_ session may manage users; still member.
      const third = await newUser(session.body.token);
      expect(third.status).toBe(201);
      expect(third.body.user.role).toBe('member');

      // Without a name the user gets an empty one.
      const unnamed = await createUser(tenant.apiKey, { email: uniqueEmail(), password: STRONG_PASSWORD });
      expect(unnamed.status).toBe(201);
      expect(unnamed.body.user).toMatchObject({ name: '', role: 'member' });

      const rows = await auditRows(tenant.tenantId, 'user.created');
      expect(rows.map((r) => r.subjectId)).toEqual([first.body.user.id, second.body.user.id, third.body.user.id, unnamed.body.user.id]);
      expect(rows[0]).toMatchObject({ actorType: 'api_key', subjectType: 'user', payload: { role: 'account_admin' } });
      expect(rows[2]).toMatchObject({ actorType: 'user', actorId: first.body.user.id, payload: { role: 'member' } });
    });

    it('gives account_admin to exactly one user when the first users are created concurrently', async () => {
      const tenant = await provisionTenant(app);
      const results = await Promise.all(Array.from({ length: 6 }, () => newUser(tenant.apiKey)));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
      const roles = results.map((r) => r.body.user.role).sort();
      expect(roles).toEqual(['account_admin', 'member', 'member', 'member', 'member', 'member']);
    });

    it('each tenant has its own first account_admin', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      expect((await newUser(a.apiKey)).body.user.role).toBe('account_admin');
      expect((await newUser(b.apiKey)).body.user.role).toBe('account_admin');
    });

    it('answers 409 for a duplicate email in the same tenant and across tenants, case-insensitively', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      const email = uniqueEmail('dup');
      expect((await createUser(a.apiKey, { email, password: STRONG_PASSWORD })).status).toBe(201);
      for (const [tenant, candidate] of [
        [a, email],
        [a, email.toUpperCase()],
        [b, email],
        [b, ` ${email.toUpperCase()}`],
      ] as const) {
        const res = await createUser(tenant.apiKey, { email: candidate, password: STRONG_PASSWORD });
        expectError(res, 409, 'conflict');
      }
      // The failed attempt in b did not make anyone in b: b's first real user is still the admin.
      expect((await app.request('GET', '/v1/users', { token: b.apiKey })).body.users).toEqual([]);
      expect((await newUser(b.apiKey)).body.user.role).toBe('account_admin');
      // A disabled user still holds its email.
      const listed = (await app.request('GET', '/v1/users', { token: a.apiKey })).body.users;
      await app.request('DELETE', `/v1/users/${listed[0].id}`, { token: a.apiKey });
      expectError(await createUser(b.apiKey, { email, password: STRONG_PASSWORD }), 409, 'conflict');
    });

    it('enforces the 12..128 character password policy with 422', async () => {
      const tenant = await provisionTenant(app);
      for (const password of ['', 'short', 'a'.repeat(11), 'é'.repeat(11), 'a'.repeat(129)]) {
        const email = uniqueEmail('pw');
        const res = await createUser(tenant.apiKey, { email, password });
        expectError(res, 422, 'unprocessable');
        expect(res.body.error.message).toContain('password');
        // Nothing was created: the email is still free.
        expect((await createUser(tenant.apiKey, { email, password: STRONG_PASSWORD })).status).toBe(201);
      }
      for (const password of ['a'.repeat(12), 'b'.repeat(128), '🔒'.repeat(12)]) {
        const email = uniqueEmail('pw-ok');
        expect((await createUser(tenant.apiKey, { email, password })).status).toBe(201);
        expect((await login(email, password)).status).toBe(200);
      }
    });

    it('answers 422 for an invalid email', async () => {
      const tenant = await provisionTenant(app);
      for (const email of ['', 'plainaddress', 'a@b', 'two@@example.com', 'sp ace@example.com', '@example.com', `${'x'.repeat(250)}@example.com`]) {
        const res = await createUser(tenant.apiKey, { email, password: STRONG_PASSWORD });
        expectError(res, 422, 'unprocessable');
        expect(res.body.error.message).toContain('email');
      }
      expect((await app.request('GET', '/v1/users', { token: tenant.apiKey })).body.users).toEqual([]);
    });

    it('answers 400 for malformed JSON, wrong types, missing fields and unknown keys (naming the key)', async () => {
      const tenant = await provisionTenant(app);
      const malformed = await app.request('POST', '/v1/users', {
        token: tenant.apiKey,
        rawBody: '{"email": "a@example.com", ',
        headers: { 'content-type': 'application/json' },
      });
      expectError(malformed, 400, 'bad_request');
      const cases: [string, unknown][] = [
        ['email', { password: STRONG_PASSWORD }],
        ['password', { email: uniqueEmail() }],
        ['email', { email: 42, password: STRONG_PASSWORD }],
        ['email', { email: null, password: STRONG_PASSWORD }],
        ['password', { email: uniqueEmail(), password: 123456789012 }],
        ['name', { email: uniqueEmail(), password: STRONG_PASSWORD, name: ['x'] }],
        ['tenant_id', { email: uniqueEmail(), password: STRONG_PASSWORD, tenant_id: randomUUID() }],
        ['role', { email: uniqueEmail(), password: STRONG_PASSWORD, role: 'account_admin' }],
        ['status', { email: uniqueEmail(), password: STRONG_PASSWORD, status: 'disabled' }],
      ];
      for (const [field, body] of cases) {
        const res = await app.request('POST', '/v1/users', { token: tenant.apiKey, body });
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'bad_request' });
        expect(res.body.error.message).toContain(field);
      }
      const text = await app.request('POST', '/v1/users', {
        token: tenant.apiKey,
        rawBody: JSON.stringify({ email: uniqueEmail(), password: STRONG_PASSWORD }),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(text, 415, 'unsupported_media_type');
      expect((await app.request('GET', '/v1/users', { token: tenant.apiKey })).body.users).toEqual([]);
    });

    it('answers 401 without a valid credential and 403 for a suspended tenant', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const body = { email: uniqueEmail(), password: STRONG_PASSWORD };
      for (const token of [null, 'dd_short', `dd_${'Z'.repeat(43)}`, `ddu_${'Z'.repeat(43)}`, ADMIN_TOKEN]) {
        expectError(await app.request('POST', '/v1/users', { token, body }), 401, 'unauthorized');
      }
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      for (const token of [tenant.apiKey, session.token]) {
        expectError(await app.request('POST', '/v1/users', { token, body }), 403, 'forbidden');
        expectError(await app.request('GET', '/v1/users', { token }), 403, 'forbidden');
      }
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`, { token: ADMIN_TOKEN });
      expect((await app.request('POST', '/v1/users', { token: session.token, body })).status).toBe(201);
    });
  });

  describe('GET /v1/users', () => {
    let tenant: ProvisionedTenant;
    let created: string[];
    beforeAll(async () => {
      tenant = await provisionTenant(app);
      created = [];
      for (let i = 0; i < 7; i += 1) {
        const res = await newUser(tenant.apiKey, { name: `User ${i}` });
        created.push(res.body.user.id);
      }
    });

    it('lists the tenant’s users oldest first with the default page', async () => {
      const res = await app.request('GET', '/v1/users', { token: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['next_cursor', 'users']);
      expect(res.body.users.map((u: { id: string }) => u.id)).toEqual(created);
      expect(res.body.next_cursor).toBeNull();
      for (const user of res.body.users) expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
      expect(res.body.users[0].role).toBe('account_admin');
      expect(res.body.users.slice(1).every((u: { role: string }) => u.role === 'member')).toBe(true);
    });

    it.each([1, 2, 3, 6, 7, 8])('walks every user exactly once with limit=%i', async (limit) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `?limit=${limit}&cursor=${encodeURIComponent(cursor)}` : `?limit=${limit}`;
        const res = await app.request('GET', `/v1/users${query}`, { token: tenant.apiKey });
        expect(res.status).toBe(200);
        expect(res.body.users.length).toBeLessThanOrEqual(limit);
        seen.push(...res.body.users.map((u: { id: string }) => u.id));
        cursor = res.body.next_cursor;
        pages += 1;
        expect(pages).toBeLessThanOrEqual(created.length + 1);
      } while (cursor !== null);
      expect(seen).toEqual(created);
      expect(pages).toBe(Math.max(1, Math.ceil(created.length / limit)));
    });

    it('accepts limit=1000', async () => {
      const res = await app.request('GET', '/v1/users?limit=1000', { token: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.users).toHaveLength(created.length);
    });

    it('answers 400 for bad limits and bad cursors', async () => {
      const bad = [
        'limit=0',
        'limit=-1',
        'limit=1001',
        'limit=abc',
        'limit=2.5',
        'limit=',
        'cursor=',
        'cursor=not-a-cursor',
        `cursor=${'a'.repeat(600)}`,
        `cursor=${b64(['2024-01-01T00:00:00.000Z'])}`,
        `cursor=${b64({ a: 1 })}`,
        `cursor=${b64(['not-a-date', randomUUID()])}`,
        `cursor=${b64(['2024-01-01T00:00:00.000Z', 'not-a-uuid'])}`,
        `cursor=${b64([null, null])}`,
      ];
      for (const query of bad) {
        const res = await app.request('GET', `/v1/users?${query}`, { token: tenant.apiKey });
        expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'bad_request' });
      }
      const limitMessage = await app.request('GET', '/v1/users?limit=1001', { token: tenant.apiKey });
      expect(limitMessage.body.error.message).toContain('limit');
    });

    it('never shows another tenant’s users', async () => {
      const other = await provisionTenant(app);
      const mine = await newUser(other.apiKey);
      const theirs = await app.request('GET', '/v1/users?limit=1000', { token: tenant.apiKey });
      expect(theirs.body.users.map((u: { id: string }) => u.id)).not.toContain(mine.body.user.id);
      const own = await app.request('GET', '/v1/users', { token: other.apiKey });
      expect(own.body.users.map((u: { id: string }) => u.id)).toEqual([mine.body.user.id]);
      // A cursor minted by one tenant never reveals the other's rows either.
      const page = await app.request('GET', '/v1/users?limit=1', { token: tenant.apiKey });
      const replay = await app.request('GET', `/v1/users?limit=1000&cursor=${page.body.next_cursor}`, { token: other.apiKey });
      expect(replay.status).toBe(200);
      expect(replay.body.users.every((u: { id: string }) => u.id === mine.body.user.id)).toBe(true);
    });

    it('answers 401 without a credential', async () => {
      expectError(await app.request('GET', '/v1/users'), 401, 'unauthorized');
    });
  });

  describe('DELETE /v1/users/{id} and POST /v1/users/{id}/enable', () => {
    it('disable revokes the user’s sessions at once; enable does not resurrect them', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const second = await login(session.email);
      expect(second.status).toBe(200);
      const bystander = await createUserSession(app, tenant);

      const disabled = await app.request('DELETE', `/v1/users/${session.userId}`, { token: bystander.token });
      expect(disabled.status).toBe(200);
      expect(Object.keys(disabled.body)).toEqual(['user']);
      expect(disabled.body.user).toMatchObject({ id: session.userId, status: 'disabled', email: session.email });

      for (const token of [session.token, second.body.token]) {
        expectError(await app.request('GET', '/v1/me', { token }), 401, 'unauthorized');
      }
      const sessions = await sessionsOf(tenant.tenantId, session.userId);
      expect(sessions).toHaveLength(2);
      expect(sessions.every((s) => s.revokedAt !== null)).toBe(true);
      // Login is refused (one identical 401), the bystander is untouched.
      expectError(await login(session.email), 401, 'unauthorized');
      expect((await app.request('GET', '/v1/me', { token: bystander.token })).status).toBe(200);

      // Idempotent: same answer, no second audit row, revocation times unchanged.
      const again = await app.request('DELETE', `/v1/users/${session.userId}`, { token: tenant.apiKey });
      expect(again.status).toBe(200);
      expect(again.body.user).toEqual(disabled.body.user);
      const sessionsAgain = await sessionsOf(tenant.tenantId, session.userId);
      expect(sessionsAgain.map((s) => s.revokedAt?.getTime()).sort()).toEqual(sessions.map((s) => s.revokedAt?.getTime()).sort());

      const enabled = await app.request('POST', `/v1/users/${session.userId}/enable`, { token: tenant.apiKey });
      expect(enabled.status).toBe(200);
      expect(Object.keys(enabled.body)).toEqual(['user']);
      expect(enabled.body.user).toMatchObject({ id: session.userId, status: 'active' });
      for (const token of [session.token, second.body.token]) {
        expectError(await app.request('GET', '/v1/me', { token }), 401, 'unauthorized');
      }
      // A fresh login works again.
      const fresh = await login(session.email);
      expect(fresh.status).toBe(200);
      expect((await app.request('GET', '/v1/me', { token: fresh.body.token })).status).toBe(200);

      const enabledAgain = await app.request('POST', `/v1/users/${session.userId}/enable`, { token: bystander.token });
      expect(enabledAgain.status).toBe(200);
      expect(enabledAgain.body.user.status).toBe('active');

      const disabledRows = await auditRows(tenant.tenantId, 'user.disabled');
      expect(disabledRows).toHaveLength(1);
      expect(disabledRows[0]).toMatchObject({
        actorType: 'user',
        actorId: bystander.userId,
        subjectType: 'user',
        subjectId: session.userId,
        payload: { sessions_revoked: 2 },
      });
      const enabledRows = await auditRows(tenant.tenantId, 'user.enabled');
      expect(enabledRows).toHaveLength(1);
      expect(enabledRows[0]).toMatchObject({ actorType: 'api_key', subjectType: 'user', subjectId: session.userId });

      // The list reflects the status.
      const list = await app.request('GET', '/v1/users', { token: tenant.apiKey });
      expect(list.body.users.find((u: { id: string }) => u.id === session.userId).status).toBe('active');
    });

    it('a user can disable itself; its own session stops working', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const res = await app.request('DELETE', `/v1/users/${session.userId}`, { token: session.token });
      expect(res.status).toBe(200);
      expect(res.body.user.status).toBe('disabled');
      expectError(await app.request('GET', '/v1/users', { token: session.token }), 401, 'unauthorized');
    });

    it('answers one identical 404 for another tenant’s user, an unknown id and a malformed id', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      const victim = await createUserSession(app, b);
      const texts = new Set<string>();
      for (const id of [victim.userId, victim.userId.toUpperCase(), randomUUID(), 'not-a-uuid', '42']) {
        for (const [method, path] of [
          ['DELETE', `/v1/users/${id}`],
          ['POST', `/v1/users/${id}/enable`],
        ] as const) {
          const res = await app.request(method, path, { token: a.apiKey });
          expectError(res, 404, 'not_found');
          texts.add(res.text);
        }
      }
      expect(texts.size).toBe(1);
      // b's user is untouched and still logged in.
      expect((await app.request('GET', '/v1/me', { token: victim.token })).status).toBe(200);
      expect(await auditRows(a.tenantId, 'user.disabled')).toHaveLength(0);
    });

    it('accepts the id in upper case for the own tenant', async () => {
      const tenant = await provisionTenant(app);
      const user = (await newUser(tenant.apiKey)).body.user;
      const res = await app.request('DELETE', `/v1/users/${user.id.toUpperCase()}`, { token: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ id: user.id, status: 'disabled' });
    });

    it('answers 401 without a valid credential and 403 for a suspended tenant', async () => {
      const tenant = await provisionTenant(app);
      const user = (await newUser(tenant.apiKey)).body.user;
      for (const [method, path] of [
        ['DELETE', `/v1/users/${user.id}`],
        ['POST', `/v1/users/${user.id}/enable`],
      ] as const) {
        expectError(await app.request(method, path), 401, 'unauthorized');
        expectError(await app.request(method, path, { token: `dd_${'Q'.repeat(43)}` }), 401, 'unauthorized');
      }
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      expectError(await app.request('DELETE', `/v1/users/${user.id}`, { token: tenant.apiKey }), 403, 'forbidden');
      expectError(await app.request('POST', `/v1/users/${user.id}/enable`, { token: tenant.apiKey }), 403, 'forbidden');
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`, { token: ADMIN_TOKEN });
      const list = await app.request('GET', '/v1/users', { token: tenant.apiKey });
      expect(list.body.users[0].status).toBe('active');
    });
  });
});
