import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { createUserSession, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

/** The tables of the foundation migration that hold tenant data (tenants is keyed by id). */
const FOUNDATION_TENANT_TABLES = ['users', 'user_sessions', 'api_keys', 'agents', 'password_reset_tokens', 'mail_outbox', 'audit_log'];

interface Seeded extends ProvisionedTenant {
  userId: string;
  session: string;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

async function pgError(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error('expected the statement to be refused');
}

describe('row-level security (raw SQL as dialer_app)', () => {
  let app: TestApp;
  let owner: Client;
  let asApp: Client;
  let a: Seeded;
  let b: Seeded;
  /** Every table of the schema with a tenant_id column, read from the catalog. */
  let tenantTables: string[];

  async function seed(): Promise<Seeded> {
    const tenant = await provisionTenant(app);
    const user = await createUserSession(app, tenant);
    // Tables no HTTP flow fills deterministically: written as the owner.
    await owner.query(
      `INSERT INTO password_reset_tokens (tenant_id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')`,
      [tenant.tenantId, user.userId, `rls-${randomUUID()}`],
    );
    await owner.query(
      `INSERT INTO mail_outbox (tenant_id, to_address, subject, body_ciphertext, kind) VALUES ($1, 'x@example.com', 's', 'v1.a.b.c', 'rls')`,
      [tenant.tenantId],
    );
    return { ...tenant, userId: user.userId, session: user.token };
  }

  /** Runs `work` as dialer_app in one transaction with app.tenant_id set (or not), then rolls back. */
  async function inTenantTx<T>(tenantId: string | null, work: () => Promise<T>): Promise<T> {
    await asApp.query('BEGIN');
    try {
      if (tenantId !== null) await asApp.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenantId]);
      return await work();
    } finally {
      await asApp.query('ROLLBACK');
    }
  }

  const count = async (sql: string, params: unknown[] = []) => Number((await asApp.query<{ n: string }>(sql, params)).rows[0]!.n);
  const ownerCount = async (sql: string, params: unknown[] = []) => Number((await owner.query<{ n: string }>(sql, params)).rows[0]!.n);

  beforeAll(async () => {
    app = await startTestApp();
    owner = await connect(app.config.ownerDatabaseUrl);
    asApp = await connect(app.config.appDatabaseUrl);
    a = await seed();
    b = await seed();
    const { rows } = await owner.query<{ table_name: string }>(
      `SELECT c.table_name FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = 'public' AND c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE'
        ORDER BY 1`,
    );
    tenantTables = rows.map((r) => r.table_name);
  });

  afterAll(async () => {
    await asApp?.end();
    await owner?.end();
    await app?.close();
  });

  it('connects as the dialer_app role', async () => {
    const { rows } = await asApp.query<{ current_user: string; session_user: string }>('SELECT current_user, session_user');
    expect(rows[0]).toEqual({ current_user: 'dialer_app', session_user: 'dialer_app' });
  });

  it('has rows of both tenants in every foundation tenant table (the proofs below are not vacuous)', async () => {
    expect(tenantTables).toEqual(expect.arrayContaining(FOUNDATION_TENANT_TABLES));
    for (const table of FOUNDATION_TENANT_TABLES) {
      for (const t of [a, b]) {
        const n = await ownerCount(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1`, [t.tenantId]);
        expect({ table, seeded: n > 0 }).toEqual({ table, seeded: true });
      }
    }
  });

  it('a transaction without the tenant setting sees zero rows in every tenant table', async () => {
    await inTenantTx(null, async () => {
      for (const table of [...tenantTables, 'tenants']) {
        expect({ table, n: await count(`SELECT count(*) AS n FROM ${table}`) }).toEqual({ table, n: 0 });
      }
    });
  });

  it('an empty tenant setting also sees zero rows, and a non-UUID one fails closed', async () => {
    await inTenantTx('', async () => {
      for (const table of [...tenantTables, 'tenants']) {
        expect({ table, n: await count(`SELECT count(*) AS n FROM ${table}`) }).toEqual({ table, n: 0 });
      }
    });
    await inTenantTx(null, async () => {
      await asApp.query(`SELECT set_config('app.tenant_id', 'not-a-uuid', true)`);
      const err = await pgError(asApp.query('SELECT count(*) FROM users'));
      expect(err.code).toBe('22P02'); // invalid_text_representation: no rows, an error
    });
  });

  it('with tenant A set, exactly A’s rows are visible and none of B’s', async () => {
    await inTenantTx(a.tenantId, async () => {
      for (const table of tenantTables) {
        const mine = await ownerCount(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1`, [a.tenantId]);
        expect({ table, visible: await count(`SELECT count(*) AS n FROM ${table}`) }).toEqual({ table, visible: mine });
        expect({ table, foreign: await count(`SELECT count(*) AS n FROM ${table} WHERE tenant_id <> $1`, [a.tenantId]) }).toEqual({
          table,
          foreign: 0,
        });
      }
      const { rows } = await asApp.query<{ id: string }>('SELECT id FROM tenants');
      expect(rows).toEqual([{ id: a.tenantId }]);
      expect(await count('SELECT count(*) AS n FROM tenants WHERE id = $1', [b.tenantId])).toBe(0);
      expect(await count('SELECT count(*) AS n FROM users WHERE id = $1', [b.userId])).toBe(0);
      expect(await count('SELECT count(*) AS n FROM agents WHERE id = $1', [b.adminAgentId])).toBe(0);
    });
  });

  it('with tenant A set, UPDATE of B’s rows affects nothing', async () => {
    await inTenantTx(a.tenantId, async () => {
      expect((await asApp.query(`UPDATE tenants SET name = 'hijacked' WHERE id = $1`, [b.tenantId])).rowCount).toBe(0);
      expect((await asApp.query(`UPDATE users SET status = 'disabled' WHERE id = $1`, [b.userId])).rowCount).toBe(0);
      expect((await asApp.query(`UPDATE api_keys SET revoked_at = now() WHERE tenant_id = $1`, [b.tenantId])).rowCount).toBe(0);
      expect((await asApp.query(`UPDATE user_sessions SET revoked_at = now() WHERE tenant_id = $1`, [b.tenantId])).rowCount).toBe(0);
      expect((await asApp.query(`UPDATE agents SET name = 'x' WHERE tenant_id = $1`, [b.tenantId])).rowCount).toBe(0);
      // A statement without a WHERE clause reaches only A's rows.
      const all = await asApp.query(`UPDATE agents SET name = name`);
      expect(all.rowCount).toBe(await ownerCount('SELECT count(*) AS n FROM agents WHERE tenant_id = $1', [a.tenantId]));
    });
    // B is untouched.
    expect((await owner.query('SELECT name FROM tenants WHERE id = $1', [b.tenantId])).rows[0].name).toBe(b.name);
    expect((await owner.query('SELECT status FROM users WHERE id = $1', [b.userId])).rows[0].status).toBe('active');
  });

  it('with tenant A set, writing a row into B is refused by WITH CHECK', async () => {
    const attempts: [string, unknown[]][] = [
      [`INSERT INTO api_keys (tenant_id, label, token_hash) VALUES ($1, 'evil', $2)`, [b.tenantId, `rls-${randomUUID()}`]],
      [`INSERT INTO agents (tenant_id, name, email) VALUES ($1, 'evil', 'evil@example.com')`, [b.tenantId]],
      [`INSERT INTO audit_log (tenant_id, actor_type, action, seq, prev_hash, hash) VALUES ($1, 'system', 'evil', 0, '', '')`, [b.tenantId]],
      [`INSERT INTO mail_outbox (tenant_id, to_address, subject, body_ciphertext, kind) VALUES ($1, 'a', 'b', 'c', 'd')`, [b.tenantId]],
      [`INSERT INTO tenants (id, account_id, name) VALUES ($1, $2, $3)`, [randomUUID(), randomUUID(), `rls-${randomUUID()}`]],
      // Moving an own row into B.
      [`UPDATE agents SET tenant_id = $1 WHERE tenant_id = $2`, [b.tenantId, a.tenantId]],
      [`UPDATE api_keys SET tenant_id = $1 WHERE tenant_id = $2`, [b.tenantId, a.tenantId]],
      [`UPDATE tenants SET id = $1 WHERE id = $2`, [randomUUID(), a.tenantId]],
    ];
    for (const [sql, params] of attempts) {
      await inTenantTx(a.tenantId, async () => {
        const err = await pgError(asApp.query(sql, params));
        expect({ sql, code: err.code }).toEqual({ sql, code: '42501' });
        expect(err.message).toMatch(/row-level security/);
      });
    }
  });

  it('writing with no tenant set is refused too', async () => {
    await inTenantTx(null, async () => {
      const err = await pgError(
        asApp.query(`INSERT INTO api_keys (tenant_id, label, token_hash) VALUES ($1, 'x', $2)`, [a.tenantId, `rls-${randomUUID()}`]),
      );
      expect(err.code).toBe('42501');
    });
  });

  it('the setting is local to the transaction: the next transaction on the same connection sees nothing', async () => {
    await asApp.query('BEGIN');
    await asApp.query(`SELECT set_config('app.tenant_id', $1, true)`, [a.tenantId]);
    expect(await count('SELECT count(*) AS n FROM users')).toBeGreaterThan(0);
    await asApp.query('COMMIT');
    expect(await count('SELECT count(*) AS n FROM users')).toBe(0);
    expect((await asApp.query(`SELECT coalesce(current_setting('app.tenant_id', true), '') AS v`)).rows[0].v).toBe('');
  });

  it('every table with a tenant_id column (and tenants) has ENABLE + FORCE row-level security and a tenant policy', async () => {
    expect(tenantTables.length).toBeGreaterThanOrEqual(FOUNDATION_TENANT_TABLES.length);
    const { rows } = await owner.query<{ table: string; rls: boolean; forced: boolean; policies: string; tenant_policies: string }>(
      `SELECT c.relname AS table, c.relrowsecurity AS rls, c.relforcerowsecurity AS forced,
              (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies,
              (SELECT count(*) FROM pg_policies p WHERE p.schemaname = 'public' AND p.tablename = c.relname
                  AND p.qual LIKE '%app_tenant_id()%' AND coalesce(p.with_check, p.qual) LIKE '%app_tenant_id()%') AS tenant_policies
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relname = ANY($1::text[])
        ORDER BY 1`,
      [[...tenantTables, 'tenants']],
    );
    expect(rows.map((r) => r.table).sort()).toEqual([...tenantTables, 'tenants'].sort());
    for (const r of rows) {
      expect({ table: r.table, rls: r.rls, forced: r.forced }).toEqual({ table: r.table, rls: true, forced: true });
      expect({ table: r.table, policies: Number(r.policies) > 0, tenant: Number(r.tenant_policies) > 0 }).toEqual({
        table: r.table,
        policies: true,
        tenant: true,
      });
    }
  });

  it('no tenant-table policy is permissive for everyone (USING true)', async () => {
    const { rows } = await owner.query(
      `SELECT tablename, policyname, qual FROM pg_policies
        WHERE schemaname = 'public' AND tablename = ANY($1::text[]) AND (qual IS NULL OR qual = 'true')`,
      [[...tenantTables, 'tenants']],
    );
    expect(rows).toEqual([]);
  });

  it('dialer_app is not superuser, cannot bypass RLS (directly or through a role) and owns nothing', async () => {
    const role = await owner.query(`SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = 'dialer_app'`);
    expect(role.rows).toEqual([{ rolsuper: false, rolbypassrls: false, rolcreaterole: false, rolcreatedb: false }]);
    const powerful = await owner.query(
      `SELECT r.rolname FROM pg_roles r
        WHERE pg_has_role('dialer_app', r.oid, 'MEMBER') AND (r.rolsuper OR r.rolbypassrls)`,
    );
    expect(powerful.rows).toEqual([]);
    const owned = await owner.query(
      `SELECT 'relation' AS kind, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND pg_has_role('dialer_app', c.relowner, 'MEMBER')
       UNION ALL
       SELECT 'function', p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND pg_has_role('dialer_app', p.proowner, 'MEMBER')
       UNION ALL
       SELECT 'type', t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public' AND pg_has_role('dialer_app', t.typowner, 'MEMBER')
       UNION ALL
       SELECT 'schema', n.nspname FROM pg_namespace n WHERE n.nspname = 'public' AND pg_has_role('dialer_app', n.nspowner, 'MEMBER')`,
    );
    expect(owned.rows).toEqual([]);
    // And it cannot take the owner's identity.
    const err = await pgError(asApp.query('SET ROLE dialer_owner'));
    expect(err.code).toBe('42501');
    // The same facts as seen by the connected role itself.
    const self = await asApp.query(`SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`);
    expect(self.rows).toEqual([{ rolsuper: false, rolbypassrls: false }]);
  });

  it('dialer_app cannot create objects in the schema (it could not own a table without RLS)', async () => {
    const err = await pgError(asApp.query('CREATE TABLE rls_probe (id int)'));
    expect(err.code).toBe('42501');
    // Nor read or rewrite the migration history.
    expect((await pgError(asApp.query('SELECT count(*) FROM _prisma_migrations'))).code).toBe('42501');
  });

  it('the evidence tables grant dialer_app no DELETE (and no TRUNCATE anywhere)', async () => {
    for (const table of [...FOUNDATION_TENANT_TABLES, 'tenants']) {
      const { rows } = await owner.query(
        `SELECT has_table_privilege('dialer_app', $1, 'DELETE') AS del, has_table_privilege('dialer_app', $1, 'TRUNCATE') AS trunc`,
        [table],
      );
      expect({ table, ...rows[0] }).toEqual({ table, del: false, trunc: false });
    }
  });

  it('dialer_app cannot UPDATE, DELETE or TRUNCATE audit_log, even for its own tenant', async () => {
    for (const sql of [
      `UPDATE audit_log SET payload = '{}'::jsonb WHERE tenant_id = '${a.tenantId}'`,
      `DELETE FROM audit_log WHERE tenant_id = '${a.tenantId}'`,
      'TRUNCATE audit_log',
    ]) {
      await inTenantTx(a.tenantId, async () => {
        const err = await pgError(asApp.query(sql));
        expect({ sql, code: err.code }).toEqual({ sql, code: '42501' });
        expect(err.message).toMatch(/permission denied/);
      });
    }
  });

  it('even the owner (superuser and dialer_owner) is refused UPDATE, DELETE and TRUNCATE on audit_log by the trigger', async () => {
    const before = await ownerCount('SELECT count(*) AS n FROM audit_log WHERE tenant_id = $1', [a.tenantId]);
    for (const role of [null, 'dialer_owner']) {
      for (const sql of [
        `UPDATE audit_log SET payload = '{"tampered":true}'::jsonb WHERE tenant_id = '${a.tenantId}'`,
        `DELETE FROM audit_log WHERE tenant_id = '${a.tenantId}'`,
        'TRUNCATE audit_log',
      ]) {
        await owner.query('BEGIN');
        try {
          if (role) await owner.query(`SET LOCAL ROLE ${role}`);
          const err = await pgError(owner.query(sql));
          expect({ role, sql, code: err.code }).toEqual({ role, sql, code: '42501' });
          expect(err.message).toMatch(/is not allowed: the table is append-only/);
        } finally {
          await owner.query('ROLLBACK');
        }
      }
    }
    expect(await ownerCount('SELECT count(*) AS n FROM audit_log WHERE tenant_id = $1', [a.tenantId])).toBe(before);
  });
});

describe('row-level security through the application', () => {
  let app: TestApp;
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  let bUser: { userId: string; token: string };

  beforeAll(async () => {
    app = await startTestApp();
    a = await provisionTenant(app);
    b = await provisionTenant(app);
    bUser = await createUserSession(app, b);
    await createUserSession(app, a);
  });
  afterAll(async () => {
    await app.close();
  });

  it('tenant A’s key never reads tenant B', async () => {
    const foreign = await app.request('GET', `/v1/tenants/${b.tenantId}`, { token: a.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    const unknown = await app.request('GET', `/v1/tenants/${randomUUID()}`, { token: a.apiKey });
    expect(foreign.body).toEqual(unknown.body);

    const own = await app.request('GET', `/v1/tenants/${a.tenantId}`, { token: a.apiKey });
    expect(own.status).toBe(200);
    expect(own.body.tenant.id).toBe(a.tenantId);

    const list = await app.request('GET', '/v1/tenants', { token: a.apiKey });
    expect(list.body.tenants.map((t: { id: string }) => t.id)).toEqual([a.tenantId]);

    const me = await app.request('GET', '/v1/me', { token: a.apiKey });
    expect(me.body.tenant.id).toBe(a.tenantId);
  });

  it('lists never include another tenant’s rows and foreign ids are 404', async () => {
    const users = await app.request('GET', '/v1/users', { token: a.apiKey });
    expect(users.status).toBe(200);
    expect(users.body.users.length).toBeGreaterThan(0);
    expect(users.body.users.map((u: { id: string }) => u.id)).not.toContain(bUser.userId);

    const disable = await app.request('DELETE', `/v1/users/${bUser.userId}`, { token: a.apiKey });
    expect(disable.status).toBe(404);
    // B's user is still active: B's session still works.
    const bMe = await app.request('GET', '/v1/me', { token: bUser.token });
    expect(bMe.status).toBe(200);
    expect(bMe.body.user.status).toBe('active');
  });

  it('withTenant scopes Prisma to one tenant and pooled connections never carry the setting', async () => {
    const db = app.deps.db;
    const seen = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const t = i % 2 ? a : b;
        return withTenant(db, t.tenantId, async (tx) => ({ t: t.tenantId, ids: (await tx.tenant.findMany({ select: { id: true } })).map((r) => r.id) }));
      }),
    );
    for (const s of seen) expect(s.ids).toEqual([s.t]);
    // Outside withTenant: nothing, on every pooled connection.
    const outside = await Promise.all(
      Array.from({ length: 40 }, () =>
        db.pool.query<{ n: string; setting: string | null }>(
          `SELECT (SELECT count(*) FROM users) AS n, current_setting('app.tenant_id', true) AS setting`,
        ),
      ),
    );
    for (const r of outside) {
      expect(Number(r.rows[0]!.n)).toBe(0);
      expect(r.rows[0]!.setting ?? '').toBe('');
    }
    expect(await db.prisma.user.count()).toBe(0);
  });

  it('withTenant refuses a tenant id that is not a UUID', async () => {
    await expect(withTenant(app.deps.db, "x' OR true --", () => Promise.resolve(1))).rejects.toThrow(/not a UUID/);
  });
});
