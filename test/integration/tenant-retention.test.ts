import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { recordingRetentionSweepSignal, recordingRetentionWorkflowId } from '../../workflows/recording-retention.workflow';
import { runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { seedRecording } from '../helpers/recordings';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(120_000);

let app: TestApp;
let worker: RunningWorker;
let owner: Client;
const taskQueue = `tenant-retention-${randomUUID()}`;

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
  worker = await runWorker(app, taskQueue);
  owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await owner.connect();
});
afterAll(async () => {
  await owner?.end();
  await worker?.stop();
  await app?.close();
});

function expectError(res: HttpResult, status: number, code: string, message?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (message) expect(res.body.error.message).toMatch(message);
}

const put = (token: string | undefined, body: unknown, opts: { headers?: Record<string, string>; rawBody?: string } = {}) =>
  app.request('PUT', '/v1/tenant/retention', { token, body, ...opts });

/** YYYY-MM-DD of `date` plus `months` calendar months (UTC), as PostgreSQL's date + interval counts them. */
function plusMonths(date: Date, months: number): string {
  const d = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1));
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(date.getUTCDate(), lastDay));
  return d.toISOString().slice(0, 10);
}

const monthsAgo = (months: number) => {
  const d = new Date();
  d.setUTCMonth(d.getUTCMonth() - months);
  return d;
};

/**
 * A recording created `ageMonths` ago with the date the capture froze then. The creation time is
 * moved as the test superuser: nothing in the product writes a past created_at.
 */
async function oldRecording(tenant: ProvisionedTenant, ageMonths: number, retainedMonths: number, legalHold = false) {
  const createdAt = monthsAgo(ageMonths);
  const seeded = await seedRecording(app, tenant.tenantId, {
    phone: '+13035550110',
    startedAt: createdAt,
    retainedUntil: plusMonths(createdAt, retainedMonths),
    legalHold,
  });
  await owner.query('UPDATE recordings SET created_at = $2 WHERE id = $1', [seeded.id, createdAt]);
  return { ...seeded, createdAt };
}

const recording = (tenant: ProvisionedTenant, id: string) => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.recording.findUniqueOrThrow({ where: { id } }));
const retainedUntil = async (tenant: ProvisionedTenant, id: string) => (await recording(tenant, id)).retainedUntil.toISOString().slice(0, 10);
const audit = (tenant: ProvisionedTenant, action: string) => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action } }));

async function sweepNow(): Promise<void> {
  await app.deps.temporal!.workflow.getHandle(recordingRetentionWorkflowId(taskQueue)).signal(recordingRetentionSweepSignal);
}

describe('PUT /v1/tenant/retention', () => {
  it('a new tenant keeps recordings 36 months; the value set is read back by /v1/me and audited once', async () => {
    const tenant = await provisionTenant(app);
    expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).body.tenant.retention_months).toBe(36);

    const res = await put(tenant.apiKey, { retention_months: 60 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tenant: expect.objectContaining({ id: tenant.tenantId, retention_months: 60 }), recordings_redated: 0 });
    expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).body.tenant).toEqual(res.body.tenant);

    // The same value again changes and records nothing.
    const again = await put(tenant.apiKey, { retention_months: 60 });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ tenant: res.body.tenant, recordings_redated: 0 });
    const rows = await audit(tenant, 'tenant.retention_changed');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actorType: 'api_key', subjectType: 'tenant', subjectId: tenant.tenantId, payload: { from: 36, to: 60, recordings_redated: 0 } });
  });

  it('refuses below the three-year minimum, above 240, non-integers and other keys with 400 naming the field; nothing changes', async () => {
    const tenant = await provisionTenant(app);
    const cases: [unknown, RegExp][] = [
      [{ retention_months: 35 }, /retention_months.*36 to 240.*Regulation F/],
      [{ retention_months: 1 }, /retention_months.*Regulation F/],
      [{ retention_months: 0 }, /retention_months/],
      [{ retention_months: -36 }, /retention_months/],
      [{ retention_months: 241 }, /retention_months.*36 to 240/],
      [{ retention_months: 48.5 }, /retention_months/],
      [{ retention_months: '48' }, /retention_months/],
      [{ retention_months: null }, /retention_months/],
      [{}, /retention_months/],
      [{ retention_months: 48, months: 48 }, /months/],
    ];
    for (const [body, message] of cases) expectError(await put(tenant.apiKey, body), 400, 'bad_request', message);
    expectError(await put(tenant.apiKey, undefined, { rawBody: '{"retention_months": 48', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expectError(await put(tenant.apiKey, undefined, { rawBody: '{"retention_months": 48}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectError(await put(tenant.apiKey, { retention_months: 48, pad: 'x'.repeat(9 * 1024 * 1024) }), 413, 'payload_too_large');
    expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).body.tenant.retention_months).toBe(36);
    expect(await audit(tenant, 'tenant.retention_changed')).toHaveLength(0);
    // The bounds are the ones published.
    expect((await put(tenant.apiKey, { retention_months: 36 })).status).toBe(200);
    expect((await put(tenant.apiKey, { retention_months: 240 })).body.tenant.retention_months).toBe(240);
  });

  it('an account_admin session may change it; a member session and a widget token are 403; no credential is 401', async () => {
    const tenant = await provisionTenant(app);
    const accountAdmin = await createUserSession(app, tenant);
    const member = await createUserSession(app, tenant);
    const widget = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);

    expectError(await put(member.token, { retention_months: 48 }), 403, 'forbidden', /account_admin/);
    expectError(await put(widget.token, { retention_months: 48 }), 403, 'forbidden');
    expectError(await put(undefined, { retention_months: 48 }), 401, 'unauthorized');
    expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).body.tenant.retention_months).toBe(36);

    const res = await put(accountAdmin.token, { retention_months: 48 });
    expect(res.status).toBe(200);
    expect(res.body.tenant.retention_months).toBe(48);
    expect(await audit(tenant, 'tenant.retention_changed')).toEqual([
      expect.objectContaining({ actorType: 'user', actorId: accountAdmin.userId, payload: { from: 36, to: 48, recordings_redated: 0 } }),
    ]);
  });

  it('a shorter retention set through the API re-dates the recordings and the sweep purges by it; a legal hold still wins', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    expect((await put(tenant.apiKey, { retention_months: 120 })).status).toBe(200);
    const expired = await oldRecording(tenant, 40, 120);
    const held = await oldRecording(tenant, 40, 120, true);
    const young = await oldRecording(tenant, 30, 120);
    // Another tenant's equally old recording follows its own (default) retention, untouched by this change.
    const foreign = await oldRecording(other, 40, 120);
    const foreignBefore = await retainedUntil(other, foreign.id);

    const res = await put(tenant.apiKey, { retention_months: 36 });
    expect(res.status).toBe(200);
    expect(res.body.recordings_redated).toBe(3);
    for (const r of [expired, held, young]) expect(await retainedUntil(tenant, r.id)).toBe(plusMonths(r.createdAt, 36));
    expect(await retainedUntil(other, foreign.id)).toBe(foreignBefore);
    expect(await audit(tenant, 'tenant.retention_changed')).toEqual(
      expect.arrayContaining([expect.objectContaining({ payload: { from: 120, to: 36, recordings_redated: 3 } })]),
    );

    // The worker's own retention workflow, woken as an operator would.
    await sweepNow();
    await waitFor(async () => ((await recording(tenant, expired.id)).audioPurgedAt ? true : undefined), 30_000, 'the expired recording purged');
    expect(await app.deps.objectStore.head(expired.storageKey!)).toBeNull();
    const purgeAudit = await audit(tenant, 'recording.audio_purged');
    expect(purgeAudit.map((a) => a.subjectId)).toEqual([expired.id]);
    expect(purgeAudit[0]!.payload).toMatchObject({ retained_until: plusMonths(expired.createdAt, 36) });

    // Held and younger than the new horizon: kept, audio and all.
    for (const kept of [held, young]) {
      expect((await recording(tenant, kept.id)).audioPurgedAt).toBeNull();
      expect(await app.deps.objectStore.head(kept.storageKey!)).not.toBeNull();
    }
    expect((await recording(other, foreign.id)).audioPurgedAt).toBeNull();
  });

  it('a longer retention keeps audio a shorter one had already made due', async () => {
    const tenant = await provisionTenant(app);
    // Due under the default 36 months: created 40 months ago, its date is past.
    const due = await oldRecording(tenant, 40, 36);
    expect(await retainedUntil(tenant, due.id)).toBe(plusMonths(due.createdAt, 36));

    const res = await put(tenant.apiKey, { retention_months: 60 });
    expect(res.body.recordings_redated).toBe(1);
    expect(await retainedUntil(tenant, due.id)).toBe(plusMonths(due.createdAt, 60));

    // A recording of another tenant made due at the same time proves the sweep ran past this one.
    const witnessTenant = await provisionTenant(app);
    const witness = await oldRecording(witnessTenant, 40, 36);
    await sweepNow();
    await waitFor(async () => ((await recording(witnessTenant, witness.id)).audioPurgedAt ? true : undefined), 30_000, 'the witness purged');
    expect((await recording(tenant, due.id)).audioPurgedAt).toBeNull();
    expect(await app.deps.objectStore.head(due.storageKey!)).not.toBeNull();
  });
});
