import { randomUUID } from 'node:crypto';
import JSZip from 'jszip';
import { withTenantSql } from '../../src/lib/tenancy';
import { recordingExportRoutes } from '../../src/modules/recording-exports/recording-export.routes';
import { runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { seedRecording, sha256Hex } from '../helpers/recordings';
import { insertAgentWidgetToken, widgetRouter } from '../helpers/widget';

jest.setTimeout(90_000);

const JOB_FIELDS = ['job_id', 'status', 'url', 'expires_at', 'row_count', 'error', 'created_at', 'updated_at'];
const MANIFEST_HEADER =
  'recording_id,call_id,started_at,phone_number,account_ref,agent,campaign_id,duration_secs,disposition,two_party_consent_state,legal_hold,sha256,audio_included';
const DAY_MS = 86_400_000;

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

let app: TestApp;
let worker: RunningWorker;
const taskQueue = `recording-exports-${randomUUID()}`;
const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);

const post = (t: ProvisionedTenant, body: unknown) => app.request('POST', '/v1/recording-exports', { token: t.apiKey, body });
const getJob = (t: ProvisionedTenant, id: string) => app.request('GET', `/v1/recording-exports/${id}`, { token: t.apiKey });

async function waitDone(t: ProvisionedTenant, id: string) {
  return waitFor(async () => {
    const res = await getJob(t, id);
    return res.body.export.status === 'done' || res.body.export.status === 'failed' ? res.body.export : undefined;
  }, 60_000, `export ${id} to finish`);
}

async function download(url: string) {
  const u = new URL(url);
  return fetch(`${app.baseUrl}${u.pathname}${u.search}`);
}

async function exportRow(t: ProvisionedTenant, id: string) {
  const [row] = await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query<{ status: string; error: string | null; size_bytes: string | null; sha256: string | null; storage_key: string | null; claimed_at: Date | null; heartbeat_at: Date | null; filters: Record<string, string> }>(
      `SELECT status, error, size_bytes::text, sha256, storage_key, claimed_at, heartbeat_at, filters FROM recording_exports WHERE id = $1`,
      [id],
    ),
  );
  return row!;
}

async function exportCount(t: ProvisionedTenant) {
  const [row] = await withTenantSql(app.deps.db, t.tenantId, (sql) => sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM recording_exports`));
  return row!.n;
}

/** A generating job as another request (or a worker that died) left it. */
async function insertGenerating(t: ProvisionedTenant, status: 'queued' | 'running', heartbeatSecondsAgo: number) {
  const [row] = await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query<{ id: string }>(
      `INSERT INTO recording_exports (tenant_id, status, filters, filter_hash, claimed_at, heartbeat_at, created_at)
       VALUES ($1, $2, '{}', 'held', CASE WHEN $2 = 'running' THEN now() - make_interval(secs => $3) END,
               CASE WHEN $2 = 'running' THEN now() - make_interval(secs => $3) END, now() - make_interval(secs => $3))
       RETURNING id`,
      [t.tenantId, status, heartbeatSecondsAgo],
    ),
  );
  return row!.id;
}

async function auditActions(t: ProvisionedTenant, subjectId: string) {
  const rows = await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query<{ action: string; payload: Record<string, unknown> }>(`SELECT action, payload FROM audit_log WHERE subject_id = $1 ORDER BY occurred_at, seq`, [subjectId]),
  );
  return rows;
}

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
  worker = await runWorker(app, taskQueue);
});

afterAll(async () => {
  await worker.stop();
  await app.close();
});

describe('the export life cycle', () => {
  it('streams the audio and a manifest into a ZIP that downloads through its signed URL', async () => {
    const tenant = await provisionTenant(app);
    const a = await seedRecording(app, tenant.tenantId, {
      phone: '+12125550101', startedAt: recent(30), agentId: tenant.adminAgentId, accountRef: '=HYPERLINK("x")',
      disposition: 'answered_human', corrections: ['promise_to_pay'],
    });
    const b = await seedRecording(app, tenant.tenantId, { phone: '+12125550102', startedAt: recent(20), accountRef: 'acc, "quoted"', legalHold: true });
    const purged = await seedRecording(app, tenant.tenantId, { phone: '+12125550103', startedAt: recent(10), purged: true });
    await seedRecording(app, tenant.tenantId, { phone: '+12125550104', startedAt: new Date(Date.now() - 40 * DAY_MS) });

    const res = await post(tenant, {});
    expect(res.status).toBe(202);
    expect(Object.keys(res.body.export)).toEqual(JOB_FIELDS);
    expect(res.body.export).toMatchObject({ status: 'queued', url: null, expires_at: null, row_count: null, error: null });
    const jobId = res.body.export.job_id as string;

    const done = await waitDone(tenant, jobId);
    expect(done).toMatchObject({ job_id: jobId, status: 'done', row_count: 3, error: null, url: expect.any(String), expires_at: expect.any(String) });
    // The default policy: the archive URL lives 3600 s.
    expect(Math.abs(Date.parse(done.expires_at) - Date.now() - 3_600_000)).toBeLessThan(5_000);

    const file = await download(done.url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/zip');
    expect(file.headers.get('content-disposition')).toContain(`recordings-export-${jobId}.zip`);
    const bytes = Buffer.from(await file.arrayBuffer());
    const row = await exportRow(tenant, jobId);
    expect(row).toMatchObject({ status: 'done', size_bytes: String(bytes.length), sha256: sha256Hex(bytes), storage_key: `exports/${tenant.tenantId}/${jobId}.zip` });
    expect(row.claimed_at).not.toBeNull();
    expect(row.heartbeat_at).not.toBeNull();

    const zip = await JSZip.loadAsync(bytes);
    expect(Object.keys(zip.files).sort()).toEqual(['manifest.csv', `recordings/${a.callUuid}.wav`, `recordings/${b.callUuid}.wav`].sort());
    for (const r of [a, b]) {
      const wav = Buffer.from(await zip.file(`recordings/${r.callUuid}.wav`)!.async('uint8array'));
      expect(wav.equals(r.audio!)).toBe(true);
    }
    const manifest = (await zip.file('manifest.csv')!.async('string')).split('\r\n');
    expect(manifest[0]).toBe(MANIFEST_HEADER);
    expect(manifest.slice(1, -1)).toEqual([
      // Purged audio: listed as evidence, not included.
      expect.stringMatching(new RegExp(`^${purged.id},${purged.callUuid},[^,]+,\\+12125550103,,,,30,answered_human,,false,[0-9a-f]{64},false$`)),
      expect.stringMatching(new RegExp(`^${b.id},${b.callUuid},[^,]+,\\+12125550102,"acc, ""quoted""",,,30,answered_human,,true,${sha256Hex(b.audio!)},true$`)),
      expect.stringMatching(new RegExp(`^${a.id},${a.callUuid},[^,]+,\\+12125550101,"'=HYPERLINK\\(""x""\\)",Admin,,30,promise_to_pay,,false,${sha256Hex(a.audio!)},true$`)),
    ]);
    expect(manifest[manifest.length - 1]).toBe('');

    expect((await auditActions(tenant, jobId)).map((e) => e.action)).toEqual(['recording_export.requested', 'recording_export.completed']);
  });

  it('filters the archive with the list filters and stores the resolved window', async () => {
    const tenant = await provisionTenant(app);
    const hit = await seedRecording(app, tenant.tenantId, { phone: '+12125557777', startedAt: recent(15), accountRef: 'KEEP-1' });
    await seedRecording(app, tenant.tenantId, { phone: '+12125558888', startedAt: recent(14), accountRef: 'drop-2' });
    const from = recent(60).toISOString();
    const res = await post(tenant, { from, q: 'keep' });
    expect(res.status).toBe(202);
    const done = await waitDone(tenant, res.body.export.job_id);
    expect(done.row_count).toBe(1);
    const zip = await JSZip.loadAsync(Buffer.from(await (await download(done.url)).arrayBuffer()));
    expect(Object.keys(zip.files).sort()).toEqual(['manifest.csv', `recordings/${hit.callUuid}.wav`]);
    const row = await exportRow(tenant, res.body.export.job_id);
    expect(row.filters).toEqual({ from, to: expect.any(String), q: 'keep' });
  });

  it('an identical request inside the dedup window returns the same job with a freshly signed URL; refresh makes a new one', async () => {
    const tenant = await provisionTenant(app);
    await seedRecording(app, tenant.tenantId, { phone: '+12125550201', startedAt: recent(5), accountRef: 'Dedup' });
    const from = new Date(Date.now() - DAY_MS);
    const first = await post(tenant, { from: from.toISOString(), q: 'Dedup' });
    const jobId = first.body.export.job_id as string;
    await waitDone(tenant, jobId);

    await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query(`INSERT INTO recording_policies (tenant_id, export_url_ttl_seconds) VALUES ($1, 120)`, [tenant.tenantId]),
    );
    // The same filters spelled differently: another offset, q in another case with spaces.
    const offsetFrom = new Date(from.getTime() - 5 * 3_600_000).toISOString().replace('Z', '-05:00');
    const again = await post(tenant, { from: offsetFrom, q: ' dedup ' });
    expect(again.status).toBe(202);
    expect(again.body.export).toMatchObject({ job_id: jobId, status: 'done', row_count: 1 });
    // Signed now with the policy's new lifetime: a fresh URL.
    expect(Math.abs(Date.parse(again.body.export.expires_at) - Date.now() - 120_000)).toBeLessThan(5_000);
    expect((await download(again.body.export.url)).status).toBe(200);

    // Handing back an archive is never gated by the one-at-a-time rule.
    const held = await insertGenerating(tenant, 'queued', 0);
    const whileHeld = await post(tenant, { from: from.toISOString(), q: 'Dedup' });
    expect(whileHeld.status).toBe(202);
    expect(whileHeld.body.export.job_id).toBe(jobId);
    expectError(await post(tenant, { from: from.toISOString(), q: 'Dedup', refresh: true }), 429, 'export_in_progress');
    await withTenantSql(app.deps.db, tenant.tenantId, (sql) => sql.query(`UPDATE recording_exports SET status = 'failed' WHERE id = $1`, [held]));

    const refreshed = await post(tenant, { from: from.toISOString(), q: 'Dedup', refresh: true });
    expect(refreshed.status).toBe(202);
    expect(refreshed.body.export.job_id).not.toBe(jobId);
    expect(refreshed.body.export.status).toBe('queued');
    expect((await waitDone(tenant, refreshed.body.export.job_id)).status).toBe('done');
    expect((await auditActions(tenant, jobId)).map((e) => [e.action, e.payload.reused])).toEqual([
      ['recording_export.requested', false],
      ['recording_export.completed', undefined],
      ['recording_export.requested', true],
      ['recording_export.requested', true],
    ]);
  });

  it('is 429 export_in_progress while another export of the tenant is generating, and writes nothing', async () => {
    const tenant = await provisionTenant(app);
    await insertGenerating(tenant, 'running', 5);
    expectError(await post(tenant, { q: 'anything' }), 429, 'export_in_progress');
    expect(await exportCount(tenant)).toBe(1);
    // Another tenant is not held up.
    const other = await provisionTenant(app);
    expect((await post(other, {})).status).toBe(202);
  });

  it('the unique index decides between concurrent requests', async () => {
    const tenant = await provisionTenant(app);
    const results = await Promise.all([post(tenant, { q: 'one' }), post(tenant, { q: 'two' }), post(tenant, { q: 'three' })]);
    expect(results.filter((r) => r.status === 202).length).toBeGreaterThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 202)) expectError(r, 429, 'export_in_progress');
    const [generating] = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM recording_exports WHERE status IN ('queued', 'running')`),
    );
    expect(generating!.n).toBeLessThanOrEqual(1);
  });

  it('releases a stale claim (failed, "stale claim released", audited) and then accepts the new export', async () => {
    const tenant = await provisionTenant(app);
    const stale = await insertGenerating(tenant, 'running', app.config.RECORDING_EXPORT_CLAIM_STALE_SECONDS + 60);
    const res = await post(tenant, {});
    expect(res.status).toBe(202);
    expect(await exportRow(tenant, stale)).toMatchObject({ status: 'failed', error: 'stale claim released' });
    const job = await getJob(tenant, stale);
    expect(job.body.export).toMatchObject({ status: 'failed', error: 'stale claim released', url: null, expires_at: null });
    expect((await auditActions(tenant, stale)).map((e) => e.action)).toEqual(['recording_export.failed']);
    expect((await waitDone(tenant, res.body.export.job_id)).status).toBe('done');
  });
});

describe('a claim released while its worker is still streaming', () => {
  it('the late worker cannot finish the job: it stays failed and the archive it wrote is removed', async () => {
    const tenant = await provisionTenant(app);
    await seedRecording(app, tenant.tenantId, { phone: '+12125550401', startedAt: recent(4) });
    const store = app.deps.objectStore;
    const realGet = store.get.bind(store);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const getSpy = jest.spyOn(store, 'get').mockImplementationOnce(async (key) => {
      await gate;
      return realGet(key);
    });
    const deleteSpy = jest.spyOn(store, 'delete');
    try {
      const first = await post(tenant, {});
      const jobId = first.body.export.job_id as string;
      await waitFor(async () => ((await exportRow(tenant, jobId)).status === 'running' && getSpy.mock.calls.length > 0 ? true : undefined), 30_000, 'the build to start');
      await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
        sql.query(`UPDATE recording_exports SET heartbeat_at = now() - interval '1 hour', claimed_at = now() - interval '1 hour' WHERE id = $1`, [jobId]),
      );
      const second = await post(tenant, { q: 'next' });
      expect(second.status).toBe(202);
      expect(await exportRow(tenant, jobId)).toMatchObject({ status: 'failed', error: 'stale claim released' });

      release();
      const key = `exports/${tenant.tenantId}/${jobId}.zip`;
      await waitFor(() => Promise.resolve(deleteSpy.mock.calls.some(([k]) => k === key) ? true : undefined), 30_000, 'the late archive to be removed');
      expect(await store.head(key)).toBeNull();
      expect(await exportRow(tenant, jobId)).toMatchObject({ status: 'failed', error: 'stale claim released', storage_key: null });
      expect((await auditActions(tenant, jobId)).map((e) => e.action)).toEqual(['recording_export.requested', 'recording_export.failed']);
      expect((await waitDone(tenant, second.body.export.job_id)).status).toBe('done');
    } finally {
      release();
      getSpy.mockRestore();
      deleteSpy.mockRestore();
    }
  });
});

describe('POST /v1/recording-exports refusals', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('is 422 range_too_large past the limit and 422 unprocessable for from after to', async () => {
    const to = new Date('2026-06-01T00:00:00Z');
    const tooWide = new Date(to.getTime() - (app.config.RECORDING_EXPORT_MAX_RANGE_DAYS * DAY_MS + 1000));
    expectError(await post(tenant, { from: tooWide.toISOString(), to: to.toISOString() }), 422, 'range_too_large');
    expectError(await post(tenant, { from: '2020-01-01T00:00:00Z' }), 422, 'range_too_large');
    expectError(await post(tenant, { from: to.toISOString(), to: tooWide.toISOString() }), 422, 'unprocessable');
    expect(await exportCount(tenant)).toBe(0);
  });

  it('is 400 for a malformed body', async () => {
    for (const body of [{ from: 'yesterday' }, { refresh: 'yes' }, { agent_id: 'x' }, { format: 'tar' }, { q: '' }]) {
      expectError(await post(tenant, body), 400, 'bad_request');
    }
    expect(await exportCount(tenant)).toBe(0);
  });

  it('is 503 storage_unavailable when the store cannot take a write, before any row is written', async () => {
    const spy = jest.spyOn(app.deps.objectStore, 'check').mockResolvedValueOnce({ ok: false, reason: 'test: disk full' });
    try {
      const res = await post(tenant, {});
      expectError(res, 503, 'storage_unavailable');
      expect(res.text).not.toContain('disk full');
    } finally {
      spy.mockRestore();
    }
    expect(await exportCount(tenant)).toBe(0);
  });

  it('is 500 internal when the workflow cannot start, and the job fails rather than holding the slot', async () => {
    const t = await provisionTenant(app);
    const spy = jest.spyOn(app.deps.temporal!.workflow, 'start').mockRejectedValueOnce(new Error('temporal down'));
    try {
      expectError(await post(t, {}), 500, 'internal');
    } finally {
      spy.mockRestore();
    }
    const [row] = await withTenantSql(app.deps.db, t.tenantId, (sql) => sql.query<{ status: string; error: string }>(`SELECT status, error FROM recording_exports`));
    expect(row).toEqual({ status: 'failed', error: 'the export could not be started' });
    expect((await post(t, {})).status).toBe(202);
  });

  it('is tenant-management scope: a widget token is 403, even past the allowlist', async () => {
    const widget = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    expectError(await app.request('POST', '/v1/recording-exports', { token: widget.token, body: {} }), 403, 'forbidden');
    const direct = await widgetRouter(tenant, recordingExportRoutes(app.deps)).request('/v1/recording-exports/00000000-0000-4000-8000-000000000000');
    expect(direct.status).toBe(403);
  });
});

describe('GET /v1/recording-exports/{job_id}', () => {
  it('signs the archive URL afresh on every read; a tampered or expired URL is 403', async () => {
    const tenant = await provisionTenant(app);
    await seedRecording(app, tenant.tenantId, { phone: '+12125550301', startedAt: recent(3) });
    const res = await post(tenant, {});
    const done = await waitDone(tenant, res.body.export.job_id);
    const url = new URL(done.url);
    const sig = url.searchParams.get('sig')!;
    url.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
    expect((await download(url.toString())).status).toBe(403);
    const later = new URL(done.url);
    later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600));
    expect((await download(later.toString())).status).toBe(403);
    const key = `exports/${tenant.tenantId}/${done.job_id}.zip`;
    const expired = app.deps.fileSigner!.signedUrl(key, { expiresInSeconds: 5, downloadName: `recordings-export-${done.job_id}.zip` }, new Date(Date.now() - 60_000));
    expect((await download(expired.url)).status).toBe(403);
    expect((await download(done.url)).status).toBe(200);
  });

  it('is 404 for an unknown, a malformed and another tenant\'s job', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const res = await post(tenant, {});
    expectError(await getJob(other, res.body.export.job_id), 404, 'not_found');
    expectError(await getJob(tenant, randomUUID()), 404, 'not_found');
    expectError(await getJob(tenant, 'job-1'), 404, 'not_found');
    await waitDone(tenant, res.body.export.job_id);
  });
});
