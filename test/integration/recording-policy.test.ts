import { withTenant } from '../../src/lib/tenancy';
import { createUserSession, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const MiB = 1024 * 1024;
const VALID = { all_party_mode: 'skip', notice_text: 'This call is recorded.', playback_url_ttl_seconds: 120, export_url_ttl_seconds: 7200 };

function expectError(res: { status: number; body: any }, status: number, code: string, message?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (message) expect(res.body.error.message).toMatch(message);
}

const get = (token: string | null) => app.request('GET', '/v1/recording-policy', { token });
const put = (token: string | null, body: unknown) => app.request('PUT', '/v1/recording-policy', { token, body });

describe('GET /v1/recording-policy', () => {
  it('answers the defaults while the tenant stored none', async () => {
    const tenant = await provisionTenant(app);
    const res = await get(tenant.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      recording_policy: {
        all_party_mode: 'notice',
        notice_text: 'This call may be recorded for quality and compliance purposes.',
        playback_url_ttl_seconds: 300,
        export_url_ttl_seconds: 3600,
        updated_at: null,
      },
    });
  });

  it('is 401 without a credential and 403 for a widget token', async () => {
    const tenant = await provisionTenant(app);
    expectError(await get(null), 401, 'unauthorized');
    const { token } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    expectError(await get(token), 403, 'forbidden');
    expectError(await put(token, VALID), 403, 'forbidden');
  });
});

describe('PUT /v1/recording-policy', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('replaces the policy, answers it, keeps it per tenant and audits recording_policy.updated', async () => {
    const res = await put(tenant.apiKey, { ...VALID, notice_text: '  This call is recorded.  ' });
    expect(res.status).toBe(200);
    expect(res.body.recording_policy).toMatchObject(VALID);
    expect(Number.isNaN(Date.parse(res.body.recording_policy.updated_at))).toBe(false);
    expect((await get(tenant.apiKey)).body).toEqual(res.body);

    const other = await provisionTenant(app);
    expect((await get(other.apiKey)).body.recording_policy.all_party_mode).toBe('notice');

    // A dashboard session may manage it too; a second PUT replaces every field.
    const session = await createUserSession(app, tenant);
    const second = await put(session.token, { all_party_mode: 'notice', notice_text: 'Calls are recorded.', playback_url_ttl_seconds: 30, export_url_ttl_seconds: 86_400 });
    expect(second.status).toBe(200);
    expect(second.body.recording_policy).toMatchObject({ all_party_mode: 'notice', notice_text: 'Calls are recorded.', playback_url_ttl_seconds: 30, export_url_ttl_seconds: 86_400 });

    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { action: 'recording_policy.updated' }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
    );
    expect(audit).toHaveLength(2);
    expect(audit[0]).toMatchObject({ actorType: 'api_key', subjectType: 'recording_policy', subjectId: tenant.tenantId, payload: VALID });
    expect(audit[1]).toMatchObject({ actorType: 'user', actorId: session.userId });
  });

  it.each([
    ['notice_text empty after trimming', { notice_text: '   ' }, /notice_text/],
    ['notice_text over 2000 characters', { notice_text: 'x'.repeat(2001) }, /notice_text/],
    ['playback_url_ttl_seconds below 30', { playback_url_ttl_seconds: 29 }, /playback_url_ttl_seconds/],
    ['playback_url_ttl_seconds above 3600', { playback_url_ttl_seconds: 3601 }, /playback_url_ttl_seconds/],
    ['export_url_ttl_seconds below 60', { export_url_ttl_seconds: 59 }, /export_url_ttl_seconds/],
    ['export_url_ttl_seconds above 86400', { export_url_ttl_seconds: 86_401 }, /export_url_ttl_seconds/],
  ])('answers 422 unprocessable for %s and stores nothing', async (_what, change, message) => {
    const before = (await get(tenant.apiKey)).body;
    expectError(await put(tenant.apiKey, { ...VALID, ...change }), 422, 'unprocessable', message);
    expect((await get(tenant.apiKey)).body).toEqual(before);
  });

  it.each([
    ['an unknown key', { ...VALID, retention_months: 12 }, /retention_months/],
    ['a missing field', { all_party_mode: 'notice', notice_text: 'x', playback_url_ttl_seconds: 300 }, /export_url_ttl_seconds/],
    ['an unknown all_party_mode', { ...VALID, all_party_mode: 'beep' }, /all_party_mode/],
    ['a wrong JSON type', { ...VALID, playback_url_ttl_seconds: '300' }, /playback_url_ttl_seconds/],
    ['a fractional number', { ...VALID, export_url_ttl_seconds: 60.5 }, /export_url_ttl_seconds/],
  ])('answers 400 bad_request for %s', async (_what, body, message) => {
    expectError(await put(tenant.apiKey, body), 400, 'bad_request', message);
  });

  it('answers 400 for malformed JSON, 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
    expectError(await app.request('PUT', '/v1/recording-policy', { token: tenant.apiKey, rawBody: '{"all_party_mode":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expectError(await app.request('PUT', '/v1/recording-policy', { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectError(
      await app.request('PUT', '/v1/recording-policy', { token: tenant.apiKey, headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) } }),
      413,
      'payload_too_large',
    );
  });

  it('is 401 without a credential', async () => {
    expectError(await put(null, VALID), 401, 'unauthorized');
  });
});
