import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withTenant } from '../../src/lib/tenancy';
import { checkInSeat, registerSeat, runWorker, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

/**
 * The invoice lines SPEC adds to the metered ones, each from the fact that bills it, reached the
 * way a tenant reaches it: a house DID the operator provisions (did_rent), a consumer calling it
 * through the switch simulator (inbound_minutes), the call's recording exported as WAV through the
 * export workflow (wav_surcharge).
 */
let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let spoolDir: string;
const taskQueue = `billing-lines-${randomUUID()}`;

beforeAll(async () => {
  spoolDir = mkdtempSync(path.join(os.tmpdir(), 'dd-billing-lines-spool-'));
  // The caller talks long enough for a recording of more than a second, well under a minute.
  rig = await startSwitchRig({ talkMs: 1500 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, SWITCH_RECORDINGS_DIR: spoolDir }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
  rmSync(spoolDir, { recursive: true, force: true });
});

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

let serial = Math.floor(Math.random() * 5000);
/** New York (one-party consent): no consent notice is due on these calls. */
const nextNumber = () => `+1212${String(6_000_000 + (serial++ % 3_999_999)).padStart(7, '0')}`;

type Line = { kind: string; description: string; quantity: number; unit: string; unit_price_usd: string | null; amount_usd: string };
const byKind = (res: HttpResult): Record<string, Line> => Object.fromEntries((res.body.line_items as Line[]).map((i) => [i.kind, i]));
const micros = (usd: string) => BigInt(usd.replace('.', '')) * 100n;

async function exportDone(t: ProvisionedTenant, body: Record<string, unknown>) {
  const res = await app.request('POST', '/v1/recording-exports', { token: t.apiKey, body });
  expect(res.status).toBe(202);
  const jobId = res.body.export.job_id as string;
  const done = await waitFor(
    async () => {
      const job = (await app.request('GET', `/v1/recording-exports/${jobId}`, { token: t.apiKey })).body.export;
      return job.status === 'done' || job.status === 'failed' ? job : undefined;
    },
    60_000,
    `export ${jobId}`,
  );
  expect(done).toMatchObject({ status: 'done', row_count: 1 });
  return jobId;
}

describe('invoice lines from real facts', () => {
  it('a house DID pays rent, its recorded inbound call bills an inbound minute, the WAV export a surcharge; JSON, CSV and invoice agree', async () => {
    const t = await provisionTenant(app);
    const seat = await checkInSeat(app, t);
    await registerSeat(app, rig, t, seat);
    const caller = nextNumber();
    const created = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: `lines-${randomUUID()}`, campaign_type: 'manual' } });
    await seedLeads(app, t, created.body.campaign.id, [caller]);

    const before = byKind(await app.request('GET', '/v1/billing/summary', { token: t.apiKey }));
    expect([before.did_rent, before.inbound_minutes, before.wav_surcharge].map((l) => l!.quantity)).toEqual([0, 0, 0]);

    // The operator provisions a house DID; the tenant routes it to its seat, recorded.
    const did = nextNumber();
    expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [did] } })).status).toBe(201);
    const route = await app.request('POST', '/v1/inbound-routes', { token: t.apiKey, body: { e164: did, dest_type: 'agent', dest_ref: seat.extension, recording: true } });
    expect(route.status).toBe(201);

    const uuid = rig.sim.inboundCall({ from: caller, to: did });
    await waitFor(
      () => withTenant(app.deps.db, t.tenantId, (tx) => tx.recording.findFirst({ where: { callUuid: uuid, storageKey: { not: null } } })).then((r) => r ?? undefined),
      30_000,
      'the inbound call recorded',
    );
    const exportBody = { from: new Date(Date.now() - 3_600_000).toISOString() };
    const jobId = await exportDone(t, exportBody);
    // An identical request inside the dedup window is the same job: delivered, and billed, once.
    const repeat = await app.request('POST', '/v1/recording-exports', { token: t.apiKey, body: exportBody });
    expect(repeat.body.export.job_id).toBe(jobId);

    const summary = await app.request('GET', '/v1/billing/summary', { token: t.apiKey });
    expect(summary.status).toBe(200);
    const lines = byKind(summary);
    expect(Object.keys(lines)).toEqual(['seats', 'voice_ai', 'house_minutes', 'inbound_minutes', 'did_rent', 'did_overage', 'did_overage_customer', 'sms', 'wav_surcharge']);
    expect(lines.did_rent).toEqual({ kind: 'did_rent', description: '1 house DIDs held in the period', quantity: 1, unit: 'did_month', unit_price_usd: '1.0000', amount_usd: '1.0000' });
    expect(lines.inbound_minutes).toMatchObject({ quantity: 1, unit_price_usd: '0.0100', amount_usd: '0.0100' });
    expect(lines.house_minutes).toMatchObject({ quantity: 0, amount_usd: '0.0000' });
    expect(lines.wav_surcharge).toEqual({
      kind: 'wav_surcharge',
      description: 'WAV files delivered by completed recording exports',
      quantity: 1,
      unit: 'wav_file',
      unit_price_usd: '0.0100',
      amount_usd: '0.0100',
    });
    // 3 floor seats at 99 + the rent + the inbound minute + the WAV file.
    expect(summary.body.subtotal_usd).toBe('298.0200');
    const sum = Object.values(lines).reduce((s, l) => s + micros(l.amount_usd), 0n);
    expect(sum).toBe(micros(summary.body.subtotal_usd));

    // The CSV lists the same lines, hashed.
    const csv = await app.request('GET', '/v1/billing/summary?format=csv', { token: t.apiKey });
    expect(csv.headers['x-artifact-sha256']).toBe(createHash('sha256').update(csv.text).digest('hex'));
    const rows = csv.text.split('\r\n');
    expect(rows).toContain('did_rent,1 house DIDs held in the period,1,did_month,1.0000,1.0000');
    expect(rows).toContain('inbound_minutes,"answered inbound minutes, per started minute",1,minute,0.0100,0.0100');
    expect(rows).toContain('wav_surcharge,WAV files delivered by completed recording exports,1,wav_file,0.0100,0.0100');
    expect(rows.slice(1, -1).map((r) => r.split(',')[0])).toEqual(Object.keys(lines));

    // The month's invoice bills the same three lines.
    const invoice = await app.request('GET', `/v1/billing/invoice?month=${new Date().toISOString().slice(0, 7)}`, { token: t.apiKey });
    expect(invoice.status).toBe(200);
    const billed = byKind(invoice);
    expect([billed.did_rent, billed.inbound_minutes, billed.wav_surcharge].map((l) => [l!.quantity, l!.amount_usd])).toEqual([
      [1, '1.0000'],
      [1, '0.0100'],
      [1, '0.0100'],
    ]);

    // Another tenant's summary holds none of it.
    const other = await provisionTenant(app);
    const theirs = byKind(await app.request('GET', '/v1/billing/summary', { token: other.apiKey }));
    expect([theirs.did_rent, theirs.inbound_minutes, theirs.wav_surcharge].map((l) => l!.quantity)).toEqual([0, 0, 0]);
    expectError(await app.request('GET', '/v1/billing/summary?format=wav', { token: t.apiKey }), 400, 'bad_request');
  });
});
