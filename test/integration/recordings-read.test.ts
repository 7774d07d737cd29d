import { randomUUID } from 'node:crypto';
import { StorageUnavailableError } from '../../src/lib/object-store';
import { withTenantSql } from '../../src/lib/tenancy';
import { recordingRoutes } from '../../src/modules/recordings/recording.routes';
import { provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { seedRecording, type SeededRecording } from '../helpers/recordings';
import { insertAgentWidgetToken, widgetRouter } from '../helpers/widget';

jest.setTimeout(60_000);

// SPEC "Recording (list item)" in order, then the documented design addition.
const LIST_FIELDS = [
  'id', 'call_id', 'started_at', 'local_tz', 'agent', 'account_ref', 'phone_number', 'duration_secs', 'disposition',
  'two_party_consent_state', 'attest_a', 'ai_used', 'retained_until', 'legal_hold', 'audio_available',
];
const DETAIL_EXTRA = [
  'call_attempt_id', 'campaign_id', 'debt_id', 'consent_notice_played', 'size_bytes', 'sha256', 'legal_hold_reason',
  'legal_hold_at', 'audio_purged_at', 'created_at',
];

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

let app: TestApp;
let tenant: ProvisionedTenant;
let other: ProvisionedTenant;
let campaignId: string;
let agentB: string;
const base = Date.parse('2026-10-01T12:00:00.000Z');
const at = (minutes: number) => new Date(base + minutes * 60_000);
let rec: Record<string, SeededRecording>;

const get = (path: string, token = tenant.apiKey) => app.request('GET', path, { token });
const ids = (res: HttpResult) => (res.body.recordings as { id: string }[]).map((r) => r.id);

async function auditOf(t: ProvisionedTenant, subjectId: string) {
  return withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query<{ action: string; actor_type: string; actor_id: string | null; payload: Record<string, unknown> }>(
      `SELECT action, actor_type, actor_id, payload FROM audit_log WHERE subject_id = $1 ORDER BY occurred_at, seq`,
      [subjectId],
    ),
  );
}

beforeAll(async () => {
  app = await startTestApp();
  tenant = await provisionTenant(app);
  other = await provisionTenant(app);
  const campaign = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `rec-${randomUUID()}`, campaign_type: 'manual' } });
  campaignId = campaign.body.campaign.id;
  const agent = await app.request('POST', '/v1/agents', { token: tenant.apiKey, body: { name: 'Bea', email: `bea-${randomUUID()}@example.com` } });
  agentB = agent.body.agent.id;
  rec = {
    a: await seedRecording(app, tenant.tenantId, {
      phone: '+12125550101', startedAt: at(0), campaignId, agentId: tenant.adminAgentId, accountRef: 'ACC-100_x', externalRef: 'EXT-alpha',
      disposition: 'answered_human', corrections: ['wrong_number', 'promise_to_pay'],
    }),
    b: await seedRecording(app, tenant.tenantId, { phone: '+12125554321', startedAt: at(10), agentId: agentB, accountRef: 'acc-200', disposition: 'answered_human' }),
    c: await seedRecording(app, tenant.tenantId, { phone: '+13105559876', startedAt: at(20), campaignId, accountRef: null, externalRef: 'ext-50%-off', disposition: 'abandoned' }),
    purged: await seedRecording(app, tenant.tenantId, { phone: '+13105550000', startedAt: at(30), purged: true, retainedUntil: '2026-01-31' }),
  };
  await seedRecording(app, other.tenantId, { phone: '+12125554321', startedAt: at(5), accountRef: 'acc-200' });
});

afterAll(async () => {
  await app.close();
});

describe('GET /v1/recordings', () => {
  it('lists the tenant recordings newest first with exactly the list item fields', async () => {
    const res = await get('/v1/recordings');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([rec.purged!.id, rec.c!.id, rec.b!.id, rec.a!.id]);
    expect(res.body.next_cursor).toBeNull();
    const a = res.body.recordings[3];
    expect(Object.keys(a)).toEqual(LIST_FIELDS);
    expect(a).toEqual({
      id: rec.a!.id,
      call_id: rec.a!.callUuid,
      started_at: at(0).toISOString(),
      local_tz: 'America/New_York',
      agent: { id: tenant.adminAgentId, name: expect.any(String) },
      account_ref: 'ACC-100_x',
      phone_number: '+12125550101',
      duration_secs: 30,
      // The terminal CDR row: the latest correction of the original.
      disposition: 'promise_to_pay',
      two_party_consent_state: null,
      attest_a: false,
      ai_used: false,
      retained_until: '2033-01-31',
      legal_hold: false,
      audio_available: true,
    });
    expect(res.body.recordings[2].agent).toEqual({ id: agentB, name: 'Bea' });
    expect(res.body.recordings[1].agent).toBeNull();
    expect(res.body.recordings[1].disposition).toBe('abandoned');
    expect(res.body.recordings[0].audio_available).toBe(false);
  });

  it('filters by from/to (started_at, to exclusive), agent, campaign and the terminal disposition', async () => {
    expect(ids(await get(`/v1/recordings?from=${at(10).toISOString()}&to=${at(20).toISOString()}`))).toEqual([rec.b!.id]);
    expect(ids(await get(`/v1/recordings?from=2026-10-01T08:10:00-04:00`))).toEqual([rec.purged!.id, rec.c!.id, rec.b!.id]);
    expect(ids(await get(`/v1/recordings?agent_id=${agentB}`))).toEqual([rec.b!.id]);
    expect(ids(await get(`/v1/recordings?campaign_id=${campaignId}`))).toEqual([rec.c!.id, rec.a!.id]);
    expect(ids(await get('/v1/recordings?disposition=promise_to_pay'))).toEqual([rec.a!.id]);
    // The original's engine outcome is no longer the call's disposition once corrected.
    expect(ids(await get('/v1/recordings?disposition=wrong_number'))).toEqual([]);
    expect(ids(await get(`/v1/recordings?agent_id=${randomUUID()}`))).toEqual([]);
  });

  it('q matches the masked phone, account_ref and external_ref, never the full number, wildcards literal', async () => {
    const q = async (text: string) => ids(await get(`/v1/recordings?q=${encodeURIComponent(text)}`));
    expect(await q('4321')).toEqual([rec.b!.id]);
    expect(await q('***4321')).toEqual([rec.b!.id]);
    expect(await q('+1212555')).toEqual([]);
    expect(await q('2125554321')).toEqual([]);
    expect(await q('acc-')).toEqual([rec.b!.id, rec.a!.id]);
    expect(await q('ext-ALPHA')).toEqual([rec.a!.id]);
    expect(await q('50%')).toEqual([rec.c!.id]);
    expect(await q('%')).toEqual([rec.c!.id]);
    expect(await q('100_')).toEqual([rec.a!.id]);
    expect(await q('c_-')).toEqual([]);
  });

  it('pages with limit and an opaque cursor without overlap', async () => {
    const first = await get('/v1/recordings?limit=3');
    expect(ids(first)).toEqual([rec.purged!.id, rec.c!.id, rec.b!.id]);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await get(`/v1/recordings?limit=3&cursor=${first.body.next_cursor}`);
    expect(ids(second)).toEqual([rec.a!.id]);
    expect(second.body.next_cursor).toBeNull();
  });

  it('rejects bad queries with 400 bad_request', async () => {
    for (const query of ['limit=1001', 'limit=0', 'from=yesterday', 'to=2026-10-01',
      'cursor=not-a-cursor', 'agent_id=nope', 'q=', `q=${'x'.repeat(201)}`]) {
      expectError(await get(`/v1/recordings?${query}`), 400, 'bad_request');
    }
  });

  it('answers from after to with 422 unprocessable (a rule across two parameters)', async () => {
    expectError(await get(`/v1/recordings?from=${at(5).toISOString()}&to=${at(1).toISOString()}`), 422, 'unprocessable');
  });

  it('never shows another tenant its recordings', async () => {
    const res = await get('/v1/recordings', other.apiKey);
    expect(res.body.recordings).toHaveLength(1);
    expect(ids(res)).not.toContain(rec.b!.id);
  });

  it('is tenant-management scope: a widget token is 403, even past the allowlist', async () => {
    const widget = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    expectError(await get('/v1/recordings', widget.token), 403, 'forbidden');
    const direct = await widgetRouter(tenant, recordingRoutes(app.deps)).request('/v1/recordings');
    expect(direct.status).toBe(403);
    expect(((await direct.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    expectError(await app.request('GET', '/v1/recordings'), 401, 'unauthorized');
  });
});

describe('GET /v1/recordings/{id}', () => {
  it('answers the list item plus the full metadata', async () => {
    const res = await get(`/v1/recordings/${rec.a!.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.recording)).toEqual([...LIST_FIELDS, ...DETAIL_EXTRA]);
    expect(res.body.recording).toMatchObject({
      id: rec.a!.id,
      call_attempt_id: rec.a!.callAttemptId,
      campaign_id: campaignId,
      debt_id: rec.a!.debtId,
      consent_notice_played: false,
      size_bytes: rec.a!.audio!.length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      legal_hold_reason: null,
      legal_hold_at: null,
      audio_purged_at: null,
    });
    const purged = await get(`/v1/recordings/${rec.purged!.id}`);
    expect(purged.body.recording.audio_purged_at).toEqual(expect.any(String));
  });

  it('is 404 for an unknown, a malformed and another tenant\'s id', async () => {
    expectError(await get(`/v1/recordings/${randomUUID()}`), 404, 'not_found');
    expectError(await get('/v1/recordings/not-a-uuid'), 404, 'not_found');
    expectError(await get(`/v1/recordings/${rec.a!.id}`, other.apiKey), 404, 'not_found');
  });
});

describe('POST /v1/recordings/{id}/playback-url', () => {
  const issue = (id: string, token = tenant.apiKey) => app.request('POST', `/v1/recordings/${id}/playback-url`, { token });

  it('signs a short-lived URL that serves the audio, audited as evidence of access', async () => {
    const before = Date.now();
    const res = await issue(rec.b!.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['url', 'expires_at']);
    const expiresAt = Date.parse(res.body.expires_at);
    // The default policy: 300 s.
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 299_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 301_000);
    const url = new URL(res.body.url);
    const download = await fetch(`${app.baseUrl}${url.pathname}${url.search}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('audio/wav');
    expect(download.headers.get('content-disposition')).toContain(`recording-${rec.b!.id}.wav`);
    expect(Buffer.from(await download.arrayBuffer()).equals(rec.b!.audio!)).toBe(true);
    const audit = await auditOf(tenant, rec.b!.id);
    expect(audit).toEqual([
      { action: 'recording.playback_url_issued', actor_type: 'api_key', actor_id: expect.any(String), payload: expect.objectContaining({ expires_at: res.body.expires_at }) },
    ]);
  });

  it('follows the policy playback_url_ttl_seconds', async () => {
    const t = await provisionTenant(app);
    const r = await seedRecording(app, t.tenantId, { phone: '+12125550111', startedAt: at(0) });
    await withTenantSql(app.deps.db, t.tenantId, (sql) =>
      sql.query(`INSERT INTO recording_policies (tenant_id, playback_url_ttl_seconds) VALUES ($1, 45)`, [t.tenantId]),
    );
    const res = await issue(r.id, t.apiKey);
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.expires_at) - Date.now()).toBeLessThanOrEqual(45_000);
    expect(Date.parse(res.body.expires_at) - Date.now()).toBeGreaterThan(40_000);
  });

  it('a tampered or expired URL is 403 from /files', async () => {
    const res = await issue(rec.a!.id);
    const url = new URL(res.body.url);
    const fetchPath = (path: string) => fetch(`${app.baseUrl}${path}`);
    const sig = url.searchParams.get('sig')!;
    const withParam = (name: string, value: string) => {
      const query = new URLSearchParams(url.search);
      query.set(name, value);
      return `${url.pathname}?${query.toString()}`;
    };
    const tampered = [
      withParam('sig', `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`),
      withParam('expires', String(Number(url.searchParams.get('expires')) + 60)),
      withParam('name', 'other.wav'),
      `${url.pathname.replace(rec.a!.callUuid, rec.b!.callUuid)}${url.search}`,
    ];
    for (const path of tampered) expect((await fetchPath(path)).status).toBe(403);
    const expired = app.deps.fileSigner!.signedUrl(rec.a!.storageKey!, { expiresInSeconds: 5 }, new Date(Date.now() - 60_000));
    const expiredUrl = new URL(expired.url);
    expect((await fetchPath(`${expiredUrl.pathname}${expiredUrl.search}`)).status).toBe(403);
  });

  it('is 409 conflict once the audio was purged, or when it is gone from the store', async () => {
    expectError(await issue(rec.purged!.id), 409, 'conflict');
    const gone = await seedRecording(app, tenant.tenantId, { phone: '+12125550112', startedAt: at(-100) });
    await app.deps.objectStore.delete(gone.storageKey!);
    expectError(await issue(gone.id), 409, 'conflict');
    expect(await auditOf(tenant, gone.id)).toEqual([]);
  });

  it('is 503 storage_unavailable when the store cannot serve', async () => {
    const spy = jest.spyOn(app.deps.objectStore, 'head').mockRejectedValueOnce(new StorageUnavailableError('test: store down'));
    try {
      expectError(await issue(rec.c!.id), 503, 'storage_unavailable');
    } finally {
      spy.mockRestore();
    }
    expect(await auditOf(tenant, rec.c!.id)).toEqual([]);
  });

  it('is 404 for an unknown, a malformed and another tenant\'s id', async () => {
    expectError(await issue(randomUUID()), 404, 'not_found');
    expectError(await issue('nope'), 404, 'not_found');
    expectError(await issue(rec.a!.id, other.apiKey), 404, 'not_found');
  });
});

describe('PUT /v1/recordings/{id}/legal-hold', () => {
  const put = (id: string, body: unknown, token = tenant.apiKey) => app.request('PUT', `/v1/recordings/${id}/legal-hold`, { token, body });

  it('places, repeats idempotently, changes and releases a hold, each change audited', async () => {
    const r = await seedRecording(app, tenant.tenantId, { phone: '+12125550113', startedAt: at(-200), retainedUntil: '2020-01-01' });
    const set = await put(r.id, { legal_hold: true, reason: 'Matter 42' });
    expect(set.status).toBe(200);
    expect(set.body.recording).toMatchObject({ id: r.id, legal_hold: true, legal_hold_reason: 'Matter 42', legal_hold_at: expect.any(String) });
    const again = await put(r.id, { legal_hold: true, reason: 'Matter 42' });
    expect(again.body.recording).toEqual(set.body.recording);
    const changed = await put(r.id, { legal_hold: true, reason: 'Matter 43' });
    expect(changed.body.recording).toMatchObject({ legal_hold: true, legal_hold_reason: 'Matter 43', legal_hold_at: set.body.recording.legal_hold_at });
    const released = await put(r.id, { legal_hold: false, reason: 'matter closed' });
    expect(released.body.recording).toMatchObject({ legal_hold: false, legal_hold_reason: null, legal_hold_at: null, retained_until: '2020-01-01' });
    expect((await put(r.id, { legal_hold: false })).body.recording).toEqual(released.body.recording);
    expect((await auditOf(tenant, r.id)).map((e) => [e.action, e.payload.reason])).toEqual([
      ['recording.legal_hold_set', 'Matter 42'],
      ['recording.legal_hold_set', 'Matter 43'],
      ['recording.legal_hold_released', 'matter closed'],
    ]);
    // Released past retained_until: the next purge sweep lists it (or has purged it already: retention
    // sweeps of other files' workers run across tenants of this database).
    const [after] = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query<{ due: boolean; purged: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM recording_purge_due(100000) WHERE recording_id = $1) AS due,
                (SELECT audio_purged_at IS NOT NULL FROM recordings WHERE id = $1) AS purged`,
        [r.id],
      ),
    );
    expect(after!.due || after!.purged).toBe(true);
  });

  it('rejects a missing reason, an over-long reason, a wrong type and unknown keys with 400', async () => {
    expectError(await put(rec.c!.id, { legal_hold: true }), 400, 'bad_request');
    expectError(await put(rec.c!.id, { legal_hold: true, reason: 'x'.repeat(501) }), 400, 'bad_request');
    expectError(await put(rec.c!.id, { legal_hold: 'yes', reason: 'r' }), 400, 'bad_request');
    expectError(await put(rec.c!.id, {}), 400, 'bad_request');
    expectError(await put(rec.c!.id, { legal_hold: true, reason: 'r', until: 'never' }), 400, 'bad_request');
    expect((await get(`/v1/recordings/${rec.c!.id}`)).body.recording.legal_hold).toBe(false);
  });

  it('is 404 for an unknown, a malformed and another tenant\'s id', async () => {
    expectError(await put(randomUUID(), { legal_hold: false }), 404, 'not_found');
    expectError(await put('nope', { legal_hold: false }), 404, 'not_found');
    expectError(await put(rec.a!.id, { legal_hold: true, reason: 'x' }, other.apiKey), 404, 'not_found');
  });
});
