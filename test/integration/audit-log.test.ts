import { createHash, randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { Client } from 'pg';
import { PrismaClient } from '../../prisma/generated/client';
import { appendAudit, AUDIT_GENESIS_HASH, canonicalAuditText, linkOf, verifyAuditChain, type ChainRow } from '../../src/lib/audit';
import { withTenant } from '../../src/lib/tenancy';
import { provisionTenant, startTestApp, type TestApp } from '../helpers/harness';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const CHAIN_SQL = `
  SELECT tenant_id::text, lane::text, seq::text, prev_hash,
         to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at,
         actor_type, actor_id, action, subject_type, subject_id, payload::text AS payload_text, hash,
         audit_log_canonical(tenant_id, lane, seq, prev_hash, occurred_at, actor_type, actor_id, action,
                             subject_type, subject_id, payload) AS sql_canonical
    FROM audit_log WHERE tenant_id = $1 ORDER BY audit_log.lane, audit_log.seq`;

/** The lane of entries about the tenant itself (tenant.created and every test append below). */
const TENANT_LANE = `audit_lane('tenant', tenant_id::text)`;

type Row = ChainRow & { sql_canonical: string };

describe('audit log hash chain', () => {
  let app: TestApp;
  let owner: Client;
  let ownerPrisma: PrismaClient;

  const chain = async (tenantId: string) => (await owner.query<Row>(CHAIN_SQL, [tenantId])).rows;
  const verify = (tenantId: string) => withTenant(app.deps.db, tenantId, (tx) => verifyAuditChain(tx, tenantId));
  /** Appends about the tenant itself, so every test entry shares tenant.created's lane. */
  const append = (tenantId: string, action: string, payload: Record<string, unknown> = {}) =>
    withTenant(app.deps.db, tenantId, (tx) =>
      appendAudit(tx, tenantId, { actorType: 'system', actorId: null, action, subjectType: 'tenant', subjectId: tenantId, payload }),
    );

  /** Each lane is its own chain: seq 1..n, each prev_hash the hash before it in the lane. */
  function expectLinked(rows: Row[]) {
    expect(rows.length).toBeGreaterThan(0);
    const lanes = new Map<string, Row[]>();
    for (const row of rows) lanes.set(row.lane, [...(lanes.get(row.lane) ?? []), row]);
    for (const laneRows of lanes.values()) expectLaneLinked(laneRows);
  }

  function expectLaneLinked(rows: Row[]) {
    rows.forEach((row, i) => {
      expect(row.seq).toBe(String(i + 1));
      expect(row.prev_hash).toBe(i === 0 ? AUDIT_GENESIS_HASH : rows[i - 1]!.hash);
      expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
      // The TypeScript mirror of the canonical text is byte-identical to the SQL one, and hashes to the stored hash.
      const { sql_canonical, hash, ...fields } = row;
      expect(canonicalAuditText(linkOf(fields))).toBe(sql_canonical);
      expect(sha256(canonicalAuditText(linkOf(fields)))).toBe(hash);
    });
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = new Client({ connectionString: app.config.ownerDatabaseUrl });
    await owner.connect();
    ownerPrisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: app.config.ownerDatabaseUrl, max: 2 }) });
  });
  afterAll(async () => {
    await ownerPrisma?.$disconnect();
    await owner?.end();
    await app?.close();
  });

  it('links every entry to the previous one, seq 1..n, and verifies', async () => {
    const tenant = await provisionTenant(app); // seq 1: tenant.created
    const created = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, body: { label: 'audited' } });
    expect(created.status).toBe(201);
    const payloads: Record<string, unknown>[] = [
      {},
      { b: 2, a: 1, nested: { z: [1, 2, { y: null }], x: 'ü' } },
      { text: 'Ñandú 😀 "quoted" \\ back\nslash', big: 9007199254740991, small: 1e-7, neg: -0.5, t: true, f: false },
      { 'key with spaces': '', '': 'empty key' },
    ];
    for (const [i, payload] of payloads.entries()) await append(tenant.tenantId, `test.entry_${i}`, payload);

    const rows = await chain(tenant.tenantId);
    const tenantLane = rows.find((r) => r.action === 'tenant.created')!.lane;
    // Sixteen lanes hashed from the subject: the API key's entries share the tenant's lane one time in sixteen.
    const aboutTenant = rows.filter((r) => r.subject_type === 'tenant');
    expect(aboutTenant.every((r) => r.lane === tenantLane)).toBe(true);
    expect(aboutTenant.map((r) => r.action)).toEqual([
      'tenant.created',
      'test.entry_0',
      'test.entry_1',
      'test.entry_2',
      'test.entry_3',
    ]);
    const keyRow = rows.find((r) => r.action === 'api_key.created')!;
    expect(keyRow.lane).toBe((await owner.query(`SELECT audit_lane('api_key', $1)::text AS l`, [created.body.api_key.id])).rows[0].l);
    expectLinked(rows);
    expect(rows.filter((r) => r.seq === '1').every((r) => r.prev_hash === '0'.repeat(64))).toBe(true);
    await expect(verify(tenant.tenantId)).resolves.toEqual({ rows: rows.length, brokenAt: null });
  });

  it('verifies a chain of more than nine entries in numeric seq order', async () => {
    const tenant = await provisionTenant(app);
    for (let i = 0; i < 11; i++) await append(tenant.tenantId, `test.long_${i}`);
    const rows = await chain(tenant.tenantId);
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));
    expectLinked(rows);
    await expect(verify(tenant.tenantId)).resolves.toEqual({ rows: 12, brokenAt: null });
  });

  it('appendAudit returns the database-computed link', async () => {
    const tenant = await provisionTenant(app);
    const record = await append(tenant.tenantId, 'test.returned');
    const rows = await chain(tenant.tenantId);
    const last = rows[rows.length - 1]!;
    expect(record.seq).toBe(BigInt(last.seq));
    expect(record.hash).toBe(last.hash);
    expect(record.prevHash).toBe(last.prev_hash);
    expect(record.occurredAt.toISOString()).toBe(last.occurred_at);
  });

  it('ignores seq, prev_hash and hash supplied by the writer', async () => {
    const tenant = await provisionTenant(app);
    const asApp = new Client({ connectionString: app.config.appDatabaseUrl });
    await asApp.connect();
    try {
      await asApp.query('BEGIN');
      await asApp.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenant.tenantId]);
      await asApp.query(
        `INSERT INTO audit_log (tenant_id, lane, seq, actor_type, action, subject_type, subject_id, prev_hash, hash, occurred_at)
         VALUES ($1::uuid, (audit_lane('tenant', $4::text) + 1) % 16, 999, 'system', 'test.forged', 'tenant', $4::text, $2, $3, '2020-01-01T00:00:00.123456Z')`,
        [tenant.tenantId, 'f'.repeat(64), 'e'.repeat(64), tenant.tenantId],
      );
      await asApp.query('COMMIT');
    } finally {
      await asApp.end();
    }
    const rows = await chain(tenant.tenantId);
    expect(rows.map((r) => r.seq)).toEqual(['1', '2']);
    expect(rows[1]!.lane).toBe(rows[0]!.lane); // the writer's lane was ignored too
    expect(rows[1]!.hash).not.toBe('e'.repeat(64));
    expect(rows[1]!.occurred_at).toBe('2020-01-01T00:00:00.123Z'); // truncated to the hashed precision
    expectLinked(rows);
    await expect(verify(tenant.tenantId)).resolves.toEqual({ rows: 2, brokenAt: null });
  });

  it('keeps the chains of two tenants independent', async () => {
    const a = await provisionTenant(app);
    const b = await provisionTenant(app);
    for (let i = 0; i < 4; i++) {
      await append(a.tenantId, `test.a_${i}`);
      await append(b.tenantId, `test.b_${i}`);
    }
    const rowsA = await chain(a.tenantId);
    const rowsB = await chain(b.tenantId);
    expect(rowsA.map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5']);
    expect(rowsB.map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5']);
    expectLinked(rowsA);
    expectLinked(rowsB);
    expect(rowsA.every((r) => r.tenant_id === a.tenantId)).toBe(true);
    // No hash of one chain appears in the other: the tenant id is hashed into every link.
    const hashesA = new Set(rowsA.map((r) => r.hash));
    expect(rowsB.some((r) => hashesA.has(r.hash) || hashesA.has(r.prev_hash))).toBe(false);
    // A tenant's verification reads only its own chain (RLS), and a chain of another tenant is invisible to it.
    await expect(verify(a.tenantId)).resolves.toEqual({ rows: 5, brokenAt: null });
    await expect(withTenant(app.deps.db, a.tenantId, (tx) => verifyAuditChain(tx, b.tenantId))).resolves.toEqual({ rows: 0, brokenAt: null });
  });

  it('gives concurrent appends to one tenant gapless, unique seqs', async () => {
    const tenant = await provisionTenant(app);
    const N = 40;
    const records = await Promise.all(Array.from({ length: N }, (_, i) => append(tenant.tenantId, `test.concurrent_${i}`, { i })));
    const seqs = records.map((r) => Number(r.seq)).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: N }, (_, i) => i + 2));
    const rows = await chain(tenant.tenantId);
    expect(rows).toHaveLength(N + 1);
    expectLinked(rows);
    await expect(verify(tenant.tenantId)).resolves.toEqual({ rows: N + 1, brokenAt: null });
  });

  it('keeps two tenants’ concurrent appends apart', async () => {
    const a = await provisionTenant(app);
    const b = await provisionTenant(app);
    await Promise.all(Array.from({ length: 30 }, (_, i) => append(i % 2 ? a.tenantId : b.tenantId, `test.mixed_${i}`)));
    for (const t of [a, b]) {
      const rows = await chain(t.tenantId);
      expect(rows).toHaveLength(16);
      expectLinked(rows);
    }
  });

  it('gives entries about different subjects independent lanes, fixed by the subject', async () => {
    const tenant = await provisionTenant(app);
    const subjects = Array.from({ length: 24 }, () => randomUUID());
    await Promise.all(
      subjects.map((id) =>
        withTenant(app.deps.db, tenant.tenantId, (tx) => appendAudit(tx, tenant.tenantId, { actorType: 'system', action: 'test.lane', subjectType: 'debt', subjectId: id })),
      ),
    );
    for (const id of subjects) {
      await withTenant(app.deps.db, tenant.tenantId, (tx) => appendAudit(tx, tenant.tenantId, { actorType: 'system', action: 'test.lane_again', subjectType: 'debt', subjectId: id }));
    }
    const rows = await chain(tenant.tenantId);
    const lanes = new Set(rows.map((r) => r.lane));
    expect(lanes.size).toBeGreaterThan(4);
    for (const id of subjects) {
      const about = rows.filter((r) => r.subject_id === id);
      expect(about).toHaveLength(2);
      expect(about[0]!.lane).toBe(about[1]!.lane);
      const expected = (await owner.query(`SELECT audit_lane('debt', $1)::text AS l`, [id])).rows[0].l;
      expect(about[0]!.lane).toBe(expected);
    }
    expectLinked(rows);
    await expect(verify(tenant.tenantId)).resolves.toEqual({ rows: rows.length, brokenAt: null });
  });

  it('does not record an entry whose transaction rolls back (and leaves no gap)', async () => {
    const tenant = await provisionTenant(app);
    await expect(
      withTenant(app.deps.db, tenant.tenantId, async (tx) => {
        await appendAudit(tx, tenant.tenantId, { actorType: 'system', action: 'test.rolled_back', subjectType: 'tenant', subjectId: tenant.tenantId });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await append(tenant.tenantId, 'test.after_rollback');
    const rows = await chain(tenant.tenantId);
    expect(rows.map((r) => [r.seq, r.action])).toEqual([
      ['1', 'tenant.created'],
      ['2', 'test.after_rollback'],
    ]);
    expectLinked(rows);
  });

  describe('tampering detection (owner, trigger disabled, rolled back)', () => {
    class Rollback extends Error {}

    /** In one owner transaction: disable the append-only trigger, tamper, verify, roll back. */
    async function tamperAndVerify(tenantId: string, tamper: string, params: unknown[]) {
      let result: { rows: number; brokenAt: { lane: string; seq: string } | null } | undefined;
      await expect(
        ownerPrisma.$transaction(async (tx) => {
          await tx.$executeRawUnsafe('ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only');
          const changed = await tx.$executeRawUnsafe(tamper, ...params);
          expect(changed).toBe(1);
          result = await verifyAuditChain(tx, tenantId);
          throw new Rollback();
        }),
      ).rejects.toBeInstanceOf(Rollback);
      return result!;
    }

    let tenantId: string;
    let rows: Row[];
    const at = (seq: string) => ({ lane: rows[0]!.lane, seq });

    beforeAll(async () => {
      const tenant = await provisionTenant(app);
      tenantId = tenant.tenantId;
      for (let i = 0; i < 5; i++) await append(tenantId, `test.tamper_${i}`, { amount_cents: 1000 * i, note: `entry ${i}` });
      rows = await chain(tenantId);
      expect(rows).toHaveLength(6);
    });

    afterEach(async () => {
      // Everything was rolled back: the trigger is on again and the chain is intact.
      const trig = await owner.query(`SELECT tgenabled FROM pg_trigger WHERE tgname = 'audit_log_append_only'`);
      expect(trig.rows).toEqual([{ tgenabled: 'O' }]);
      expect((await chain(tenantId)).map((r) => r.hash)).toEqual(rows.map((r) => r.hash));
      await expect(verify(tenantId)).resolves.toEqual({ rows: 6, brokenAt: null });
    });

    it('finds a changed payload', async () => {
      const result = await tamperAndVerify(
        tenantId,
        `UPDATE audit_log SET payload = jsonb_set(payload, '{amount_cents}', '1') WHERE tenant_id = $1::uuid AND lane = ${TENANT_LANE} AND seq = 4`,
        [tenantId],
      );
      expect(result).toEqual({ rows: 6, brokenAt: at('4') });
    });

    it('finds a changed actor, action or time', async () => {
      for (const [column, value] of [
        ['actor_id', "'someone-else'"],
        ['action', "'test.innocent'"],
        ['occurred_at', "occurred_at - interval '1 second'"],
        ['subject_id', 'NULL'],
      ]) {
        const result = await tamperAndVerify(tenantId, `UPDATE audit_log SET ${column} = ${value} WHERE tenant_id = $1::uuid AND lane = ${TENANT_LANE} AND seq = 3`, [tenantId]);
        expect({ column, result }).toEqual({ column, result: { rows: 6, brokenAt: at('3') } });
      }
    });

    it('finds a recomputed hash (the next link no longer matches)', async () => {
      // A forger who rewrites row 2 and recomputes its own hash still breaks row 3's prev_hash.
      const result = await tamperAndVerify(
        tenantId,
        `UPDATE audit_log SET payload = '{"forged":true}'::jsonb,
                hash = encode(sha256(convert_to(audit_log_canonical(tenant_id, lane, seq, prev_hash, occurred_at, actor_type, actor_id,
                  action, subject_type, subject_id, '{"forged":true}'::jsonb), 'UTF8')), 'hex')
          WHERE tenant_id = $1::uuid AND lane = ${TENANT_LANE} AND seq = 2`,
        [tenantId],
      );
      expect(result).toEqual({ rows: 6, brokenAt: at('3') });
    });

    it('finds a deleted entry', async () => {
      const result = await tamperAndVerify(tenantId, `DELETE FROM audit_log WHERE tenant_id = $1::uuid AND lane = ${TENANT_LANE} AND seq = 5`, [tenantId]);
      expect(result).toEqual({ rows: 5, brokenAt: at('6') });
    });

    it('finds a broken genesis link', async () => {
      const result = await tamperAndVerify(tenantId, `UPDATE audit_log SET prev_hash = repeat('1', 64) WHERE tenant_id = $1::uuid AND lane = ${TENANT_LANE} AND seq = 1`, [tenantId]);
      expect(result).toEqual({ rows: 6, brokenAt: at('1') });
    });
  });
});
