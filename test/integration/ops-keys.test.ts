import { createCipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { ROOT_DIR } from '../../src/config';
import { CryptoBox, encryptionKeyId, sealedKeyId } from '../../src/lib/crypto-box';
import { withTenantSql } from '../../src/lib/tenancy';
import type { OpsContext } from '../../src/ops/context';
import { ENCRYPTED_FIELDS, fieldName } from '../../src/ops/keys.fields';
import { ciphertextColumns } from '../../src/ops/keys.repository';
import { runCli } from '../../src/ops/program';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';
import { provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

/**
 * `npm run ops -- keys rotate` end to end: values written by an API under the old key, the API
 * restarted with a new current key and the old one as previous (both read), the command run
 * through the parser, and every value read back under the new key alone. The rotation reaches
 * every tenant's rows, so the file runs on a database of its own.
 */

const OLD = 'rotation-old-key';
const NEW = 'rotation-new-key';
const HOOK_ORIGIN = 'https://hooks.rotation.example';

let database: PrivateDatabase | undefined;
let before: TestApp | undefined;
let after: TestApp | undefined;
let owner: Client;
let tenant: ProvisionedTenant;

/** Every value planted, by field name and row id: what it must still read after the rotation. */
const planted = new Map<string, Map<string, string>>();
const plant = (field: string, id: string, plaintext: string) => planted.set(field, (planted.get(field) ?? new Map()).set(id, plaintext));

async function cli(app: TestApp, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: OpsContext = { deps: app.deps, temporal: app.deps.temporal!, actor: 'sre', close: () => Promise.resolve() };
  const code = await runCli(argv, { io: { out: (s) => out.push(s), err: (s) => err.push(s) }, context: () => Promise.resolve(ctx), staleSeconds: 900 });
  return { code, out: out.join(''), err: err.join('') };
}

/** A ciphertext exactly as CryptoBox wrote it before key ids (v1, SHA-256 of the secret, no associated data). */
function legacySeal(secret: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(secret, 'utf8').digest(), iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

/** The stored value of every planted row, by field. */
async function storedValues(): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  for (const f of ENCRYPTED_FIELDS) {
    const expr = f.path ? `${f.column} #>> '{${f.path.join(',')}}'` : f.column;
    const { rows } = await owner.query<{ id: string; v: string }>(`SELECT id::text AS id, ${expr} AS v FROM ${f.table} WHERE ${expr} IS NOT NULL`);
    out.set(fieldName(f), new Map(rows.map((r) => [r.id, r.v])));
  }
  return out;
}

beforeAll(async () => {
  database = await privateDatabase('keys');
  owner = new Client({ connectionString: database.url });
  await owner.connect();
  before = await startTestApp({ DATABASE_URL: database.url, APP_ENCRYPTION_KEY: OLD, EGRESS_ALLOWLIST: HOOK_ORIGIN });
  tenant = await provisionTenant(before);
  const box = before.deps.box;

  // Through the API: a webhook endpoint whose secret was rotated (current and previous secrets), and
  // debts imported with right-party verification data.
  const hook = await before.request('POST', '/v1/webhooks', { token: tenant.apiKey, body: { url: `${HOOK_ORIGIN}/in`, events: ['call.ended'] } });
  expect(hook.status).toBe(201);
  const hookId = hook.body.webhook.id as string;
  expect((await before.request('POST', `/v1/webhooks/${hookId}/rotate-secret`, { token: tenant.apiKey })).status).toBe(200);
  const debts = Array.from({ length: 5 }, (_, i) => ({ external_ref: uniqueName('ext'), consumer_ref: `c${i}`, dob: `1960-01-1${i}`, ssn_last4: `123${i}`, pin: `9876${i}` }));
  expect((await before.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts } })).body).toMatchObject({ imported: 5, failed: [] });
  const debtRows = (await owner.query<{ id: string; external_ref: string }>('SELECT id::text AS id, external_ref FROM debts WHERE tenant_id = $1', [tenant.tenantId])).rows;
  for (const d of debtRows) {
    const src = debts.find((x) => x.external_ref === d.external_ref)!;
    plant('debts.verify_dob_ciphertext', d.id, src.dob);
    plant('debts.verify_ssn_last4_ciphertext', d.id, src.ssn_last4);
    plant('debts.verify_pin_ciphertext', d.id, src.pin);
  }

  // Rows whose writers need a call, an agent's check-in or an AI conversation: planted as those
  // writers store them (CryptoBox under the old key), as existing data a rotation finds.
  const debtId = debtRows[0]!.id;
  const note = 'promised to pay on Friday';
  const attempt = await owner.query<{ id: string }>(
    `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, disposition, note_ciphertext)
     VALUES ($1, $2, 'c0', 'k', '+15551230000', 'promise_to_pay', $3) RETURNING id::text AS id`,
    [tenant.tenantId, debtId, box.encrypt(note)],
  );
  plant('call_attempts.note_ciphertext', attempt.rows[0]!.id, note);
  const sip = await owner.query<{ id: string }>(
    `INSERT INTO agent_sip_credentials (tenant_id, agent_id, username, password_ciphertext, expires_at)
     VALUES ($1, $2, $3, $4, now() + interval '1 hour') RETURNING id::text AS id`,
    [tenant.tenantId, tenant.adminAgentId, `sip-${randomUUID().slice(0, 8)}`, box.encrypt('sip-password-1')],
  );
  plant('agent_sip_credentials.password_ciphertext', sip.rows[0]!.id, 'sip-password-1');
  const provider = await owner.query<{ id: string }>(
    `INSERT INTO sms_providers (account_id, tenant_id, adapter, region, name, webhook_secret_ciphertext, api_key_ciphertext)
     SELECT account_id, id, 'mock', 'us', 'rotation', $2, $3 FROM tenants WHERE id = $1 RETURNING id::text AS id`,
    [tenant.tenantId, box.encrypt('whsec-1'), box.encrypt('api-key-1')],
  );
  plant('sms_providers.webhook_secret_ciphertext', provider.rows[0]!.id, 'whsec-1');
  plant('sms_providers.api_key_ciphertext', provider.rows[0]!.id, 'api-key-1');
  const agent = await owner.query<{ id: string }>(
    `INSERT INTO ai_agents (tenant_id, name, voice, disclosure_text, policy, handoff_rules) VALUES ($1, 'ai', '{}', 'I am an AI', '{}', '{}') RETURNING id::text AS id`,
    [tenant.tenantId],
  );
  const conversation = await owner.query<{ id: string }>(
    `INSERT INTO ai_conversations (tenant_id, ai_agent_id, policy_version, kind, engine_state)
     VALUES ($1, $2, 1, 'sandbox', $3::jsonb) RETURNING id::text AS id`,
    [tenant.tenantId, agent.rows[0]!.id, JSON.stringify({ turn: 1, state: { phase: 'verify', verification: { factor: 'dob', expected: box.encrypt('1960-01-10') } } })],
  );
  plant('ai_conversations.engine_state#>{state,verification,expected}', conversation.rows[0]!.id, '1960-01-10');
  for (let i = 0; i < 3; i++) {
    const mail = await owner.query<{ id: string }>(
      `INSERT INTO mail_outbox (tenant_id, to_address, subject, body_ciphertext, kind) VALUES ($1, 'a@example.com', 's', $2, 'test') RETURNING id::text AS id`,
      [tenant.tenantId, i === 0 ? legacySeal(OLD, 'legacy body') : box.encrypt(`body ${i}`)],
    );
    plant('mail_outbox.body_ciphertext', mail.rows[0]!.id, i === 0 ? 'legacy body' : `body ${i}`);
  }
  const hookRow = (await owner.query<{ s: string; p: string }>('SELECT secret_ciphertext AS s, previous_secret_ciphertext AS p FROM webhook_endpoints WHERE id = $1', [hookId])).rows[0]!;
  plant('webhook_endpoints.secret_ciphertext', hookId, box.decrypt(hookRow.s));
  plant('webhook_endpoints.previous_secret_ciphertext', hookId, box.decrypt(hookRow.p));
  // Whatever else the API wrote under the old key on the way (a welcome mail, say) is rotated too.
  for (const [field, rows] of await storedValues()) {
    for (const [id, value] of rows) if (!planted.get(field)?.has(id)) plant(field, id, box.decrypt(value));
  }
  await before.close();
  before = undefined;

  // The API restarted with the new key current and the old one still reading.
  after = await startTestApp({ DATABASE_URL: database.url, APP_ENCRYPTION_KEY: NEW, APP_ENCRYPTION_KEYS_PREVIOUS: OLD, EGRESS_ALLOWLIST: HOOK_ORIGIN });
});

afterAll(async () => {
  await before?.close();
  await after?.close();
  await owner?.end();
  await database?.drop();
});

describe('keys rotate', () => {
  it('names every *_ciphertext column of the schema in its list of encrypted fields', async () => {
    const listed = ENCRYPTED_FIELDS.filter((f) => !f.path).map((f) => `${f.table}.${f.column}`);
    expect(listed).toEqual(expect.arrayContaining(await ciphertextColumns(owner)));
  });

  it('re-encrypts every field under the new key in batches, idempotently, while the old key reads', async () => {
    const oldId = encryptionKeyId(OLD);
    const newId = encryptionKeyId(NEW);
    // Every field holds something to rotate, and the API reads it through the previous key.
    expect([...planted.keys()].sort()).toEqual(ENCRYPTED_FIELDS.map(fieldName).sort());
    const stale = await storedValues();
    for (const [field, rows] of planted) {
      for (const [id, plaintext] of rows) {
        expect({ field, key: sealedKeyId(stale.get(field)!.get(id)!) }).toEqual({ field, key: field === 'mail_outbox.body_ciphertext' && plaintext === 'legacy body' ? null : oldId });
        expect(after!.deps.box.decrypt(stale.get(field)!.get(id)!)).toBe(plaintext);
      }
    }
    const status = JSON.parse((await cli(after!, 'keys', 'status', '--json')).out) as { field: string; key: string; current: boolean; count: number }[];
    expect(status).toContainEqual({ field: 'debts.verify_pin_ciphertext', key: oldId, current: false, count: 5 });
    expect(status).toContainEqual({ field: 'mail_outbox.body_ciphertext', key: 'v1', current: false, count: 1 });

    const run = await cli(after!, 'keys', 'rotate', '--batch-size', '2', '--json');
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' });
    const result = JSON.parse(run.out) as { current_key_id: string; fields: { field: string; rotated: number; unreadable: string[] }[] };
    expect(result.current_key_id).toBe(newId);
    for (const [field, rows] of planted) expect(result.fields.find((f) => f.field === field)).toMatchObject({ field, rotated: rows.size, unreadable: [] });

    // Everything opens under the new key alone, with the same plaintext.
    const newOnly = new CryptoBox(NEW);
    const rotated = await storedValues();
    for (const [field, rows] of planted) {
      for (const [id, plaintext] of rows) {
        const value = rotated.get(field)!.get(id)!;
        expect({ field, key: sealedKeyId(value) }).toEqual({ field, key: newId });
        expect(newOnly.decrypt(value)).toBe(plaintext);
      }
    }
    const statusAfter = JSON.parse((await cli(after!, 'keys', 'status', '--json')).out) as { key: string; current: boolean }[];
    expect(statusAfter.every((s) => s.current)).toBe(true);

    // A second run finds nothing to do and changes nothing.
    const again = JSON.parse((await cli(after!, 'keys', 'rotate', '--json')).out) as { fields: { rotated: number }[] };
    expect(again.fields.every((f) => f.rotated === 0)).toBe(true);
    expect(await storedValues()).toEqual(rotated);

    // The exception of append-only call_attempts is the owner's alone: the API's role still cannot touch a note.
    const attemptId = [...planted.get('call_attempts.note_ciphertext')!.keys()][0]!;
    await expect(
      withTenantSql(after!.deps.db, tenant.tenantId, async (sql) => {
        await sql.query(`SELECT set_config('app.key_rotation', 'on', true)`);
        return sql.query('UPDATE call_attempts SET note_ciphertext = $1 WHERE id = $2::uuid', [newOnly.encrypt('forged'), attemptId]);
      }),
    ).rejects.toThrow(/append-only/);
  });

  it('rotates what it can, lists values no configured key opens (exit 1), and a later run resumes', async () => {
    const lost = new CryptoBox('a-key-nobody-has');
    const stranded = await owner.query<{ id: string }>(
      `INSERT INTO mail_outbox (tenant_id, to_address, subject, body_ciphertext, kind) VALUES ($1, 'a@example.com', 's', $2, 'test') RETURNING id::text AS id`,
      [tenant.tenantId, lost.encrypt('unreachable')],
    );
    const fresh = await owner.query<{ id: string }>(
      `INSERT INTO mail_outbox (tenant_id, to_address, subject, body_ciphertext, kind) VALUES ($1, 'a@example.com', 's', $2, 'test') RETURNING id::text AS id`,
      [tenant.tenantId, new CryptoBox(OLD).encrypt('late mail')],
    );
    const run = await cli(after!, 'keys', 'rotate', '--json');
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^refused: 1 values open under no configured key, left as they are: mail_outbox\.body_ciphertext \(1\)/);
    const result = JSON.parse(run.out) as { fields: { field: string; rotated: number; unreadable: string[] }[] };
    expect(result.fields.find((f) => f.field === 'mail_outbox.body_ciphertext')).toMatchObject({ rotated: 1, unreadable: [stranded.rows[0]!.id] });
    const late = (await owner.query<{ b: string }>('SELECT body_ciphertext AS b FROM mail_outbox WHERE id = $1', [fresh.rows[0]!.id])).rows[0]!.b;
    expect(new CryptoBox(NEW).decrypt(late)).toBe('late mail');
    expect(run.out + run.err).not.toMatch(/late mail|unreachable|rotation-(old|new)-key/);

    await owner.query('DELETE FROM mail_outbox WHERE id = $1', [stranded.rows[0]!.id]);
    const clean = await cli(after!, 'keys', 'rotate');
    expect({ code: clean.code, err: clean.err }).toEqual({ code: 0, err: '' });
    expect(clean.out).toContain(`0 values re-encrypted under key ${encryptionKeyId(NEW)}`);
  });

  it('is in the runbook', () => {
    const runbook = readFileSync(path.join(ROOT_DIR, 'docs', 'runbook.md'), 'utf8');
    expect(runbook).toContain('npm run ops -- keys rotate');
    expect(runbook).toContain('APP_ENCRYPTION_KEYS_PREVIOUS');
  });
});
